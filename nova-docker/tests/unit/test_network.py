from unittest import mock

import testtools

from nova import exception

from nova_docker_vmct import network
from nova_docker_vmct import vif as vif_plan

from tests import helpers


class Conf(object):
    host_attach = 'ovs'
    ovsdb_connection = None
    ovs_vsctl_timeout = 120


class TestPlugger(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.ran = []
        self.devices = set()
        self.conf = Conf()
        self.plugger = network.Plugger(self.conf, run=self._run,
                                       exists=self.devices.__contains__)
        self.plans = vif_plan.plans([
            helpers.vif(port_id='port-a', address='10.0.0.5'),
            helpers.vif(port_id='port-b', address='10.1.0.5',
                        cidr='10.1.0.0/24', gateway=None)], 'br-int')

    def _run(self, cmd, check=True, stdin=None):
        if stdin is not None:
            # expand ip -batch input back into argv lists
            prefix = cmd[:cmd.index('-batch') - 1]
            for line in stdin.splitlines():
                self._run(prefix + ['ip'] + line.split(), check)
            return ''
        self.ran.append(cmd)
        if cmd[:3] == ['ip', 'link', 'add']:
            self.devices.add(cmd[3])
        if cmd[:3] == ['ip', 'link', 'del']:
            self.devices.discard(cmd[3])
        return ''

    def test_plug_ovs_order(self):
        self.plugger.plug(self.plans, 4242, 'inst')
        first = self.ran[:5]
        self.assertEqual('add', first[0][2])
        self.assertEqual(['ip', 'link', 'set', 'vnsport-a', 'netns', '4242'],
                         first[1])
        self.assertEqual(['ip', 'link', 'set', 'tapport-a', 'up'], first[2])
        # the stale port's wiring read, its detach in its own transaction,
        # then attach
        first = self.ran[:6]
        self.assertEqual('get', first[3][4])
        self.assertEqual('del-port', first[4][4])
        self.assertNotIn('add-port', first[4])
        self.assertIn('add-port', first[5])
        in_ns = [c for c in self.ran if c[0] == 'nsenter']
        self.assertTrue(all(c[:3] == ['nsenter', '--net=/proc/4242/ns/net',
                                      '--'] for c in in_ns))
        self.assertEqual(1, sum(1 for c in in_ns
                                if c[3:] == ['ip', 'link', 'set', 'lo',
                                             'up']))
        self.assertIn(['nsenter', '--net=/proc/4242/ns/net', '--', 'ip',
                       'link', 'set', 'vnsport-b', 'name', 'eth1'], in_ns)
        self.assertTrue(self.plugger.is_plugged(self.plans))

    def test_replug_keeps_tag_and_ofport(self):
        def run(cmd, check=True, stdin=None):
            if 'get' in cmd:
                self.ran.append(cmd)
                return '7\n93\n'
            return self._run(cmd, check, stdin)
        self.plugger._run = run
        self.plugger.plug(self.plans[:1], 4242, 'inst')
        attach = [c for c in self.ran if 'add-port' in c][0]
        self.assertIn('tag=7', attach)
        self.assertIn('ofport_request=93', attach)

    def test_unreadable_wiring_is_a_fresh_port(self):
        def run(cmd, check=True, stdin=None):
            if 'get' in cmd:
                raise OSError('ovs-vsctl: no')
            return self._run(cmd, check, stdin)
        self.plugger._run = run
        self.plugger.plug(self.plans[:1], 4242, 'inst')
        attach = [c for c in self.ran if 'add-port' in c][0]
        self.assertFalse([w for w in attach
                          if w.startswith(('tag=', 'ofport_request='))])

    def test_plug_linuxbridge(self):
        self.conf.host_attach = 'linuxbridge'
        self.plugger.plug(self.plans[:1], 1, 'inst')
        self.assertIn(['ip', 'link', 'set', 'tapport-a', 'master', 'br-int'],
                      self.ran)
        self.assertFalse(any(c[0] == 'ovs-vsctl' for c in self.ran))

    def test_plug_removes_leftover_devices_first(self):
        self.devices.update({'tapport-a', 'vnsport-a'})
        self.plugger.plug(self.plans[:1], 1, 'inst')
        self.assertEqual(['ip', 'link', 'del', 'tapport-a'], self.ran[0])
        self.assertEqual(['ip', 'link', 'del', 'vnsport-a'], self.ran[1])

    def test_two_ip_processes_per_port(self):
        calls = []
        self.plugger._run = lambda cmd, check=True, stdin=None: calls.append(
            (cmd, stdin))
        self.conf.host_attach = 'linuxbridge'
        self.plugger.plug(self.plans[:1], 7, 'inst')
        self.assertEqual(['ip', '-batch', '-'], calls[0][0])
        self.assertIn('link add tapport-a', calls[0][1])
        self.assertEqual(['ip', 'link', 'set', 'tapport-a', 'master',
                          'br-int'], calls[1][0])
        self.assertEqual(['nsenter', '--net=/proc/7/ns/net', '--', 'ip',
                          '-batch', '-'], calls[2][0])
        self.assertIn('link set vnsport-a name eth0\n', calls[2][1])
        self.assertEqual(3, len(calls))

    def test_failed_plug_deletes_the_veth(self):
        def run(cmd, check=True, stdin=None):
            self._run(cmd, check, stdin)
            if cmd[0] == 'nsenter':
                raise RuntimeError('no such process')
        self.plugger._run = run
        self.assertRaises(RuntimeError, self.plugger.plug, self.plans, 1, 'i')
        self.assertEqual(['ip', 'link', 'del', 'tapport-a'], self.ran[-1])
        self.assertNotIn('tapport-a', self.devices)

    def test_announce_runs_in_the_netns_and_never_fails(self):
        self.plugger.announce(self.plans, 4242)
        self.assertEqual(2, len(self.ran))
        for cmd, ip in zip(self.ran, ('10.0.0.5', '10.1.0.5')):
            self.assertEqual(['nsenter', '--net=/proc/4242/ns/net', '--'],
                             cmd[:3])
            self.assertEqual('-c', cmd[4])
            self.assertEqual(ip, cmd[-1])

        def broken(cmd, check=True, stdin=None):
            raise OSError('no python')
        self.plugger._run = broken
        self.plugger.announce(self.plans, 4242)   # logged, not raised

    def hybrid_plans(self):
        vif = helpers.vif(port_id='port-h', address='10.0.0.9')
        vif['details']['ovs_hybrid_plug'] = True
        return vif_plan.plans([vif], 'br-int')

    def test_hybrid_plug_bridges_the_tap_then_adds_qvo_to_ovs(self):
        plans = self.hybrid_plans()
        self.plugger.plug(plans, 4242, 'inst')
        self.assertIn(['ip', 'link', 'add', 'qbrport-h', 'type', 'bridge',
                       'forward_delay', '0', 'stp_state', '0'], self.ran)
        bridged = self.ran.index(['ip', 'link', 'set', 'tapport-h', 'master',
                                  'qbrport-h'])
        attach = [i for i, c in enumerate(self.ran) if 'add-port' in c]
        self.assertEqual(1, len(attach))
        self.assertLess(bridged, attach[0])
        self.assertIn('qvoport-h', self.ran[attach[0]])
        self.assertNotIn('tapport-h', self.ran[attach[0]])
        self.assertEqual({'tapport-h', 'qbrport-h', 'qvbport-h'}, self.devices)

    def test_hybrid_unplug_removes_ovs_port_veths_and_bridge(self):
        plans = self.hybrid_plans()
        self.plugger.plug(plans, 4242, 'inst')
        self.ran.clear()
        self.plugger.unplug(plans)
        self.assertEqual(
            [['ovs-vsctl', '--timeout=120', '--', '--if-exists', 'del-port',
              'br-int', 'qvoport-h'],
             ['ip', 'link', 'del', 'tapport-h'],
             ['ip', 'link', 'del', 'qvbport-h'],
             ['ip', 'link', 'del', 'qbrport-h']], self.ran)
        self.assertEqual(set(), self.devices)

    def test_unplug(self):
        self.devices.add('tapport-a')
        self.plugger.unplug(self.plans)
        self.assertEqual(
            [['ovs-vsctl', '--timeout=120', '--', '--if-exists', 'del-port',
              'br-int', 'tapport-a'],
             ['ip', 'link', 'del', 'tapport-a'],
             ['ovs-vsctl', '--timeout=120', '--', '--if-exists', 'del-port',
              'br-int', 'tapport-b']], self.ran)
        self.assertFalse(self.plugger.is_plugged(self.plans))
        self.assertFalse(self.plugger.is_plugged([]))


class TestPluggerTools(testtools.TestCase):

    def missing(self, host_attach, *extra, absent=()):
        conf = Conf()
        conf.host_attach = host_attach
        with mock.patch('shutil.which',
                        lambda t: None if t in absent else '/usr/bin/' + t):
            return network.Plugger(conf).missing_tools(*extra)

    def test_ovs_needs_ovs_vsctl(self):
        self.assertEqual(['nsenter', 'ovs-vsctl'],
                         self.missing('ovs', 'nsenter',
                                      absent=('nsenter', 'ovs-vsctl')))

    def test_linuxbridge_needs_ip_only(self):
        self.assertEqual(['ip'], self.missing('linuxbridge',
                                              absent=('ip', 'ovs-vsctl')))


class TestCheckHost(testtools.TestCase):

    def plugger(self, run):
        return network.Plugger(Conf(), run=run)

    def test_runs_a_harmless_command_through_the_daemon(self):
        ran = []
        with mock.patch('shutil.which', lambda t: '/usr/bin/' + t):
            self.plugger(lambda cmd, **kw: ran.append(cmd)).check_host('x')
        self.assertEqual([['ip', '-o', 'link', 'show', 'lo']], ran)

    def test_missing_tools_are_named_before_the_daemon_starts(self):
        ran = []
        with mock.patch('shutil.which', lambda t: None):
            e = self.assertRaises(
                exception.NovaException,
                self.plugger(lambda cmd, **kw: ran.append(cmd)).check_host,
                'Docker driver', 'nsenter')
        self.assertIn('The Docker driver needs ip, nsenter, ovs-vsctl', str(e))
        self.assertEqual([], ran)

    def test_a_daemon_that_cannot_start_names_the_setup(self):
        def run(cmd, **kw):
            raise RuntimeError('privsep helper command exited non-zero (1)')
        with mock.patch('shutil.which', lambda t: '/usr/bin/' + t):
            e = self.assertRaises(exception.NovaException,
                                  self.plugger(run).check_host, 'floor driver')
        self.assertIn('exited non-zero (1)', str(e))
        self.assertIn('rootwrap.d/docker.filters', str(e))
        self.assertIn('[nova_docker_vif_plug] helper_command', str(e))
