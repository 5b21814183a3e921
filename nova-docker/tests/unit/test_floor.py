"""FloorDriver: Nova's fake plus the Docker driver's plugging and waiting."""

import logging
import fixtures

from nova.compute import power_state
from nova import exception
from nova_docker_vmct import floor

from tests.unit import test_driver


class FloorTestCase(test_driver.DriverTestCase):
    """A FloorDriver in the Docker driver's test harness.

    Plugging calls recorded, fake virtapi and clock, one plugger.
    """

    def setUp(self):
        super().setUp()
        self.floor = floor.FloorDriver(self.virtapi,
                                       plugger=self.driver._plugger,
                                       clock=self.clock)
        self.floor.init_host('unit-host')
        self.links.calls.clear()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct', level=logging.INFO))

    def spawn(self, inst, nw, image=None, power_on=True):
        self.floor.spawn(self.ctx, inst, image, [], None, {}, nw,
                         power_on=power_on)


class TestFloorSpawn(FloorTestCase):

    def test_plugs_in_the_host_netns_and_waits_for_neutron(self):
        self.virtapi.arrival = 1.5
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        port = nw[0]['id']
        tap, peer = ('tap' + port)[:14], ('vns' + port)[:14]
        self.assertEqual({tap, peer}, self.devices)
        # the bridge port is an instance's (os-vif: Neutron's external ids);
        # nothing is moved into a netns, nothing runs inside one
        self.assertEqual(['ovsdb.get', 'os_vif.unplug', 'create_veth_pair',
                          'os_vif.plug'], self.ran)
        self.assertIn(('os_vif.plug', tap, inst.uuid), self.links.calls)
        self.assertEqual([([('network-vif-plugged', port)], 300)],
                         self.virtapi.waits)
        self.assertEqual(power_state.RUNNING, self.floor.get_info(inst).state)
        self.assertIn('Spawned floor instance in 1.50 s: network_info 0.00, '
                      'plug_vifs 0.00, wait_vif_plugged 1.50', self.log.output)
        self.assertEqual([('floor_network_info', 'Success'),
                          ('floor_plug_vifs', 'Success'),
                          ('floor_wait_vif_plugged', 'Success')],
                         self.events.finished())

    def test_active_ports_are_not_waited_for(self):
        inst, nw = self.make(active=True)
        self.spawn(inst, nw)
        self.assertEqual([([], 300)], self.virtapi.waits)

    def test_vif_timeout_fails_the_spawn_and_unplugs(self):
        self.virtapi.timeout = True
        inst, nw = self.make(active=False)
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.spawn, inst, nw)
        self.assertEqual(set(), self.devices)
        self.assertEqual('os_vif.unplug', self.ran[-2])
        self.assertRaises(exception.InstanceNotFound,
                          self.floor.get_info, inst)
        self.assertEqual(('floor_wait_vif_plugged', 'Error'),
                         self.events.finished()[-1])

    def test_vif_timeout_not_fatal_goes_on(self):
        self.conf.config(vif_plugging_is_fatal=False)
        self.virtapi.timeout = True
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        self.assertEqual(power_state.RUNNING, self.floor.get_info(inst).state)


class TestFloorLifecycle(FloorTestCase):

    def test_destroy_unplugs_every_port(self):
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        self.floor.destroy(self.ctx, inst, nw)
        self.assertEqual(set(), self.devices)
        self.assertEqual([], self.floor.list_instance_uuids())

    def test_plug_vifs_again_after_a_restart(self):
        inst, nw = self.make()
        self.floor.plug_vifs(inst, nw)
        self.floor.plug_vifs(inst, nw)     # stale devices are replaced
        self.assertEqual(2, len(self.devices))
        self.floor.unplug_vifs(inst, nw)
        self.assertEqual(set(), self.devices)

    def test_init_host_names_a_daemon_that_cannot_start(self):
        self.links.fail['vif_plug_capabilities'] = OSError('sudo: no')
        e = self.assertRaises(exception.NovaException,
                              self.floor.init_host, 'unit-host')
        self.assertIn('floor driver could not start its privsep daemon '
                      'vif_plug (sudo: no)', str(e))
