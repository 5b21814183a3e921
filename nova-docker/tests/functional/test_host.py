"""Host-level behaviour against the real engine: loading, resources, errors."""

import importlib
import os
import subprocess
import sys
import uuid

from nova.compute import provider_tree
from nova import exception
from nova.virt import driver as virt_driver
from nova.virt import fake as fake_virt
import os_resource_classes as orc

from tests.functional import base


class TestHost(base.DriverTestCase):

    def test_loaded_through_nova_loader(self):
        # docker.DockerDriver -> nova.virt.docker, the alias of the package
        self.assertEqual('nova_docker_vmct.driver',
                         type(self.driver).__module__)
        self.assertIs(sys.modules['nova_docker_vmct.driver'],
                      importlib.import_module('nova.virt.docker.driver'))
        self.assertIsInstance(self.driver, virt_driver.ComputeDriver)

    def test_available_resource_matches_host(self):
        res = self.driver.get_available_resource(self.host)
        self.assertEqual(os.cpu_count(), res['vcpus'])
        with open('/proc/meminfo') as f:
            total_kb = int(f.readline().split()[1])
        self.assertEqual(total_kb // 1024, res['memory_mb'])
        st = os.statvfs(self.docker.info()['DockerRootDir'])
        self.assertEqual(st.f_blocks * st.f_frsize // 1024 ** 3,
                         res['local_gb'])
        self.assertEqual('docker', res['hypervisor_type'])
        self.assertEqual(self.host, res['hypervisor_hostname'])
        self.assertEqual([(res['supported_instances'][0][0], 'docker',
                           'exe')], res['supported_instances'])
        self.assertGreater(res['hypervisor_version'], 1000000)
        self.assertEqual([self.host], self.driver.get_available_nodes())

    def test_vcpus_used_counts_flavors_of_instances(self):
        before = self.driver.get_available_resource(self.host)['vcpus_used']
        inst, nw = self.make_instance(address='198.51.100.41', vcpus=2)
        self.spawn(inst, nw, power_on=False)
        after = self.driver.get_available_resource(self.host)['vcpus_used']
        self.assertEqual(before + 2, after)

    def test_provider_tree_honours_ratios_and_reserved(self):
        self.conf.config(cpu_allocation_ratio=4.0, ram_allocation_ratio=1.5,
                         reserved_host_memory_mb=512, reserved_host_cpus=1,
                         reserved_host_disk_mb=2048)
        tree = provider_tree.ProviderTree()
        tree.new_root(self.host, str(uuid.uuid4()))
        self.driver.update_provider_tree(tree, self.host)
        inv = tree.data(self.host).inventory
        res = self.driver.get_available_resource(self.host)
        self.assertEqual(res['vcpus'], inv[orc.VCPU]['total'])
        self.assertEqual(4.0, inv[orc.VCPU]['allocation_ratio'])
        self.assertEqual(1, inv[orc.VCPU]['reserved'])
        self.assertEqual(res['memory_mb'], inv[orc.MEMORY_MB]['total'])
        self.assertEqual(1.5, inv[orc.MEMORY_MB]['allocation_ratio'])
        self.assertEqual(512, inv[orc.MEMORY_MB]['reserved'])
        self.assertEqual(res['local_gb'], inv[orc.DISK_GB]['total'])
        self.assertEqual(1.0, inv[orc.DISK_GB]['allocation_ratio'])
        self.assertEqual(2, inv[orc.DISK_GB]['reserved'])

    def test_provider_tree_initial_ratio_then_keeps_placement_value(self):
        self.conf.config(cpu_allocation_ratio=None,
                         initial_cpu_allocation_ratio=8.0)
        tree = provider_tree.ProviderTree()
        tree.new_root(self.host, str(uuid.uuid4()))
        self.driver.update_provider_tree(tree, self.host)
        self.assertEqual(8.0, tree.data(self.host).inventory[
            orc.VCPU]['allocation_ratio'])
        inv = tree.data(self.host).inventory
        inv[orc.VCPU]['allocation_ratio'] = 3.0   # set by an operator
        tree.update_inventory(self.host, inv)
        self.driver.update_provider_tree(tree, self.host)
        self.assertEqual(3.0, tree.data(self.host).inventory[
            orc.VCPU]['allocation_ratio'])

    def test_capabilities_are_truthful(self):
        traits = self.driver.capabilities_as_traits()
        self.assertTrue(traits['COMPUTE_IMAGE_TYPE_RAW'])
        self.assertFalse(traits['COMPUTE_IMAGE_TYPE_QCOW2'])
        self.assertFalse(traits['COMPUTE_NET_ATTACH_INTERFACE'])
        self.assertFalse(traits['COMPUTE_VOLUME_MULTI_ATTACH'])
        self.assertFalse(self.driver.capabilities['has_imagecache'])


class TestEngineUnreachable(base.testtools.TestCase):

    def test_init_host_says_engine_is_unreachable(self):
        conf = self.useFixture(base.config_fixture.Config(base.CONF))
        sock = '/nonexistent/vmct-%s.sock' % uuid.uuid4().hex[:6]
        conf.config(group='docker', api_url='unix://' + sock)
        drv = virt_driver.load_compute_driver(fake_virt.FakeVirtAPI(),
                                              'docker.DockerDriver')
        e = self.assertRaises(exception.NovaException, drv.init_host, 'h')
        self.assertIn('does not answer', str(e))
        self.assertIn(sock, str(e))


def ovs_running():
    try:
        return subprocess.run(['ovs-vsctl', '--timeout=5', 'show'],
                              capture_output=True).returncode == 0
    except OSError:
        return False


class TestOpenvSwitch(base.DriverTestCase):
    """host_attach=ovs with a bridge of our own in the running OVS.

    Uses the machine's ovsdb-server/ovs-vswitchd if they run (userspace
    datapath); creates bridge vmct-tbr<random> and deletes it afterwards.
    Nothing else in that OVS is touched.
    """

    NETWORK = 'ovs'

    def setUp(self):
        if not ovs_running():
            self.skipTest('no running Open vSwitch (ovs-vsctl show fails)')
        super().setUp()
        self.bridge = self.net.bridge

    def _external_ids(self, dev):
        out = base.run('ovs-vsctl', '--timeout=30', '--bare', '--columns',
                       'external_ids', 'find', 'Interface',
                       'name=%s' % dev).stdout
        return dict(item.split('=', 1) for item in out.split())

    def _ports(self):
        return base.run('ovs-vsctl', '--timeout=30', 'list-ports',
                        self.bridge).stdout.split()

    def test_ovs_plug_external_ids_reach_and_unplug(self):
        vif = base.helpers.vif(mac='fa:16:3e:00:00:50',
                               address='198.51.100.50',
                               gateway=base.GATEWAY, bridge=self.bridge,
                               mtu=1400)
        inst = base.helpers.instance(self.ctx, key_data=self.key_data,
                                     network_info=[vif])
        nw = inst.get_network_info()
        self.spawn(inst, nw)
        dev = nw[0]['devname']
        self.assertIn(dev, self._ports())
        self.assertEqual({'iface-id': vif['id'], 'iface-status': 'active',
                          'attached-mac': 'fa:16:3e:00:00:50',
                          'vm-uuid': inst.uuid}, self._external_ids(dev))
        self.wait_ssh('198.51.100.50')
        self.driver.reboot(self.ctx, inst, nw, 'HARD')
        self.assertEqual([dev], [p for p in self._ports() if p == dev])
        self.wait_ssh('198.51.100.50')
        self.driver.destroy(self.ctx, inst, nw)
        self.assertNotIn(dev, self._ports())
        self.assertFalse(self.host_dev_exists(nw))
