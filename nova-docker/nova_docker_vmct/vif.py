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
"""Interface plans: what plugging a port into a container means (pure logic).

An instance interface is a veth pair: the host end (``tap...``, Nova's device
name for the port) goes to the integration bridge, the peer is moved into the
container's network namespace, renamed ``eth<N>`` and given the port's MAC,
MTU, addresses and routes. The root work is done elsewhere with these plans:
the bridge side by os-vif, the veth pair and the container side by the
driver's typed privsep entrypoints (:mod:`nova_docker_vmct.network`,
:mod:`nova_docker_vmct.privsep.linux_net`). Nothing here runs a command.
"""

import dataclasses
import ipaddress
import re

# Linux interface names hold 15 characters; Nova uses 14 (tap + 11).
NIC_NAME_LEN = 14


@dataclasses.dataclass(frozen=True)
class Route:
    cidr: str
    gateway: str


@dataclasses.dataclass(frozen=True)
class VifPlan:
    """Everything needed to plug one Neutron port into a container."""

    port_id: str
    mac: str
    bridge: str
    host_dev: str
    peer_dev: str
    ifname: str
    mtu: int | None = None
    addresses: tuple = ()          # 'address/prefixlen'
    gateways: tuple = ()           # one per IP version, first interface only
    routes: tuple = ()             # extra subnet routes
    nameservers: tuple = ()
    # Neutron's iptables_hybrid firewall (ovs_hybrid_plug): the host end goes
    # to a Linux bridge of its own (qbr), joined to OVS by a veth pair
    # (qvb in the bridge, qvo on OVS), as libvirt's ports are plugged.
    hybrid: bool = False
    # The network_info entry the plan was made of (os-vif's VIF object is
    # made of it by Nova's own converter); not part of the plan's value.
    vif: object = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def qbr_dev(self):
        return hybrid_dev_name('qbr', self.port_id)

    @property
    def qvb_dev(self):
        return hybrid_dev_name('qvb', self.port_id)

    @property
    def ovs_dev(self):
        """The device on the OVS bridge: qvo for a hybrid plug, else the host end."""
        return hybrid_dev_name('qvo', self.port_id) if self.hybrid else self.host_dev

    @property
    def host_devs(self):
        """Every device of the port in the host netns that unplugging removes."""
        devs = (self.host_dev, self.peer_dev)
        return devs + (self.qvb_dev, self.qbr_dev) if self.hybrid else devs


def host_dev_name(port_id):
    """Host end name: tap + port id, as Nova names the tap of an OVS port.

    Derived here, not taken from the binding's devname: the privsep daemons
    accept only names of this shape (:data:`OWN_DEVICE_NAME`).
    """
    return ('tap' + port_id)[:NIC_NAME_LEN]


def hybrid_dev_name(prefix, port_id):
    """Nova's names of a hybrid plug's devices: qbr, qvb, qvo + port id."""
    return (prefix + port_id)[:NIC_NAME_LEN]


def peer_dev_name(port_id):
    """Temporary name of the container end while it is in the host netns."""
    return ('vns' + port_id)[:NIC_NAME_LEN]


def _subnets(vif):
    network = vif.get('network') or {}
    return network.get('subnets') or []


def plan(vif, index, default_bridge, with_gateway=True):
    """Build the VifPlan of a nova.network.model.VIF (or an equal dict).

    :param index: position of the VIF in network_info: eth<index>.
    :param with_gateway: add default routes (only the first interface that
        has a gateway for an IP version gets the default route).
    """
    port_id = vif['id']
    network = vif.get('network') or {}
    details = vif.get('details') or {}
    bridge = (network.get('bridge') or details.get('bridge_name') or
              default_bridge)
    meta = network.get('meta') or {}
    mtu = meta.get('mtu')
    addresses, gateways, routes, dns = [], [], [], []
    seen_versions = set()
    for subnet in _subnets(vif):
        cidr = subnet.get('cidr')
        if not cidr:
            continue
        net = ipaddress.ip_network(cidr, strict=False)
        for ip in subnet.get('ips') or []:
            addresses.append('%s/%d' % (ip['address'], net.prefixlen))
        gateway = (subnet.get('gateway') or {}).get('address')
        if gateway and with_gateway and net.version not in seen_versions:
            gateways.append(gateway)
            seen_versions.add(net.version)
        for route in subnet.get('routes') or []:
            gw = (route.get('gateway') or {}).get('address')
            if route.get('cidr') and gw:
                routes.append(Route(route['cidr'], gw))
        for server in subnet.get('dns') or []:
            if server.get('address') and server['address'] not in dns:
                dns.append(server['address'])
    return VifPlan(
        port_id=port_id,
        mac=vif['address'],
        bridge=bridge,
        host_dev=host_dev_name(port_id),
        peer_dev=peer_dev_name(port_id),
        ifname='eth%d' % index,
        mtu=int(mtu) if mtu else None,
        addresses=tuple(addresses),
        gateways=tuple(gateways),
        routes=tuple(routes),
        nameservers=tuple(dns),
        hybrid=bool(details.get('ovs_hybrid_plug')),
        vif=vif)


# What Neutron's binding may say for a port this driver can plug: a veth pair whose
# host end goes onto the bridge [docker] host_attach names. With host_attach ovs the
# port must be bound for OVS; linuxbridge (tests, setups without Neutron's agents)
# attaches whatever the port says to the Linux bridge it names.
SUPPORTED_VNIC_TYPES = ('normal',)
VIF_TYPES = {'ovs': ('ovs',), 'linuxbridge': None}


def unsupported(vif, host_attach):
    """Why the driver cannot plug ``vif`` as Neutron bound it; None when it can.

    A port bound for another plug (SR-IOV's direct or macvtap, vhost-user)
    would otherwise be plugged as a plain veth, silently without the device
    it was bound for. A hybrid plug (ovs_hybrid_plug) is plugged as one
    (:func:`hybrid_commands`).
    """
    port = vif.get('id')
    vnic_type = vif.get('vnic_type') or 'normal'
    if vnic_type not in SUPPORTED_VNIC_TYPES:
        return ('port %s has vnic_type %s: the Docker driver plugs a veth pair, '
                'only vnic_type %s' % (port, vnic_type, ', '.join(SUPPORTED_VNIC_TYPES)))
    vif_type = vif.get('type')
    wanted = VIF_TYPES[host_attach]
    if wanted is not None and vif_type not in wanted:
        return ('port %s has vif_type %s: with [docker] host_attach = %s the Docker '
                'driver plugs vif_type %s only' % (port, vif_type, host_attach,
                                                   ', '.join(wanted)))
    return None


def plans(network_info, default_bridge):
    """VifPlans of all VIFs; default routes from the first one per family."""
    result = []
    versions = set()
    for index, vif in enumerate(network_info or []):
        p = plan(vif, index, default_bridge)
        fams = {ipaddress.ip_address(g).version for g in p.gateways}
        keep = tuple(g for g in p.gateways
                     if ipaddress.ip_address(g).version not in versions)
        versions |= fams
        if keep != p.gateways:
            p = dataclasses.replace(p, gateways=keep)
        result.append(p)
    return result


# The names the driver gives the devices of a port in the host netns (Nova's
# for tap, qbr, qvb, qvo; vns for the container end until it moves): prefix
# and the first 11 characters of the Neutron port id. The privsep daemons
# touch no other device (privsep/arguments.py).
OWN_DEVICE_NAME = re.compile(r'(tap|vns|qbr|qvb|qvo)[0-9a-f-]{11}')
# The container end's name inside the container netns.
INSIDE_NAME = re.compile(r'eth[0-9]{1,2}')


def ipv4_addresses(p):
    """The port's IPv4 addresses (no prefix), which a gratuitous ARP names."""
    return tuple(str(ipaddress.ip_interface(a).ip) for a in p.addresses
                 if ipaddress.ip_interface(a).version == 4)


def garp_frame(mac, ipv4):
    """A gratuitous ARP: a request for the sender's own address, broadcast.

    Padded to the 60-byte Ethernet minimum. Neighbours (a router, the
    cloud's access namespace) may still hold the MAC of an earlier port that
    had the same address; a container answers at once, so a stale entry
    would make it look unreachable for the several seconds the neighbour
    needs to notice (a VM hides this behind its boot).
    """
    hw = bytes.fromhex(mac.replace(':', ''))
    ip = ipaddress.IPv4Address(ipv4).packed
    frame = (b'\xff' * 6 + hw + b'\x08\x06' +
             b'\x00\x01\x08\x00\x06\x04\x00\x01' +
             hw + ip + b'\x00' * 6 + ip)
    return frame.ljust(60, b'\x00')
