"""The driver's privsep daemons for real: typed entrypoints, checked in the daemon.

Every entrypoint is tried against the real daemons (forked from this root process with
their context's capabilities) with the arguments an attacker who reaches a daemon's socket
would try: another device, another namespace, a namespace by PID or symlink, the host's own
namespace, words that an argv-taking daemon ran (``ip netns exec``, ``ip -batch``,
``ovs-vsctl set-manager``). Each is refused by the daemon, and the host's links, bridges,
OVS and the container's namespace are the same afterwards. The accepted path plugs a real
container. The daemons started through Nova's root helper as the compute's user, their uid
and capabilities, are checked in the all-in-one cloud (tests/e2e/test_privilege.py).
"""

import os
import uuid

import fixtures
import testtools

from nova_docker_vmct import container
from nova_docker_vmct import privsep
from nova_docker_vmct.privsep import linux_net

from tests.functional import base
from tests.unit import test_privsep as unit_privsep


def link(name):
    """``ip -o link show`` of one device of the host netns, None if none."""
    r = base.run('ip', '-o', 'link', 'show', 'dev', name, check=False)
    return r.stdout if r.returncode == 0 else None


def links_in(netns):
    return base.run('nsenter', '--net=' + netns, 'ip', '-o', 'addr',
                    'show').stdout


def named(args):
    """The device names among a call's arguments (and in lists of them)."""
    words = []
    for arg in args:
        words += arg if isinstance(arg, list) else [arg]
    return {w for w in words if isinstance(w, str) and '/' not in w and
            0 < len(w) <= 15 and w.isprintable() and ' ' not in w}


class TestDaemons(testtools.TestCase):

    def setUp(self):
        super().setUp()
        base.start_privsep_daemon()

    def test_each_daemon_holds_exactly_its_capabilities(self):
        self.assertEqual(sorted(privsep.VIF_PLUG_CAPABILITIES),
                         list(linux_net.vif_plug_capabilities()))
        self.assertEqual(sorted(privsep.NETNS_PLUG_CAPABILITIES),
                         list(linux_net.netns_plug_capabilities()))

    def test_the_old_argv_entrypoint_is_gone(self):
        self.assertFalse(hasattr(linux_net, 'run_plug_command'))
        self.assertEqual(set(unit_privsep.entrypoints()),
                         {name for name in vars(linux_net)
                          if getattr(getattr(linux_net, name),
                                     unit_privsep.ENTRYPOINT_ATTR, None)})


class ContainerTestCase(testtools.TestCase):
    """A real container (network none) and its netns, a port's names."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.Timeout(120, gentle=True))
        base.start_privsep_daemon()
        self.docker = base.docker.from_env(timeout=60)
        self.addCleanup(self.docker.close)
        base.ensure_image_tar()
        name = 'vmct-privsep-' + uuid.uuid4().hex[:8]
        c = self.docker.containers.run(
            base.IMAGE, ['sleep', '300'], name=name, network_mode='none',
            sysctls=container.IPV6_ON, detach=True)
        self.addCleanup(c.remove, force=True)
        c.reload()
        self.netns = c.attrs['NetworkSettings']['SandboxKey']
        self.pid = c.attrs['State']['Pid']
        port = str(uuid.uuid4())
        self.tap, self.peer = ('tap' + port)[:14], ('vns' + port)[:14]
        self.addCleanup(base.run, 'ip', 'link', 'del', self.tap, check=False)

    def refused(self, func, *args):
        """func(*args) refused by the daemon, nothing changed.

        Nothing: the devices it names and the port's (other tests change
        other devices of the host meanwhile), the container's netns.
        """
        watched = sorted(named(args) | {self.tap, self.peer, 'lo'})
        before = [link(n) for n in watched]
        inside = links_in(self.netns)
        e = self.assertRaises(ValueError, func, *args)
        self.assertIn('refused', str(e))
        self.assertEqual(before, [link(n) for n in watched])
        self.assertEqual(inside, links_in(self.netns))
        return str(e)


class TestRefusals(ContainerTestCase):

    def test_devices_not_of_the_drivers_naming(self):
        for dev in ('eth0', 'lo', 'br-int', 'docker0', 'ovs-system',
                    'tap0123456789ab', '../tap012345', 'netns exec x',
                    '-batch'):
            self.refused(linux_net.create_veth_pair, dev, self.peer, 1400)
            self.refused(linux_net.delete_device, dev)
            self.refused(linux_net.move_to_netns, dev, self.netns)
            self.refused(linux_net.add_to_bridge, dev, 'br-int')

    def test_namespaces_other_than_a_containers(self):
        linux_net.create_veth_pair(self.tap, self.peer, 1400)
        for path in ('/proc/%d/ns/net' % self.pid, '/proc/1/ns/net',
                     '/proc/self/ns/net', '1234', '/run/netns/vmct',
                     '/run/docker/netns/default',
                     '/run/docker/netns/../netns/default',
                     self.netns + '/..', self.netns.upper(),
                     '/etc/shadow', '/etc/passwd'):
            self.refused(linux_net.move_to_netns, self.peer, path)
            self.refused(linux_net.announce, path, 'eth0',
                         'fa:16:3e:00:00:01', ['198.51.100.9'])

    def test_a_symlink_in_dockers_folder(self):
        link = '/run/docker/netns/%012x' % uuid.uuid4().int
        link = link[:len('/run/docker/netns/') + 12]
        os.symlink('/proc/self/ns/net', link)
        self.addCleanup(os.unlink, link)
        linux_net.create_veth_pair(self.tap, self.peer, 1400)
        self.assertIn('symlink', self.refused(linux_net.move_to_netns,
                                              self.peer, link))

    def test_the_hosts_own_namespace_bound_into_dockers_folder(self):
        path = '/run/docker/netns/' + uuid.uuid4().hex[:12]
        open(path, 'w').close()
        self.addCleanup(os.unlink, path)
        base.run('mount', '--bind', '/proc/self/ns/net', path)
        self.addCleanup(base.run, 'umount', path, check=False)
        linux_net.create_veth_pair(self.tap, self.peer, 1400)
        self.assertIn("host's own", self.refused(linux_net.move_to_netns,
                                                 self.peer, path))

    def test_a_bridge_that_is_none(self):
        linux_net.create_veth_pair(self.tap, self.peer, 1400)
        for bridge in ('eth0', 'lo', 'no-such-br', 'br;id', '../x'):
            self.refused(linux_net.add_to_bridge, self.tap, bridge)

    def test_values_a_shell_or_ip_batch_would_read(self):
        linux_net.create_veth_pair(self.tap, self.peer, 1400)
        linux_net.move_to_netns(self.peer, self.netns)
        bad = [
            ('ifname', 'eth0\nlink set lo down'), ('ifname', '$(id)'),
            ('mac', 'fa:16:3e:00:00:01 netns 1'), ('mac', 'ff:ff:ff:ff:ff:ff'),
            ('mtu', '1400; id'), ('mtu', 9999999),
            ('addresses', ['10.0.0.5/24 dev lo']), ('addresses', '10.0.0.5/24'),
            ('gateways', ['10.0.0.1 dev lo']),
            ('routes', [['0.0.0.0/0', '10.0.0.1', 'dev', 'lo']]),
        ]
        good = dict(netns=self.netns, peer_dev=self.peer, ifname='eth0',
                    mac='fa:16:3e:00:00:01', mtu=1400,
                    addresses=['198.51.100.9/24'], gateways=[], routes=[])
        for key, value in bad:
            args = dict(good, **{key: value})
            self.refused(linux_net.configure_in_netns, *args.values())

    def test_every_entrypoint_was_tried(self):
        tried = {'create_veth_pair', 'delete_device', 'move_to_netns',
                 'add_to_bridge', 'announce', 'configure_in_netns'}
        reporting = {'vif_plug_capabilities', 'netns_plug_capabilities'}
        self.assertEqual(tried | reporting,
                         set(unit_privsep.entrypoints()))


class TestAccepted(ContainerTestCase):

    def test_a_port_plugged_into_a_real_container(self):
        linux_net.create_veth_pair(self.tap, self.peer, 1400)
        linux_net.move_to_netns(self.peer, self.netns)
        linux_net.configure_in_netns(
            self.netns, self.peer, 'eth0', 'fa:16:3e:00:00:42', 1400,
            ['198.51.100.42/24', 'fd00::42/64'], ['198.51.100.1'],
            [['203.0.113.0/24', '198.51.100.254']])
        linux_net.announce(self.netns, 'eth0', 'fa:16:3e:00:00:42',
                           ['198.51.100.42'])
        inside = base.run('nsenter', '--net=' + self.netns, 'ip', '-o',
                          'addr', 'show', 'eth0').stdout
        self.assertIn('198.51.100.42/24', inside)
        self.assertIn('fd00::42/64', inside)
        routes = base.run('nsenter', '--net=' + self.netns, 'ip', 'route',
                          'show').stdout
        self.assertIn('default via 198.51.100.1 dev eth0', routes)
        self.assertIn('203.0.113.0/24 via 198.51.100.254 dev eth0', routes)
        # no daemon thread stayed in the container's namespace: the daemon's
        # next host-side call still sees the host's devices
        self.assertTrue(linux_net.delete_device(self.tap))
        self.assertIsNone(link(self.tap))
