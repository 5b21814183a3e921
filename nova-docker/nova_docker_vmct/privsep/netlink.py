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
"""Links, addresses and routes over netlink (pyroute2), in this process.

The root side of the privsep entrypoints (:mod:`.linux_net`), called once
their arguments are checked. Nothing here executes a program: the daemon's
reduced capabilities are all the kernel ever sees. Work inside a container's
network namespace runs in a thread of its own that enters it (setns acts on
the calling thread only) and ends with the work, so no thread of the daemon
is ever left in a container's namespace.
"""

import ctypes
import errno
import os
import socket
import threading

import pyroute2

from nova_docker_vmct import vif

CLONE_NEWNET = 0x40000000
IFA_F_NODAD = 0x02          # no 1-2 s duplicate address detection wait
ADDR_GEN_MODE = {'eui64': 0, 'none': 1}
_libc = ctypes.CDLL(None, use_errno=True)


def _index(ipr, name):
    found = ipr.link_lookup(ifname=name)
    return found[0] if found else None


def _addr_gen_mode(ipr, index, mode):
    """``ip link set DEV addrgenmode MODE``: a link-local address or none."""
    ipr.link('set', index=index, IFLA_AF_SPEC={'attrs': [[
        'AF_INET6', {'attrs': [['IFLA_INET6_ADDR_GEN_MODE',
                                ADDR_GEN_MODE[mode]]]}]]})


def device_exists(name):
    with pyroute2.IPRoute() as ipr:
        return _index(ipr, name) is not None


def create_veth_pair(host_dev, peer_dev, mtu):
    """A veth pair in this netns, both ends up.

    The peer makes no IPv6 link-local address: it sends nothing into the
    bridge before it moves.
    """
    extra = {'mtu': mtu} if mtu else {}
    with pyroute2.IPRoute() as ipr:
        ipr.link('add', ifname=host_dev, kind='veth',
                 peer=dict(ifname=peer_dev, **extra), **extra)
        peer = _index(ipr, peer_dev)
        _addr_gen_mode(ipr, peer, 'none')
        ipr.link('set', index=peer, state='up')
        ipr.link('set', index=_index(ipr, host_dev), state='up')


def delete_device(name):
    """Delete a device of this netns; False when there was none."""
    with pyroute2.IPRoute() as ipr:
        index = _index(ipr, name)
        if index is None:
            return False
        try:
            ipr.link('del', index=index)
        except pyroute2.NetlinkError as e:
            # a veth goes with its peer's netns, which the kernel tears
            # down after the container is gone: found, then gone
            if e.code != errno.ENODEV:
                raise
            return False
        return True


def set_master(name, bridge):
    with pyroute2.IPRoute() as ipr:
        ipr.link('set', index=_index(ipr, name),
                 master=_index(ipr, bridge))


def move_to_netns(name, netns_fd):
    """Move a device of this netns into the namespace of ``netns_fd``."""
    with pyroute2.IPRoute() as ipr:
        ipr.link('set', index=_index(ipr, name), net_ns_fd=netns_fd)


def in_netns(netns_fd, work, *args):
    """``work(*args)`` in a thread that entered the namespace; its result.

    An exception of ``work`` is raised here. CAP_SYS_ADMIN: setns.
    """
    outcome = {}

    def run():
        try:
            if _libc.setns(netns_fd, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise OSError(err, 'setns: %s' % os.strerror(err))
            outcome['result'] = work(*args)
        except BaseException as e:      # handed to the caller's thread
            outcome['error'] = e
    thread = threading.Thread(target=run, name='netns-work')
    thread.start()
    thread.join()
    if 'error' in outcome:
        raise outcome['error']
    return outcome.get('result')


def configure(peer_dev, ifname, mac, mtu, interfaces, gateways, routes):
    """Make the moved peer the container's ``ifname`` (in its netns).

    Loopback up, the peer renamed, its MAC and MTU, an IPv6 link-local
    address again (the host netns gave it none), its addresses (IPv6 without
    duplicate address detection), up, then the default routes
    (``gateways``) and the subnets' extra routes ((network, gateway) pairs).
    """
    with pyroute2.IPRoute() as ipr:
        ipr.link('set', index=_index(ipr, 'lo'), state='up')
        index = _index(ipr, peer_dev)
        if index is None:
            raise ValueError('no device %s in the namespace' % peer_dev)
        ipr.link('set', index=index, ifname=ifname)
        settings = {'address': mac}
        if mtu:
            settings['mtu'] = mtu
        ipr.link('set', index=index, **settings)
        _addr_gen_mode(ipr, index, 'eui64')
        for iface in interfaces:
            ipr.addr('add', index=index, address=str(iface.ip),
                     prefixlen=iface.network.prefixlen,
                     **({'flags': IFA_F_NODAD} if iface.version == 6
                        else {}))
        ipr.link('set', index=index, state='up')
        for gateway in gateways:
            default = '0.0.0.0/0' if gateway.version == 4 else '::/0'
            _route(ipr, index, default, gateway)
        for network, gateway in routes:
            _route(ipr, index, str(network), gateway)


def _route(ipr, index, dst, gateway):
    family = socket.AF_INET if gateway.version == 4 else socket.AF_INET6
    ipr.route('replace', dst=dst, gateway=str(gateway), oif=index,
              family=family)


def announce(ifname, mac, ipv4_addresses):
    """One gratuitous ARP per address from ``ifname`` (CAP_NET_RAW)."""
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((ifname, 0))
        for address in ipv4_addresses:
            s.send(vif.garp_frame(mac, str(address)))


def effective_capabilities(status='/proc/self/status'):
    """The capability numbers this process holds (CapEff)."""
    with open(status) as f:
        for line in f:
            if line.startswith('CapEff:'):
                mask = int(line.split()[1], 16)
                return [bit for bit in range(64) if mask >> bit & 1]
    return []
