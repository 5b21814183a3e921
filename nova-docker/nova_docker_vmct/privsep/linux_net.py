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
"""The driver's privsep entrypoints: few, typed, their arguments checked.

Each runs in a daemon of :mod:`nova_docker_vmct.privsep`, checks every
argument there (:mod:`.arguments`: devices of the driver's own naming,
network namespaces by path under /run/docker/netns) and does its work over
netlink (:mod:`.netlink`). None takes a command line; none executes a
program. The capabilities each needs:

=====================  ==================  ===============================
entrypoint             daemon              capabilities
=====================  ==================  ===============================
create_veth_pair       vif_plug            CAP_NET_ADMIN
delete_device          vif_plug            CAP_NET_ADMIN
add_to_bridge          vif_plug            CAP_NET_ADMIN
move_to_netns          vif_plug            CAP_NET_ADMIN
vif_plug_capabilities  vif_plug            none (reads its own status)
configure_in_netns     netns_plug          CAP_SYS_ADMIN (setns),
                                           CAP_NET_ADMIN
announce               netns_plug          CAP_SYS_ADMIN (setns),
                                           CAP_NET_RAW
netns_plug_capabilities  netns_plug        none (reads its own status)
=====================  ==================  ===============================
"""

from nova_docker_vmct import privsep
from nova_docker_vmct.privsep import arguments as check
from nova_docker_vmct.privsep import netlink


@privsep.vif_plug.entrypoint
def create_veth_pair(host_dev: str, peer_dev: str, mtu: int | None) -> None:
    """A veth pair in the host netns: ``host_dev`` <-> ``peer_dev``, up."""
    netlink.create_veth_pair(check.own_device('host_dev', host_dev),
                             check.own_device('peer_dev', peer_dev),
                             check.mtu('mtu', mtu))


@privsep.vif_plug.entrypoint
def delete_device(dev: str) -> bool:
    """Delete one of the driver's devices; False when it did not exist."""
    return netlink.delete_device(check.own_device('dev', dev))


@privsep.vif_plug.entrypoint
def add_to_bridge(dev: str, bridge: str) -> None:
    """Enslave one of the driver's devices to an existing Linux bridge.

    The bridge of a hybrid plug (qbr, os-vif made it) or the one a port
    names with ``[docker] host_attach = linuxbridge``.
    """
    netlink.set_master(check.own_device('dev', dev),
                       check.bridge('bridge', bridge))


@privsep.vif_plug.entrypoint
def move_to_netns(dev: str, netns: str) -> None:
    """Move one of the driver's devices into a container's netns."""
    dev = check.own_device('dev', dev)
    with check.open_netns(netns) as fd:
        netlink.move_to_netns(dev, fd)


@privsep.netns_plug.entrypoint
def configure_in_netns(netns: str, peer_dev: str, ifname: str, mac: str,
                       mtu: int | None, addresses: list[str],
                       gateways: list[str],
                       routes: list[tuple[str, str]]) -> None:
    """Make the moved ``peer_dev`` the container's interface ``ifname``.

    ``addresses``: 'address/prefixlen'; ``gateways``: default routes;
    ``routes``: (cidr, gateway) pairs.
    """
    args = (check.own_device('peer_dev', peer_dev),
            check.inside_name('ifname', ifname), check.mac('mac', mac),
            check.mtu('mtu', mtu), check.interfaces('addresses', addresses),
            check.addresses('gateways', gateways),
            check.routes('routes', routes))
    with check.open_netns(netns) as fd:
        netlink.in_netns(fd, netlink.configure, *args)


@privsep.netns_plug.entrypoint
def announce(netns: str, ifname: str, mac: str,
             ipv4_addresses: list[str]) -> None:
    """A gratuitous ARP for each address from ``ifname`` in the netns."""
    args = (check.inside_name('ifname', ifname), check.mac('mac', mac),
            check.addresses('ipv4_addresses', ipv4_addresses, version=4))
    with check.open_netns(netns) as fd:
        netlink.in_netns(fd, netlink.announce, *args)


@privsep.vif_plug.entrypoint
def vif_plug_capabilities() -> list[int]:
    """The capabilities the vif_plug daemon holds (starts it)."""
    return netlink.effective_capabilities()


@privsep.netns_plug.entrypoint
def netns_plug_capabilities() -> list[int]:
    """The capabilities the netns_plug daemon holds (starts it)."""
    return netlink.effective_capabilities()
