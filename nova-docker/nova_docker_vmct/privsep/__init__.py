# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""The Docker driver's privileged context (oslo.privsep).

nova-compute runs as an unprivileged user (in the ``docker`` group for the
engine's socket). The root work of plugging a port (veth pairs, the
container's network namespace, the OVS bridge) runs in this context's
daemon, which Nova's root helper starts as it starts Nova's own contexts::

    sudo nova-rootwrap /etc/nova/rootwrap.conf privsep-helper \\
        --config-file ... --privsep_context nova_docker_vmct.privsep.vif_plug \\
        --privsep_sock_path ...

(etc/nova/rootwrap.d/docker.filters allows exactly that). Options:
``[nova_docker_vif_plug]`` (oslo.privsep's: helper_command, thread_pool_size,
logger_name, user, group, capabilities).
"""

from oslo_privsep import capabilities
from oslo_privsep import priv_context

# NET_ADMIN: links, addresses, routes, bridges. SYS_ADMIN and SYS_PTRACE:
# nsenter into a container's network namespace (setns, /proc/PID/ns/net of
# a process of another capability set). NET_RAW: the gratuitous ARP.
vif_plug = priv_context.PrivContext(
    'nova_docker_vmct',
    cfg_section='nova_docker_vif_plug',
    pypath=__name__ + '.vif_plug',
    capabilities=[capabilities.CAP_NET_ADMIN,
                  capabilities.CAP_SYS_ADMIN,
                  capabilities.CAP_SYS_PTRACE,
                  capabilities.CAP_NET_RAW],
)
