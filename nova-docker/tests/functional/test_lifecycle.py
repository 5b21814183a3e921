"""Spawn, reach, reboot, stop/start and delete through the driver."""

import time

from nova.compute import power_state
from nova import exception

from tests.functional import base


class TestSpawnDestroy(base.DriverTestCase):

    def test_spawn_reachable_then_destroy_leaves_nothing(self):
        inst, nw = self.make_instance(hostname='vmct-spawn')
        t_spawn = self.spawn(inst, nw)
        base.record_timing('spawn_first (incl. docker load)', t_spawn)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(inst).state)
        t_ssh = self.wait_ssh('192.0.2.10')
        base.record_timing('spawn_return_to_ssh', t_ssh)
        self.assertEqual('vmct-spawn',
                         self.ssh('192.0.2.10', 'hostname').stdout.strip())
        link = self.ssh('192.0.2.10', 'ip', '-o', 'link', 'show',
                        'eth0').stdout
        self.assertIn('fa:16:3e:00:00:10', link)
        self.assertIn('mtu 1400', link)
        route = self.ssh('192.0.2.10', 'ip', 'route', 'show',
                         'default').stdout
        self.assertIn('via 192.0.2.1 dev eth0', route)
        attrs = self.container(inst)
        self.assertEqual('none', attrs['HostConfig']['NetworkMode'])
        self.assertEqual(10 ** 9, attrs['HostConfig']['NanoCpus'])
        self.assertEqual(256 * 1024 * 1024, attrs['HostConfig']['Memory'])
        self.assertIn(inst.uuid, self.driver.list_instance_uuids())
        self.assertIn(inst.name, self.driver.list_instances())
        self.assertEqual([nw[0]['devname']],
                         [p for p in self.net.bridge_ports()
                          if p != self.net.veth])

        start = time.monotonic()
        self.driver.destroy(self.ctx, inst, nw)
        base.record_timing('destroy', time.monotonic() - start)
        self.assertRaises(exception.InstanceNotFound,
                          self.driver.get_info, inst)
        self.assertEqual([], self.docker.containers.list(
            all=True, filters={'name': 'nova-%s' % inst.uuid}))
        self.assertFalse(self.host_dev_exists(nw))
        self.assertEqual([self.net.veth], self.net.bridge_ports())
        self.assertNotIn(inst.uuid, self.driver.list_instance_uuids())
        # destroy again: a missing container is not an error
        self.driver.destroy(self.ctx, inst, nw)
