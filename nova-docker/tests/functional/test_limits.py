"""What one tenant's instance cannot take from the others, for real.

A fork bomb against the PID limit (the shared engine); the disk limit and
user namespace remapping on private engines (tests.functional.engine): they
are settings of a whole engine, which a test must not change under others.
"""

import os
import time

import docker.errors
import fixtures

from nova_docker_vmct import driver as docker_driver
from nova_docker_vmct import hostinfo

from tests.functional import base
from tests.functional import test_suspend_rescue

LOG_NAME = 'nova_docker_vmct.driver'


def cgroup_dir(pid, controller):
    """The cgroup directory of process ``pid`` for ``controller``.

    cgroup v1: the controller's own hierarchy (pids/docker/<id> with the
    cgroupfs driver); v2: the one hierarchy (the ``0::`` line).
    """
    with open('/proc/%d/cgroup' % pid) as f:
        lines = [line.rstrip('\n').split(':', 2) for line in f]
    for _, controllers, path in lines:
        if controller in controllers.split(','):
            return os.path.join('/sys/fs/cgroup', controllers,
                                path.lstrip('/'))
    for hierarchy, controllers, path in lines:
        if hierarchy == '0' and not controllers:
            return os.path.join('/sys/fs/cgroup', path.lstrip('/'))
    raise AssertionError('no %s cgroup for pid %d' % (controller, pid))


def read(path):
    with open(path) as f:
        return f.read().strip()


def cpu_seconds(cpu_dir):
    """CPU time the cgroup used so far (v1 cpuacct.usage, v2 cpu.stat)."""
    usage = os.path.join(cpu_dir, 'cpuacct.usage')
    if os.path.exists(usage):
        return int(read(usage)) / 1e9
    stat = dict(line.split() for line in
                read(os.path.join(cpu_dir, 'cpu.stat')).splitlines())
    return int(stat['usage_usec']) / 1e6


class TestForkBomb(base.DriverTestCase):
    """A fork bomb in instance A, instance B answering SSH beside it.

    A's flavor sets docker:pids_limit=PIDS; B has [docker]pids_limit. The
    bomb (perl's ``fork while 1``: every process forks for ever and spins
    when fork fails) runs for WINDOW seconds under A's CPU quota (one
    vCPU: one of this machine's two cores), then A is deleted.
    """

    PIDS = 64
    BOMB = '198.51.100.80'
    OTHER = '198.51.100.81'
    WINDOW = 15.0
    EVERY = 0.5
    ANSWER_WITHIN = 2.0

    def test_fork_bomb_stays_in_its_instance(self):
        self.conf.config(group='docker', pids_limit=1024)
        bomb, bomb_nw = self.make_instance(
            address=self.BOMB, mac='fa:16:3e:00:00:80', hostname='bomb',
            extra_specs={'docker:pids_limit': str(self.PIDS)})
        other, other_nw = self.make_instance(
            address=self.OTHER, mac='fa:16:3e:00:00:81', hostname='other')
        self.spawn(bomb, bomb_nw)
        self.spawn(other, other_nw)
        self.wait_ssh(self.BOMB)
        self.wait_ssh(self.OTHER)
        attrs = self.container(bomb)
        self.assertEqual(self.PIDS, attrs['HostConfig']['PidsLimit'])
        self.assertEqual(1024, self.container(other)['HostConfig'][
            'PidsLimit'])
        pids = cgroup_dir(attrs['State']['Pid'], 'pids')
        cpu = cgroup_dir(attrs['State']['Pid'], 'cpuacct')
        self.assertEqual(str(self.PIDS), read(os.path.join(pids, 'pids.max')))

        self.ssh(self.BOMB, 'sh', '-c',
                 "setsid perl -e 'fork while 1' </dev/null >/dev/null "
                 "2>&1 &")
        self._wait_for_refused_forks(pids)
        samples, cpu_used, window = self._sample(pids, cpu)

        answers = [round(took, 2) for took, _rc, _err, _n in samples]
        failed = [(err, took) for took, rc, err, _n in samples if rc]
        self.assertEqual([], failed, 'B did not answer: %s' % failed)
        self.assertLess(max(answers), self.ANSWER_WITHIN,
                        'seconds until B ran true: %s' % answers)
        counts = [n for _took, _rc, _err, n in samples]
        # A stayed at its limit the whole time: the bomb was real
        self.assertEqual([self.PIDS] * len(counts), counts)
        # B was asked throughout (each answer took < ANSWER_WITHIN)
        self.assertGreaterEqual(len(samples), self.WINDOW / self.ANSWER_WITHIN)
        # and it had no more than its one vCPU
        self.assertLess(cpu_used, 1.1 * window)
        base.record_timing('fork_bomb_neighbour_ssh_true_max', max(answers))
        base.record_timing('fork_bomb_cpu_seconds_per_second',
                           cpu_used / window)

        start = time.monotonic()
        self.driver.destroy(self.ctx, bomb, bomb_nw)
        base.record_timing('fork_bomb_destroy', time.monotonic() - start)
        self.assertEqual([], self.docker.containers.list(
            all=True, filters={'name': 'nova-%s' % bomb.uuid}))
        self.assertFalse(os.path.exists(pids))
        self.ssh(self.OTHER, 'true')

    def _wait_for_refused_forks(self, pids, timeout=10):
        """Until the kernel refused A a fork (pids.events: max N > 0)."""
        deadline = time.monotonic() + timeout
        while True:
            events = dict(line.split() for line in read(
                os.path.join(pids, 'pids.events')).splitlines())
            if int(events.get('max', 0)) > 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError('the bomb never reached the limit '
                                     '(pids.current %s)' % read(os.path.join(
                                         pids, 'pids.current')))
            time.sleep(0.05)

    def _sample(self, pids, cpu):
        """(seconds to run true on B, rc, stderr, A's tasks) every EVERY s.

        Also A's CPU seconds over the window, and the window's length.
        """
        samples = []
        cpu_before = cpu_seconds(cpu)
        began = time.monotonic()
        while time.monotonic() - began < self.WINDOW:
            tick = time.monotonic()
            r = self.ssh(self.OTHER, 'true', check=False)
            took = time.monotonic() - tick
            samples.append((took, r.returncode, r.stderr.strip(), int(read(
                os.path.join(pids, 'pids.current')))))
            time.sleep(max(0.0, self.EVERY - (time.monotonic() - tick)))
        window = time.monotonic() - began
        return samples, cpu_seconds(cpu) - cpu_before, window


class TestDiskLimit(base.DriverTestCase):
    """overlay2 over XFS with project quotas: writing past root_gb fails.

    A private engine whose data root is a loop-mounted XFS with pquota.
    Skipped where the kernel cannot mount XFS with project quotas.
    """

    ENGINE = {}
    ENGINE_XFS = ('pquota',)
    ADDRESS = '198.51.100.84'

    def test_writing_past_root_gb_fails(self):
        self.conf.config(group='docker', disk_limit='required')
        self.driver.init_host(self.host)
        inst, nw = self.make_instance(address=self.ADDRESS, root_gb=1)
        self.spawn(inst, nw)
        self.wait_ssh(self.ADDRESS)
        self.assertEqual({'size': '1G'},
                         self.container(inst)['HostConfig']['StorageOpt'])
        r = self.ssh(self.ADDRESS, 'sh', '-c',
                     'dd if=/dev/zero of=/fill bs=1M count=1100 2>&1',
                     check=False)
        self.assertNotEqual(0, r.returncode, r.stdout)
        self.assertRegex(r.stdout, 'No space left on device|'
                                   'Disk quota exceeded')
        size = int(self.ssh(self.ADDRESS, 'stat', '-c', '%s',
                            '/fill').stdout)
        self.assertLessEqual(size, 1024 ** 3)


class TestDiskLimitUnavailable(base.DriverTestCase):
    """The same engine on an XFS mounted without project quotas."""

    ENGINE = {}
    ENGINE_XFS = ()
    ADDRESS = '198.51.100.86'

    def test_required_refuses_the_engine(self):
        self.conf.config(group='docker', disk_limit='required')
        e = self.assertRaises(docker_driver.DiskLimitUnavailable,
                              self.driver.init_host, self.host)
        self.assertIn('is mounted without project quotas (mount it with -o '
                      'pquota)', str(e))

    def test_auto_spawns_without_and_the_engine_agrees(self):
        log = self.useFixture(fixtures.FakeLogger(name=LOG_NAME))
        self.driver.init_host(self.host)
        self.assertIn('Instances get no disk limit', log.output)
        self.assertIn('mounted without project quotas', log.output)
        inst, nw = self.make_instance(address=self.ADDRESS)
        self.spawn(inst, nw)
        self.assertFalse(self.container(inst)['HostConfig'].get('StorageOpt'))
        # the engine refuses the limit there, as init_host told from the
        # mount options, with the message the driver recognises
        image = '%s/%s:latest' % (self.repository, self.image_id)
        e = self.assertRaises(docker.errors.APIError,
                              self.docker.containers.create, image,
                              storage_opt={'size': '1G'})
        self.assertTrue(hostinfo.is_disk_limit_refusal(str(e)), str(e))

    def test_auto_learns_it_from_the_engine_when_the_mount_is_unseen(self):
        """nova-compute in another mount namespace (e.g. a container)."""
        self.useFixture(fixtures.MockPatch(
            'nova_docker_vmct.hostinfo.read_mount_of', lambda path: None))
        log = self.useFixture(fixtures.FakeLogger(name=LOG_NAME))
        self.driver.init_host(self.host)
        self.assertIn('disk limit: root_gb', log.output)
        inst, nw = self.make_instance(address=self.ADDRESS)
        self.spawn(inst, nw)
        self.assertIn('the engine refused one', log.output)
        self.assertFalse(self.container(inst)['HostConfig'].get('StorageOpt'))
        self.wait_ssh(self.ADDRESS)


class TestUsernsRemap(base.DriverTestCase):
    """The driver's containers on an engine that remaps user namespaces."""

    ENGINE = {'userns-remap': 'default'}
    ADDRESS = '198.51.100.88'

    def test_instance_root_is_unprivileged_on_the_host(self):
        log = self.useFixture(fixtures.FakeLogger(name=LOG_NAME))
        self.driver.init_host(self.host)
        self.assertIn('user namespaces remapped: yes', log.output)
        self.assertNotIn('does not remap', log.output)
        inst, nw = self.make_instance(
            address=self.ADDRESS, hostname='userns-88',
            v6=('fd00:88::/64', 'fd00:88::88', 'fd00:88::1'))
        self.spawn(inst, nw)
        # the injected key is one sshd accepts (StrictModes: root's, 0600)
        self.wait_ssh(self.ADDRESS)
        out = self.ssh(self.ADDRESS, 'sh', '-c',
                       'stat -c "%u %g %a" /root/.ssh/authorized_keys; '
                       'ip -6 -o addr show dev eth0 scope global; '
                       'ip -6 route show default').stdout
        self.assertIn('0 0 600', out)
        # Docker's IPv6 sysctls applied in the remapped container's netns
        self.assertIn('fd00:88::88/64', out)
        self.assertIn('default via fd00:88::1 dev eth0', out)

        # on the host, root of the instance is the remapped uid
        attrs = self.container(inst)
        pid = attrs['State']['Pid']
        inside, outside, count = read('/proc/%d/uid_map' % pid).split()
        self.assertEqual('0', inside)
        self.assertGreater(int(outside), 0)
        status = dict(line.split(':', 1) for line in
                      read('/proc/%d/status' % pid).splitlines())
        self.assertEqual(outside, status['Uid'].split()[0])
        upper = attrs['GraphDriver']['Data']['UpperDir']
        self.assertEqual(int(outside), os.stat(os.path.join(
            upper, 'root', '.ssh', 'authorized_keys')).st_uid)


class TestSuspendRescueUnderUsernsRemap(test_suspend_rescue.TestSuspendRescue):
    """Freezing and rescue (an overlay volume of the instance's layers)."""

    ENGINE = {'userns-remap': 'default'}
