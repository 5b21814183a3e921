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
"""The Docker driver's privileged contexts (oslo.privsep).

nova-compute may run as a user other than root (``nova``), but that user is
in the ``docker`` group: the engine's socket lets it start a privileged
container with the host's root file system, so it is root-equivalent, and
nothing here changes that. What these contexts narrow is what the privsep
daemons do for whoever reaches their sockets: a few typed entrypoints
(:mod:`nova_docker_vmct.privsep.linux_net`) whose arguments are checked in
the daemon (device names of the driver's own naming, network namespaces by
path under ``/run/docker/netns``), done over netlink in the daemon's own
process, which never executes a program (a program exec'd by a root process
would get every capability back).

Two daemons, each with only the capabilities its entrypoints need:

* ``vif_plug`` (CAP_NET_ADMIN): the veth pair in the host netns, a device
  into a bridge, a device moved into a container's netns, a device deleted.
* ``netns_plug`` (CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW): work inside a
  container's netns (addresses, routes, the gratuitous ARP). Entering a
  network namespace (setns) takes CAP_SYS_ADMIN; CAP_SYS_ADMIN is broad, so
  nothing that can be done from outside the namespace runs here.

Nova's root helper starts them as it starts Nova's own contexts::

    sudo nova-rootwrap /etc/nova/rootwrap.conf privsep-helper \\
        --config-file ... --privsep_context nova_docker_vmct.privsep.vif_plug \\
        --privsep_sock_path ...

(etc/nova/rootwrap.d/docker.filters allows exactly that, for both contexts
and os-vif's). Options: ``[nova_docker_vif_plug]`` and
``[nova_docker_netns_plug]`` (oslo.privsep's: helper_command,
thread_pool_size, logger_name, user, group, capabilities). The OVS side of
a port is os-vif's (``vif_plug_ovs.privsep.vif_plug``, CAP_NET_ADMIN, for
the hybrid plug's bridge) and OVSDB's, reached from nova-compute itself.
"""

from oslo_privsep import capabilities
from oslo_privsep import priv_context

VIF_PLUG_CAPABILITIES = (capabilities.CAP_NET_ADMIN,)
NETNS_PLUG_CAPABILITIES = (capabilities.CAP_SYS_ADMIN,
                           capabilities.CAP_NET_ADMIN,
                           capabilities.CAP_NET_RAW)

vif_plug = priv_context.PrivContext(
    'nova_docker_vmct',
    cfg_section='nova_docker_vif_plug',
    pypath=__name__ + '.vif_plug',
    capabilities=list(VIF_PLUG_CAPABILITIES),
)

netns_plug = priv_context.PrivContext(
    'nova_docker_vmct',
    cfg_section='nova_docker_netns_plug',
    pypath=__name__ + '.netns_plug',
    capabilities=list(NETNS_PLUG_CAPABILITIES),
)

CONTEXTS = (vif_plug, netns_plug)
