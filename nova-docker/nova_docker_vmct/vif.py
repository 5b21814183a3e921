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
"""Interface plans and the commands that plug them (pure logic, no I/O).

An instance interface is a veth pair: the host end (``tap...``, Nova's device
name for the port) goes to the integration bridge, the peer is moved into the
container's network namespace, renamed ``eth<N>`` and given the port's MAC,
MTU, addresses and routes. Every command is an argv list: nothing here is ever
joined into a shell command line.
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


def host_dev_name(port_id, devname=None):
    """Host end name: Nova's devname for the port, else tap + port id."""
    return (devname or ('tap' + port_id))[:NIC_NAME_LEN]


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
        host_dev=host_dev_name(port_id, vif.get('devname')),
        peer_dev=peer_dev_name(port_id),
        ifname='eth%d' % index,
        mtu=int(mtu) if mtu else None,
        addresses=tuple(addresses),
        gateways=tuple(gateways),
        routes=tuple(routes),
        nameservers=tuple(dns),
        hybrid=bool(details.get('ovs_hybrid_plug')))


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


def _mtu_args(p):
    return ['mtu', str(p.mtu)] if p.mtu else []


def veth_commands(p, netns_pid):
    """Create the veth pair in the host netns and move the peer away."""
    return [
        ['ip', 'link', 'add', p.host_dev] + _mtu_args(p) +
        ['type', 'veth', 'peer', 'name', p.peer_dev] + _mtu_args(p),
        ['ip', 'link', 'set', p.peer_dev, 'netns', str(int(netns_pid))],
        ['ip', 'link', 'set', p.host_dev, 'up'],
    ]


def host_veth_commands(p):
    """A veth pair left whole in the host netns, both ends up (no instance).

    For :class:`~nova_docker_vmct.floor.FloorDriver`: the host end is a port
    like an instance's, the peer only keeps its carrier up. The peer makes no
    IPv6 link-local address, so it sends nothing into the bridge.
    """
    return [
        ['ip', 'link', 'add', p.host_dev] + _mtu_args(p) +
        ['type', 'veth', 'peer', 'name', p.peer_dev] + _mtu_args(p),
        ['ip', 'link', 'set', p.peer_dev, 'addrgenmode', 'none'],
        ['ip', 'link', 'set', p.peer_dev, 'up'],
        ['ip', 'link', 'set', p.host_dev, 'up'],
    ]


def ovs_vsctl_prefix(db=None, timeout=120):
    cmd = ['ovs-vsctl', '--timeout=%d' % int(timeout)]
    if db:
        cmd.append('--db=%s' % db)
    return cmd


def ovs_attach_command(p, instance_uuid, db=None, timeout=120, keep=None):
    """Add the host end to the OVS bridge with Neutron's external ids.

    ``keep`` (:func:`parse_ovs_wiring` of the previous boot's port) re-adds
    the port with its VLAN tag and OpenFlow port number, so the Neutron
    agent's flows for it stay valid and the instance is reachable at once
    after a restart instead of once the agent has rewired the port.
    """
    keep = keep or {}
    cmd = ovs_vsctl_prefix(db, timeout) + [
        '--', '--if-exists', 'del-port', p.ovs_dev,
        '--', 'add-port', p.bridge, p.ovs_dev]
    if keep.get('tag') is not None:
        cmd.append('tag=%d' % keep['tag'])
    cmd += ['--', 'set', 'Interface', p.ovs_dev,
            'external_ids:iface-id=%s' % p.port_id,
            'external_ids:iface-status=active',
            'external_ids:attached-mac=%s' % p.mac,
            'external_ids:vm-uuid=%s' % instance_uuid]
    if keep.get('ofport') is not None:
        cmd.append('ofport_request=%d' % keep['ofport'])
    if p.mtu:
        cmd.append('mtu_request=%d' % p.mtu)
    return cmd


def ovs_wiring_command(p, db=None, timeout=120):
    """Read the VLAN tag and OpenFlow port number of an existing port."""
    return ovs_vsctl_prefix(db, timeout) + [
        '--', '--if-exists', 'get', 'Port', p.ovs_dev, 'tag',
        '--', '--if-exists', 'get', 'Interface', p.ovs_dev, 'ofport']


def parse_ovs_wiring(out):
    """{'tag': int|None, 'ofport': int|None} from ovs_wiring_command output.

    A missing port prints nothing, an untagged port ``[]``, a port whose
    device is gone ofport ``-1``: all of these are None.
    """
    lines = [line.strip() for line in (out or '').splitlines()]
    lines += [''] * (2 - len(lines))
    return {key: int(value) if value.isdigit() and int(value) > 0 else None
            for key, value in zip(('tag', 'ofport'), lines[:2])}


def ovs_detach_command(p, db=None, timeout=120):
    return ovs_vsctl_prefix(db, timeout) + [
        '--', '--if-exists', 'del-port', p.bridge, p.ovs_dev]


def hybrid_commands(p):
    """The Linux bridge of a hybrid plug, its veth pair to OVS, the host end in it.

    ``ip -batch`` input before :func:`ovs_attach_command` adds the qvo end.
    The bridge forwards at once (no STP, no forwarding delay) and has no
    IPv6 address of its own, as os-vif makes it.
    """
    qvo = p.ovs_dev
    return [
        ['ip', 'link', 'add', p.qbr_dev, 'type', 'bridge', 'forward_delay', '0',
         'stp_state', '0'],
        ['ip', 'link', 'set', p.qbr_dev, 'addrgenmode', 'none'],
        ['ip', 'link', 'set', p.qbr_dev, 'up'],
        ['ip', 'link', 'add', p.qvb_dev] + _mtu_args(p) +
        ['type', 'veth', 'peer', 'name', qvo] + _mtu_args(p),
        ['ip', 'link', 'set', p.qvb_dev, 'master', p.qbr_dev],
        ['ip', 'link', 'set', p.qvb_dev, 'up'],
        ['ip', 'link', 'set', qvo, 'up'],
        ['ip', 'link', 'set', p.host_dev, 'master', p.qbr_dev],
    ]


def linuxbridge_attach_command(p):
    return ['ip', 'link', 'set', p.host_dev, 'master', p.bridge]


def netns_prefix(netns_pid):
    """Run a command in the network namespace of process netns_pid."""
    return ['nsenter', '--net=/proc/%d/ns/net' % int(netns_pid), '--']


def container_commands(p, first=True):
    """Configure the peer inside the container netns (without the prefix)."""
    cmds = []
    if first:
        cmds.append(['ip', 'link', 'set', 'lo', 'up'])
    cmds.append(['ip', 'link', 'set', p.peer_dev, 'name', p.ifname])
    cmds.append(['ip', 'link', 'set', p.ifname, 'address', p.mac] +
                _mtu_args(p))
    for address in p.addresses:
        cmd = ['ip', 'addr', 'add', address, 'dev', p.ifname]
        if ipaddress.ip_interface(address).version == 6:
            cmd.append('nodad')  # no 1-2 s duplicate address detection wait
        cmds.append(cmd)
    cmds.append(['ip', 'link', 'set', p.ifname, 'up'])
    # The family follows from the gateway / prefix (no -4/-6: ip -batch
    # takes no global options per line).
    for gateway in p.gateways:
        cmds.append(['ip', 'route', 'replace', 'default', 'via', gateway,
                     'dev', p.ifname])
    for route in p.routes:
        cmds.append(['ip', 'route', 'replace', route.cidr, 'via',
                     route.gateway, 'dev', p.ifname])
    return cmds


def moved_in_commands(p, first=True):
    """:func:`container_commands` of a peer made by :func:`host_veth_commands`."""
    return ([['ip', 'link', 'set', p.peer_dev, 'addrgenmode', 'eui64']] +
            container_commands(p, first))


# Gratuitous ARP (an ARP request for the sender's own address, to broadcast),
# sent by a short Python run inside the container netns: argv = interface,
# MAC, IPv4 addresses. Padded to the 60-byte Ethernet minimum.
_GARP = (
    'import socket,sys\n'
    'dev=sys.argv[1]\n'
    'mac=bytes.fromhex(sys.argv[2].replace(":",""))\n'
    's=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n'
    's.bind((dev,0))\n'
    'for ip in sys.argv[3:]:\n'
    '    a=socket.inet_aton(ip)\n'
    '    s.send((b"\\xff"*6+mac+b"\\x08\\x06\\x00\\x01\\x08\\x00\\x06\\x04'
    '\\x00\\x01"+mac+a+b"\\x00"*6+a).ljust(60,b"\\x00"))\n')


def announce_command(p, python):
    """Gratuitous ARP for the port's IPv4 addresses (None without any).

    Neighbours (a router, the cloud's access namespace) may still hold the
    MAC of an earlier port that had the same address; a container answers
    at once, so a stale entry would make it look unreachable for the
    several seconds the neighbour needs to notice (a VM hides this behind
    its boot). Run inside the netns once the port is wired.
    """
    v4 = [str(ipaddress.ip_interface(a).ip) for a in p.addresses
          if ipaddress.ip_interface(a).version == 4]
    if not v4:
        return None
    return [python, '-c', _GARP, p.ifname, p.mac] + v4


# What the driver's privsep daemon runs as root (privsep/linux_net.py): iproute2
# and ovs-vsctl, either of them or the gratuitous ARP program inside a
# container's network namespace, nothing else.
PRIVILEGED_TOOLS = ('ip', 'ovs-vsctl')
_NETNS_OPTION = re.compile(r'--net=/proc/[1-9][0-9]*/ns/net')


def privileged_argv(cmd, python):
    """The argv the privsep daemon may run for cmd, else ValueError.

    cmd is one the builders here make: an ``ip`` or ``ovs-vsctl`` command,
    optionally behind :func:`netns_prefix`, or :func:`announce_command`
    behind it. The announce program runs with the daemon's own interpreter
    (``python``), whatever interpreter the caller named.
    """
    cmd = [str(word) for word in cmd or ()]
    inner = cmd
    if cmd[:1] == ['nsenter']:
        if len(cmd) < 4 or not _NETNS_OPTION.fullmatch(cmd[1]) or \
                cmd[2] != '--':
            raise ValueError('nsenter is only run as %s: %r'
                             % (' '.join(netns_prefix(1)), cmd))
        inner = cmd[3:]
        if inner[1:3] == ['-c', _GARP]:
            return cmd[:3] + [python] + inner[1:]
    if inner[:1] and inner[0] in PRIVILEGED_TOOLS:
        return cmd
    raise ValueError('not a command the Docker driver runs as root: %r'
                     % (cmd,))


def ip_batch(cmds):
    """stdin for ``ip -batch -`` running the given ``ip ...`` argv lists.

    One process instead of one per command. iproute2 splits batch lines on
    whitespace, so a word holding whitespace (never the case for names,
    addresses and numbers) is refused rather than quoted.
    """
    lines = []
    for cmd in cmds:
        if not cmd or cmd[0] != 'ip':
            raise ValueError('not an ip command: %r' % (cmd,))
        for word in cmd[1:]:
            if not word or any(ch.isspace() for ch in word) or \
                    word[0] in '"\'#':
                raise ValueError('word %r cannot go to ip -batch' % word)
        lines.append(' '.join(cmd[1:]))
    return '\n'.join(lines) + '\n'
