import os_resource_classes as orc
import testtools

from nova_docker_vmct import hostinfo


class TestHostinfo(testtools.TestCase):

    def test_meminfo(self):
        text = ('MemTotal:       24684000 kB\nMemFree:  100 kB\n'
                'MemAvailable:   20000000 kB\nHugePages_Total:       0\n')
        self.assertEqual({'MemTotal': 24684000, 'MemFree': 100,
                          'MemAvailable': 20000000, 'HugePages_Total': 0},
                         hostinfo.meminfo(text))

    def test_inventory(self):
        ratios = {orc.VCPU: 4.0, orc.MEMORY_MB: 1.5, orc.DISK_GB: 1.0}
        inv = hostinfo.inventory(2, 24105, 251, ratios, 1, 512, 3)
        self.assertEqual({'total': 2, 'min_unit': 1, 'max_unit': 2,
                          'step_size': 1, 'allocation_ratio': 4.0,
                          'reserved': 1}, inv[orc.VCPU])
        self.assertEqual(1.5, inv[orc.MEMORY_MB]['allocation_ratio'])
        self.assertEqual(512, inv[orc.MEMORY_MB]['reserved'])
        self.assertEqual(24105, inv[orc.MEMORY_MB]['max_unit'])
        self.assertEqual(3, inv[orc.DISK_GB]['reserved'])
        self.assertEqual(251, inv[orc.DISK_GB]['total'])

    def test_inventory_never_negative(self):
        ratios = {orc.VCPU: 1.0, orc.MEMORY_MB: 1.0, orc.DISK_GB: 1.0}
        inv = hostinfo.inventory(0, -1, 0, ratios, None, None, None)
        self.assertEqual(0, inv[orc.MEMORY_MB]['total'])
        self.assertEqual(1, inv[orc.MEMORY_MB]['max_unit'])
        self.assertEqual(0, inv[orc.VCPU]['reserved'])

    def test_usage_from_labels(self):
        labels = [{'v': '2', 'm': '512'}, {'v': '1', 'm': '256'},
                  {'v': 'bad'}, {}]
        self.assertEqual((3, 768), hostinfo.usage_from_labels(labels, 'v',
                                                              'm'))

    def test_version_to_int(self):
        self.assertEqual(20010024, hostinfo.version_to_int('20.10.24+dfsg1'))
        self.assertEqual(28002002, hostinfo.version_to_int('28.2.2'))
        self.assertEqual(25000000, hostinfo.version_to_int('25.0'))
        self.assertEqual(24000007, hostinfo.version_to_int('24.0.7-ce'))
