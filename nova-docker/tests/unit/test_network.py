import testtools

from nova import exception

from nova_docker_vmct import vif as vif_plan

from tests import helpers
from tests.unit import fake_links

NETNS = '/var/run/docker/netns/0123456789ab'


class Conf(object):
    host_attach = 'ovs'
    integration_bridge = 'br-int'


class PluggerTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = Conf()
        self.plugger, self.links, self.wiring = fake_links.plugger(self.conf)
        self.inst = helpers.instance()
        self.plans = vif_plan.plans([
            helpers.vif(port_id='port-a', address='10.0.0.5'),
            helpers.vif(port_id='port-b', address='10.1.0.5',
                        cidr='10.1.0.0/24', gateway=None)], 'br-int')

    def hybrid_plans(self):
        vif = helpers.vif(port_id='port-h', address='10.0.0.9')
        vif['details']['ovs_hybrid_plug'] = True
        return vif_plan.plans([vif], 'br-int')


class TestPlug(PluggerTestCase):

    def test_ovs_order_host_side_then_container_side(self):
        self.plugger.plug(self.plans[:1], NETNS, self.inst)
        self.assertEqual([
            ('ovsdb.get', 'tapport-a'),
            # the old port removed in its own transaction, before the add
            ('os_vif.unplug', 'tapport-a', self.inst.uuid),
            ('create_veth_pair', 'tapport-a', 'vnsport-a', 1400),
            ('os_vif.plug', 'tapport-a', self.inst.uuid),
            ('move_to_netns', 'vnsport-a', NETNS),
            ('configure_in_netns', NETNS, 'vnsport-a', 'eth0',
             'fa:16:3e:00:00:01', 1400, ['10.0.0.5/24'], ['198.51.100.1'],
             [])], self.links.calls)
        self.assertTrue(self.plugger.is_plugged(self.plans[:1]))

    def test_every_port_gets_its_interface(self):
        self.plugger.plug(self.plans, NETNS, self.inst)
        configured = [c for c in self.links.calls
                      if c[0] == 'configure_in_netns']
        self.assertEqual([('vnsport-a', 'eth0', ['198.51.100.1']),
                          ('vnsport-b', 'eth1', [])],
                         [(c[2], c[3], c[7]) for c in configured])

    def test_replug_keeps_tag_and_ofport(self):
        self.wiring.ports['tapport-a'] = {'tag': 7, 'ofport': 93}
        self.plugger.plug(self.plans[:1], NETNS, self.inst)
        names = self.links.names()
        create = names.index('ovsdb.create')
        self.assertEqual(('ovsdb.create', 'br-int', 'tapport-a', 7, 93),
                         self.links.calls[create])
        # after the old port went, before os-vif's add (which keeps it)
        self.assertLess(names.index('os_vif.unplug'), create)
        self.assertLess(create, names.index('os_vif.plug'))

    def test_unreadable_wiring_is_a_fresh_port(self):
        def broken(dev):
            raise OSError('ovsdb: no')
        self.wiring.get = broken
        self.plugger.plug(self.plans[:1], NETNS, self.inst)
        self.assertNotIn('ovsdb.create', self.links.names())
        self.assertIn('os_vif.plug', self.links.names())

    def test_linuxbridge_enslaves_the_tap_without_os_vif(self):
        self.conf.host_attach = 'linuxbridge'
        self.plugger.plug(self.plans[:1], NETNS, self.inst)
        self.assertIn(('add_to_bridge', 'tapport-a', 'br-int'),
                      self.links.calls)
        self.assertFalse([n for n in self.links.names()
                          if n.startswith(('os_vif', 'ovsdb'))])

    def test_leftover_devices_are_removed_first(self):
        self.links.devices.update({'tapport-a', 'vnsport-a'})
        self.plugger.plug(self.plans[:1], NETNS, self.inst)
        names = self.links.names()
        self.assertEqual([('delete_device', 'tapport-a'),
                          ('delete_device', 'vnsport-a')],
                         [c for c in self.links.calls
                          if c[0] == 'delete_device'])
        self.assertLess(names.index('delete_device'),
                        names.index('create_veth_pair'))

    def test_failed_attach_removes_the_pair(self):
        self.links.fail['os_vif.plug'] = RuntimeError('ovsdb down')
        self.assertRaises(RuntimeError, self.plugger.plug, self.plans[:1],
                          NETNS, self.inst)
        self.assertEqual(set(), self.links.devices)

    def test_failed_move_in_deletes_the_veth(self):
        self.links.fail['configure_in_netns'] = RuntimeError('netns gone')
        self.assertRaises(RuntimeError, self.plugger.plug, self.plans, NETNS,
                          self.inst)
        self.assertEqual(('delete_device', 'tapport-a'), self.links.calls[-1])
        self.assertNotIn('tapport-a', self.links.devices)

    def test_host_only_leaves_the_peer_in_the_host_netns(self):
        self.plugger.plug_host_only(self.plans, self.inst)
        self.assertEqual({'tapport-a', 'vnsport-a', 'tapport-b',
                          'vnsport-b'}, self.links.devices)
        self.assertNotIn('move_to_netns', self.links.names())


class TestHybridPlug(PluggerTestCase):

    def test_os_vif_makes_the_bridge_then_the_tap_joins_it(self):
        plans = self.hybrid_plans()
        self.plugger.plug(plans, NETNS, self.inst)
        names = self.links.names()
        self.assertIn(('os_vif.plug', 'qvoport-h', self.inst.uuid),
                      self.links.calls)
        # os-vif leaves the instance's device to the caller, as to libvirt
        self.assertIn(('add_to_bridge', 'tapport-h', 'qbrport-h'),
                      self.links.calls)
        self.assertLess(names.index('os_vif.plug'),
                        names.index('add_to_bridge'))
        self.assertEqual(('ovsdb.get', 'qvoport-h'), self.links.calls[0])

    def test_unplug_is_os_vifs_then_the_pair(self):
        plans = self.hybrid_plans()
        self.plugger.plug_host_only(plans, self.inst)
        self.links.calls.clear()
        self.plugger.unplug(plans, self.inst)
        self.assertEqual([('os_vif.unplug', 'qvoport-h', self.inst.uuid),
                          ('delete_device', 'tapport-h')], self.links.calls)
        self.assertEqual(set(), self.links.devices)


class TestUnplugAndAnnounce(PluggerTestCase):

    def test_unplug_tolerates_missing_devices(self):
        self.links.devices.add('tapport-a')
        self.plugger.unplug(self.plans, self.inst)
        self.assertEqual(
            [('os_vif.unplug', 'tapport-a', self.inst.uuid),
             ('delete_device', 'tapport-a'),
             ('os_vif.unplug', 'tapport-b', self.inst.uuid)],
            self.links.calls)
        self.assertFalse(self.plugger.is_plugged(self.plans))
        self.assertFalse(self.plugger.is_plugged([]))

    def test_unplug_goes_on_when_os_vif_fails(self):
        self.links.fail['os_vif.unplug'] = RuntimeError('ovsdb down')
        self.links.devices.update({'tapport-a', 'vnsport-a'})
        self.plugger.unplug(self.plans[:1], self.inst)
        self.assertEqual(set(), self.links.devices)

    def test_announce_names_ipv4_only_and_never_fails(self):
        v6 = vif_plan.plans([helpers.vif(
            port_id='port-6', address='10.2.0.5', cidr='10.2.0.0/24',
            v6=('fd00::/64', 'fd00::5', None))], 'br-int')
        self.plugger.announce(self.plans + v6, NETNS)
        self.assertEqual(
            [('announce', NETNS, 'eth0', 'fa:16:3e:00:00:01', ['10.0.0.5']),
             ('announce', NETNS, 'eth1', 'fa:16:3e:00:00:01', ['10.1.0.5']),
             ('announce', NETNS, 'eth0', 'fa:16:3e:00:00:01', ['10.2.0.5'])],
            self.links.calls)
        self.links.fail['announce'] = OSError('gone')
        self.plugger.announce(self.plans, NETNS)     # logged, not raised


class TestCheckHost(PluggerTestCase):

    def test_starts_both_daemons_then_connects_to_ovsdb(self):
        self.plugger.check_host('Docker driver')
        self.assertEqual(['vif_plug_capabilities', 'netns_plug_capabilities',
                          'ovsdb.check'], self.links.names())

    def test_linuxbridge_needs_no_ovsdb(self):
        self.conf.host_attach = 'linuxbridge'
        self.plugger.check_host('Docker driver')
        self.assertNotIn('ovsdb.check', self.links.names())

    def test_a_daemon_that_cannot_start_names_the_setup(self):
        self.links.fail['netns_plug_capabilities'] = RuntimeError(
            'privsep helper command exited non-zero (1)')
        e = self.assertRaises(exception.NovaException,
                              self.plugger.check_host, 'floor driver')
        self.assertIn('exited non-zero (1)', str(e))
        self.assertIn('rootwrap.d/docker.filters', str(e))
        self.assertIn('[nova_docker_netns_plug] helper_command', str(e))

    def test_unreachable_ovsdb_names_the_option_and_the_socket(self):
        self.links.fail['ovsdb.check'] = OSError('Permission denied')
        self.useFixture(helpers.OsVifOptions())
        e = self.assertRaises(exception.NovaException,
                              self.plugger.check_host, 'Docker driver')
        self.assertIn('[os_vif_ovs] ovsdb_connection', str(e))
        self.assertIn('Permission denied', str(e))
        self.assertIn('unix:/run/openvswitch/db.sock', str(e))
