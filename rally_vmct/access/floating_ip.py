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
"""A server's floating IP (Neutron): create it on the server's port, release it.

rally-openstack's ``VMTasks`` (``floating_network``) create a floating IP and
then associate it with the server's fixed address; here one request does both
(``create_floatingip`` with the port found by the server's ``device_id``), so the
session's ``vmct.associate_floating_ip`` phase is that request. The floating IP's
description is the server's name, which has Rally's resource name format, so
``cleanup@openstack`` (neutron) finds one a killed run left behind.

Neutron's refusals become :class:`FloatingIPError` naming ``kind.floating_network``
and the fix: no free address, no router to the external network, the quota.
"""

from rally_vmct.timing import waiter

ARGUMENT = "kind.floating_network"


class FloatingIPError(RuntimeError):
    """No floating IP for a server (the message names the network and the fix)."""


def server_port(neutron, server_id):
    """``(port id, fixed IPv4 address)`` of the server's first port with an IPv4 address."""
    ports = neutron.list_ports(device_id=server_id)["ports"]
    for port in ports:
        for fixed in port.get("fixed_ips") or []:
            if ":" not in fixed.get("ip_address", ":"):
                return port["id"], fixed["ip_address"]
    raise FloatingIPError("%s: server %s has no port with an IPv4 address (%d ports) to put "
                          "a floating IP on: boot it on a network with an IPv4 subnet"
                          % (ARGUMENT, server_id, len(ports)))


def create(neutron, network_id, network, server_id, description):
    """Neutron's floating IP record, created on the server's port in ``network_id``.

    :param network: the network as the task names it (for messages)
    :param description: the floating IP's description (the server's name)
    """
    port_id, fixed = server_port(neutron, server_id)
    body = {"floatingip": {"floating_network_id": network_id, "port_id": port_id,
                           "fixed_ip_address": fixed, "description": description}}
    try:
        return neutron.create_floatingip(body)["floatingip"]
    except Exception as e:
        raise FloatingIPError(explain(e, network, server_id)) from e


def explain(error, network, server_id):
    """What a refused floating IP create means, naming the network and the fix."""
    name, text = type(error).__name__, str(error)
    head = "%s %r: no floating IP for server %s" % (ARGUMENT, network, server_id)
    if ("Exhausted" in name or "IpAddressGenerationFailure" in name
            or "No more IP addresses" in text or "Unable to find any IP address" in text):
        return ("%s: the network has no free address left (%s): release unused floating "
                "IPs (openstack floating ip list --network %s; delete those with no port) or "
                "ask the cloud's operator for a larger allocation pool" % (head, text, network))
    if "ExternalGatewayForFloatingIP" in name or "is not reachable from" in text:
        return ("%s: the server's network has no router with its gateway on %r (%s): add "
                "one (openstack router set --external-gateway %s ROUTER), or use Rally's "
                "'network' context, whose router gets a gateway on the external network"
                % (head, network, text, network))
    if "OverQuota" in name or "Quota exceeded" in text:
        return ("%s: the project's floating IP quota is used up (%s): raise it (the 'quotas' "
                "context: {neutron: {floatingip: -1}}) or release unused floating IPs"
                % (head, text))
    return "%s: %s: %s" % (head, name, text)


def release(neutron, floating_ip_id):
    """Delete a floating IP; one already gone is fine (other errors raise)."""
    try:
        neutron.delete_floatingip(floating_ip_id)
    except Exception as e:
        if not waiter.is_not_found(e):
            raise
