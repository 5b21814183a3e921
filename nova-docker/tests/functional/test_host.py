"""Host-level behaviour against the real engine: loading, resources, errors."""

import importlib
import io
import os
import subprocess
import sys
import uuid

from nova.compute import provider_tree
from nova import context as nova_context
from nova import exception
from nova.virt import driver as virt_driver
from nova.virt import fake as fake_virt
from nova_docker_vmct import container
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
        # the driver prunes its cache of Glance images (manage_image_cache,
        # TestImageCache): Nova's periodic pass runs only when this is true
        self.assertTrue(self.driver.capabilities['has_imagecache'])


class TestImageCache(base.DriverTestCase):
    """Nova's image cache pass prunes cached images in the real engine.

    Only tags under this test's own ``[docker]image_repository`` (the
    base's per-test repository, never the real ``glance/...``) are made
    and pruned. Each cached image is a Docker image of its own (the
    workload image plus a label): a container of another test, built from
    the workload image, never shares its id.
    """

    def setUp(self):
        super().setUp()
        self.gone = set()
        self.driver.image_exists = lambda ctx, image_id: (
            image_id not in self.gone)
        # a context that carries a token: Glance (here the stub) is asked
        # with it as it is
        self.glance_ctx = nova_context.RequestContext(
            'u', 'p', is_admin=False, auth_token='tok')

    def _workload_image(self):
        try:
            return self.docker.images.get(base.IMAGE)
        except base.docker.errors.ImageNotFound:
            return self.docker.images.load(
                base.file_chunks(self.image_tar))[0]

    def cache(self, gone=False):
        """A new Docker image tagged as the cached Glance image of an id."""
        image_id = str(uuid.uuid4())
        dockerfile = 'FROM %s\nLABEL vmct.test=%s\n' % (
            self._workload_image().id, image_id)
        image, _log = self.docker.images.build(
            fileobj=io.BytesIO(dockerfile.encode()), rm=True, forcerm=True)
        self.addCleanup(self._remove_image, image.id)
        image.tag('%s/%s' % (self.repository, image_id), 'latest')
        if gone:
            self.gone.add(image_id)
        return image_id, image.id

    def _remove_image(self, docker_id):
        try:
            self.docker.images.remove(docker_id, force=True)
        except base.docker.errors.ImageNotFound:
            pass

    def _remove_container(self, c):
        try:
            c.remove(force=True)
        except base.docker.errors.NotFound:
            pass

    def ref(self, image_id):
        return '%s/%s:latest' % (self.repository, image_id)

    def tagged_at(self, image_id):
        return container.parse_docker_time(self.docker.images.get(
            self.ref(image_id)).attrs['Metadata']['LastTagTime'])

    def test_prune_gone_unused_keep_used_then_age_out(self):
        self.conf.config(group='image_cache', remove_unused_base_images=True,
                         remove_unused_original_minimum_age_seconds=3600)
        gone, gone_docker_id = self.cache(gone=True)
        used, _ = self.cache(gone=True)
        present, _ = self.cache()
        # a created (never started) container: in use all the same
        c = self.docker.containers.create(
            self.ref(used), name='vmct-ftest-%s' % uuid.uuid4().hex[:8],
            labels={'nova.host': self.host})
        self.addCleanup(self._remove_container, c)
        before = self.tagged_at(used)

        self.driver.manage_image_cache(self.glance_ctx, [])
        # gone in Glance and unused: the tag and the Docker image are gone
        self.assertRaises(base.docker.errors.ImageNotFound,
                          self.docker.images.get, self.ref(gone))
        self.assertRaises(base.docker.errors.ImageNotFound,
                          self.docker.images.get, gone_docker_id)
        # gone too, but the container uses it: kept, and tagged again
        # (LastTagTime: the last time it was seen in use)
        self.assertGreater(self.tagged_at(used), before)
        # in Glance and younger than the minimum age: kept
        self.docker.images.get(self.ref(present))

        # minimum age 0: the unused one goes, the used one stays
        self.conf.config(group='image_cache',
                         remove_unused_original_minimum_age_seconds=0)
        self.driver.manage_image_cache(self.glance_ctx, [])
        self.assertRaises(base.docker.errors.ImageNotFound,
                          self.docker.images.get, self.ref(present))
        self.docker.images.get(self.ref(used))
        # remove_unused_base_images = False: nothing goes
        self._remove_container(c)
        self.conf.config(group='image_cache', remove_unused_base_images=False)
        self.driver.manage_image_cache(self.glance_ctx, [])
        self.docker.images.get(self.ref(used))
        # an instance's image (Nova's list) is in use as well
        self.conf.config(group='image_cache', remove_unused_base_images=True)
        inst = base.helpers.instance(self.ctx, image_ref=used)
        self.driver.manage_image_cache(self.glance_ctx, [inst])
        self.docker.images.get(self.ref(used))
        self.driver.manage_image_cache(self.glance_ctx, [])
        self.assertEqual([], self.docker.images.list(
            filters={'reference': '%s/*' % self.repository}))


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

    def _get(self, table, record, column):
        return base.run('ovs-vsctl', '--timeout=30', 'get', table, record,
                        column).stdout.strip()

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
        # as Neutron's agent wires them: a local VLAN tag, the network's
        for port in (dev, self.net.veth):
            base.run('ovs-vsctl', '--timeout=30', 'set', 'Port', port,
                     'tag=7')
        self.wait_ssh('198.51.100.50')
        ofport = self._get('Interface', dev, 'ofport')
        self.driver.reboot(self.ctx, inst, nw, 'HARD')
        self.assertEqual([dev], [p for p in self._ports() if p == dev])
        # the new device's port kept the agent's tag and its OpenFlow port
        self.assertEqual(('7', ofport), (self._get('Port', dev, 'tag'),
                                         self._get('Interface', dev,
                                                   'ofport')))
        self.wait_ssh('198.51.100.50')
        self.driver.destroy(self.ctx, inst, nw)
        self.assertNotIn(dev, self._ports())
        self.assertFalse(self.host_dev_exists(nw))

    def test_hybrid_plug_bridges_the_tap_and_puts_qvo_on_ovs(self):
        # ovs_hybrid_plug: Neutron's iptables_hybrid firewall filters on a
        # Linux bridge per port (qbr), as for libvirt's ports
        vif = base.helpers.vif(mac='fa:16:3e:00:00:51',
                               address='198.51.100.51',
                               gateway=base.GATEWAY, bridge=self.bridge)
        vif['details']['ovs_hybrid_plug'] = True
        inst = base.helpers.instance(self.ctx, key_data=self.key_data,
                                     network_info=[vif])
        nw = inst.get_network_info()
        self.spawn(inst, nw)
        suffix = vif['id'][:11]
        tap, qbr, qvb, qvo = ('%s%s' % (prefix, suffix)
                              for prefix in ('tap', 'qbr', 'qvb', 'qvo'))
        self.assertEqual(tap, nw[0]['devname'])
        self.assertIn(qvo, self._ports())
        self.assertNotIn(tap, self._ports())
        self.assertEqual(vif['id'], self._external_ids(qvo)['iface-id'])
        members = base.run('ip', '-o', 'link', 'show', 'master', qbr).stdout
        self.assertEqual({tap, qvb}, {line.split(':')[1].strip().split('@')[0]
                                      for line in members.splitlines()})
        self.wait_ssh('198.51.100.51')
        self.driver.reboot(self.ctx, inst, nw, 'HARD')
        self.wait_ssh('198.51.100.51')
        self.driver.destroy(self.ctx, inst, nw)
        self.assertNotIn(qvo, self._ports())
        for dev in (tap, qbr, qvb, qvo):
            self.assertFalse(os.path.exists('/sys/class/net/' + dev), dev)
