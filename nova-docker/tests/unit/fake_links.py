"""The driver's privsep entrypoints, os-vif and the OVS wiring, recorded.

Devices are tracked as the kernel keeps them: a veth pair goes with either
end, a device moved into a netns leaves the host netns. Every call lands in
one ordered list, ``calls``: (name, args...).
"""


class FakeLinks(object):
    """Stands in for nova_docker_vmct.privsep.linux_net."""

    def __init__(self):
        self.calls = []
        self.devices = set()
        self.pairs = {}
        self.fail = {}          # entrypoint name -> exception to raise

    def _call(self, name, *args):
        self.calls.append((name,) + args)
        if name in self.fail:
            raise self.fail[name]

    def exists(self, dev):
        return dev in self.devices

    def create_veth_pair(self, host_dev, peer_dev, mtu):
        self._call('create_veth_pair', host_dev, peer_dev, mtu)
        self.devices |= {host_dev, peer_dev}
        self.pairs.update({host_dev: peer_dev, peer_dev: host_dev})

    def delete_device(self, dev):
        self._call('delete_device', dev)
        existed = dev in self.devices
        self.devices -= {dev, self.pairs.get(dev)}
        return existed

    def add_to_bridge(self, dev, bridge):
        self._call('add_to_bridge', dev, bridge)

    def move_to_netns(self, dev, netns):
        self._call('move_to_netns', dev, netns)
        self.devices.discard(dev)

    def configure_in_netns(self, netns, peer_dev, ifname, mac, mtu,
                           addresses, gateways, routes):
        self._call('configure_in_netns', netns, peer_dev, ifname, mac, mtu,
                   addresses, gateways, routes)

    def announce(self, netns, ifname, mac, ipv4_addresses):
        self._call('announce', netns, ifname, mac, ipv4_addresses)

    def vif_plug_capabilities(self):
        self._call('vif_plug_capabilities')
        return [12]

    def netns_plug_capabilities(self):
        self._call('netns_plug_capabilities')
        return [12, 13, 21]

    def names(self):
        return [c[0] for c in self.calls]


class FakeOsVif(object):
    """Stands in for network.OsVif: plug/unplug of a plan, recorded."""

    def __init__(self, links):
        self.links = links

    def plug(self, p, instance):
        self.links._call('os_vif.plug', p.ovs_dev, instance.uuid)

    def unplug(self, p, instance):
        self.links._call('os_vif.unplug', p.ovs_dev, instance.uuid)


class FakeWiring(object):
    """Stands in for ovs.Wiring: ``ports`` dev -> {'tag', 'ofport'}."""

    def __init__(self, links):
        self.links = links
        self.ports = {}

    def check(self):
        self.links._call('ovsdb.check')

    def close(self):
        self.links._call('ovsdb.close')

    def get(self, dev):
        self.links._call('ovsdb.get', dev)
        return dict(self.ports.get(dev, {}))

    def create(self, bridge, dev, tag=None, ofport=None):
        self.links._call('ovsdb.create', bridge, dev, tag, ofport)


def plugger(conf, links=None):
    """A network.Plugger wired to the fakes; (plugger, links, wiring)."""
    from nova_docker_vmct import network
    links = links or FakeLinks()
    wiring = FakeWiring(links)
    return (network.Plugger(conf, links=links,
                            os_vif=lambda: FakeOsVif(links),
                            wiring=lambda: wiring, exists=links.exists),
            links, wiring)
