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
"""``vmct_netperf_peer``: one netserver instance per tenant for the netperf workloads."""

from rally.common import logging
from rally_openstack.task import context

from rally_vmct.task.contexts import helper_server
from rally_vmct.task.contexts import workload_image
from rally_vmct.workloads import guest_tools
from rally_vmct.workloads import netperf
from rally_vmct.workloads import runner

LOG = logging.getLogger(__name__)

KEY = "vmct_netperf_peer"
DEFAULT_DATA_PORT = 12866
# VMCT.boot_and_benchmark's netperf_peer values: this context's server, or no netperf.
PEER_INSTANCE = "instance"
PEER_NONE = "none"


@helper_server.kind_context
@context.configure(name=KEY, platform="openstack", order=520)
class NetperfPeer(context.OpenStackContext):
    """Boot one netserver instance per tenant, the peer of VMCT.boot_and_benchmark's netperf.

    For each tenant, the context boots one server of the given kind as the
    tenant's first user (with the keypair context's key, the allow_ssh
    context's security group and the network context's network, like the
    scenario), waits until SSH works, checks that netserver is installed and
    starts it on the fixed control port. The scenario (netperf_peer:
    "instance", its default when this context is present) then runs netperf
    against {host: the peer's fixed IP, control_port, data_port} from
    context["tenant"]["vmct_netperf_peer"]. Security groups must allow TCP
    (and for UDP_RR, UDP) to both ports: rally-openstack's allow_ssh context
    does. With the vmct_workload_image context for the same kind name, the
    peer boots that context's image. Cleanup deletes the servers and waits
    until they are gone. With the kind's floating_network the harness reaches
    the peer at a floating IP (released at cleanup) while netperf targets the
    peer's fixed address, so the path measured stays instance to instance on
    the tenant network.

    Config: kind ({name, image, flavor, availability_zone, scheduler_hints,
    ssh_user, ssh_port, ssh_key_file, floating_network}, as the scenario's kind), boot_args
    (extra server create arguments, e.g. {nics: [{net-id: ID}]}),
    proxy_command (OpenSSH ProxyCommand syntax with %h %p %r; default
    [vmct] ssh_proxy_command), ssh_user (overrides kind.ssh_user),
    control_port (12865), data_port (12866). An image with netserver:
    tools/images (tools/images/docker/README.md for the Docker kind).
    """

    CONFIG_SCHEMA = helper_server.config_schema(
        control_port={"type": "integer", "minimum": 1, "maximum": 65535},
        data_port={"type": "integer", "minimum": 1, "maximum": 65535})
    DEFAULT_CONFIG = {"control_port": netperf.DEFAULT_CONTROL_PORT,
                      "data_port": DEFAULT_DATA_PORT, "command_timeout": 60}

    # Tests put fake clients here: callable(user) -> osclients-like object.
    clients_factory = None

    def _clients(self, user):
        return self.clients_factory(user) if self.clients_factory else None

    def _start_peer(self, user, tenant_id):
        tenant = self.context["tenants"][tenant_id]
        kind = helper_server.resolve_kind(self.context, self.config["kind"], user)
        image_id = workload_image.image_for(self.context, kind)
        if image_id:
            kind["image_id"] = image_id
        server = helper_server.HelperServer(
            self.context, user, tenant, kind, boot_args=self.config.get("boot_args"),
            proxy_command=self.config.get("proxy_command"),
            ssh_user=self.config.get("ssh_user"), clients=self._clients(user))
        self._servers.append(server)
        timeout = self.config["command_timeout"]
        server.boot()
        if server.missing_tools(["netserver"], timeout, KEY):
            raise helper_server.HelperError(
                "vmct_netperf_peer: " + guest_tools.missing_message(
                    ["netserver"], "image %s of kind %r (peer %s)"
                    % (kind["image_id"], kind["name"], server.describe())))
        control_port = self.config["control_port"]
        runner.start_netserver(server.execute, control_port, timeout)
        server.disconnect()
        # netperf runs from the measured instance to the peer's own address on the tenant
        # network, also when the harness reaches the peer at a floating IP
        tenant[KEY] = {"host": server.fixed_address, "control_port": control_port,
                       "data_port": self.config["data_port"], "server_id": server.server_id,
                       "kind": kind["name"]}
        LOG.info("netperf peer of tenant %s: %s, netserver on port %d"
                 % (tenant_id, server.describe(), control_port))

    def setup(self):
        self._servers = []
        try:
            for user, tenant_id in helper_server.first_users(self.context):
                self._start_peer(user, tenant_id)
        except Exception as e:
            self._delete_servers()
            if isinstance(e, helper_server.HelperError):
                raise
            raise helper_server.HelperError(
                "vmct_netperf_peer: starting the netserver instance failed: %s: %s"
                % (type(e).__name__, e)) from e

    def _delete_servers(self):
        while getattr(self, "_servers", None):
            self._servers.pop().close()
        for tenant in (self.context.get("tenants") or {}).values():
            tenant.pop(KEY, None)

    def cleanup(self):
        self._delete_servers()
