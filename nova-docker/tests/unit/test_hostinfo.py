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


# /proc/self/mountinfo lines: ext4 root, an XFS data root with and without
# project quotas (XFS shows prjquota among the super block options)
MOUNTINFO = '''\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
40 22 7:0 / /srv/docker rw,relatime shared:20 - xfs /dev/loop0 rw,attr2,inode64,logbufs=8,prjquota
41 22 7:1 / /srv/plain rw,relatime shared:21 - xfs /dev/loop1 rw,attr2,inode64,noquota
42 22 0:50 / /srv/docker/old\\040dir rw - tmpfs tmpfs rw
'''


def info(driver='overlay2', fs='xfs', security=('name=seccomp,profile=default',),
         root='/srv/docker/data'):
    return {'Driver': driver, 'DriverStatus': [['Backing Filesystem', fs],
                                               ['Supports d_type', 'true']],
            'SecurityOptions': list(security), 'DockerRootDir': root}


class TestEngineLimits(testtools.TestCase):

    def test_remaps_users(self):
        self.assertFalse(hostinfo.remaps_users(info()))
        self.assertTrue(hostinfo.remaps_users(info(security=(
            'name=seccomp,profile=default', 'name=userns'))))
        self.assertTrue(hostinfo.remaps_users(info(security=(
            'name=rootless',))))
        self.assertFalse(hostinfo.remaps_users({}))

    def test_engine_warnings_name_userns_remap(self):
        [warning] = hostinfo.engine_warnings(info())
        self.assertIn('"userns-remap": the engine does not remap', warning)
        self.assertIn('once this host runs no instances', warning)
        self.assertEqual([], hostinfo.engine_warnings(info(security=(
            'name=seccomp,profile=default', 'name=userns'))))

    def test_mount_of_takes_the_longest_mount_point(self):
        fs, options = hostinfo.mount_of('/srv/docker/data', MOUNTINFO)
        self.assertEqual('xfs', fs)
        self.assertIn('prjquota', options)
        self.assertIn('relatime', options)     # the mount's own options
        self.assertEqual('ext4', hostinfo.mount_of('/srv/dockerx',
                                                   MOUNTINFO)[0])
        self.assertEqual('tmpfs', hostinfo.mount_of('/srv/docker/old dir/x',
                                                    MOUNTINFO)[0])
        self.assertEqual('ext4', hostinfo.mount_of('/', MOUNTINFO)[0])
        self.assertIsNone(hostinfo.mount_of(None, MOUNTINFO))
        self.assertIsNone(hostinfo.mount_of('/x', ''))

    def test_disk_limit_only_on_overlay2_over_xfs_with_project_quotas(self):
        quota = hostinfo.mount_of('/srv/docker', MOUNTINFO)
        self.assertIsNone(hostinfo.disk_limit_problem(info(), quota))
        self.assertIn("the storage driver is 'vfs'",
                      hostinfo.disk_limit_problem(info(driver='vfs'), quota))
        self.assertEqual(
            'overlay2 is on extfs, not on XFS mounted with pquota',
            hostinfo.disk_limit_problem(info(fs='extfs'), None))
        self.assertIn(
            'the XFS holding /srv/plain/data is mounted without project '
            'quotas (mount it with -o pquota)',
            hostinfo.disk_limit_problem(
                info(root='/srv/plain/data'),
                hostinfo.mount_of('/srv/plain/data', MOUNTINFO)))
        # the engine's XFS is not what this process sees there (another
        # mount namespace), or nothing is: the engine decides at create
        self.assertIsNone(hostinfo.disk_limit_problem(
            info(), hostinfo.mount_of('/srv/dockerx', MOUNTINFO)))
        self.assertIsNone(hostinfo.disk_limit_problem(info(), None))
        self.assertIn('unreported', hostinfo.disk_limit_problem(
            {'Driver': 'overlay2'}, None))

    def test_disk_limit_refusal_is_recognised(self):
        self.assertTrue(hostinfo.is_disk_limit_refusal(
            '500 Server Error ("--storage-opt is supported only for overlay '
            'over xfs with \'pquota\' mount option")'))
        self.assertFalse(hostinfo.is_disk_limit_refusal('No such image'))
