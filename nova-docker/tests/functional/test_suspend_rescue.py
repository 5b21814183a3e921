"""Suspend/resume and rescue/unrescue against the real engine.

The driver is called in the order Nova's compute manager calls it (rescue:
power_off, then rescue), with the instance states Nova sets meanwhile.
"""

import os
import shlex
import time

import docker.errors

from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states

from tests.functional import base

COUNTER = ('i=0; while :; do i=$((i+1)); echo $i > /tmp/count; '
           'sleep 0.05; done')


class TestSuspendRescue(base.DriverTestCase):

    ADDRESS = '198.51.100.40'

    def setUp(self):
        super().setUp()
        self.inst, self.nw = self.make_instance(address=self.ADDRESS,
                                                mac='fa:16:3e:00:00:40',
                                                vm_state=vm_states.ACTIVE)
        self.spawn(self.inst, self.nw)
        self.wait_ssh(self.ADDRESS)

    def _count(self, pid):
        """The workload's counter, read from the host (works while frozen)."""
        with open('/proc/%d/root/tmp/count' % pid) as f:
            text = f.read().strip()
        return int(text) if text else 0

    def _counting(self, pid, above, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self._count(pid)
            except (OSError, ValueError):
                value = 0
            if value > above:
                return value
            if time.monotonic() > deadline:
                raise AssertionError('counter stuck at %d' % value)
            time.sleep(0.05)

    def test_suspend_freezes_processes_and_resume_continues_them(self):
        self.ssh(self.ADDRESS, 'sh', '-c',
                 'setsid sh -c %s </dev/null >/dev/null 2>&1 &'
                 % shlex.quote(COUNTER))
        before = self.container(self.inst)['State']
        pid = before['Pid']
        self._counting(pid, 2)

        self.inst.task_state = task_states.SUSPENDING
        start = time.monotonic()
        self.driver.suspend(self.ctx, self.inst)
        base.record_timing('suspend', time.monotonic() - start)
        self.inst.vm_state = vm_states.SUSPENDED
        self.inst.task_state = None
        self.assertEqual(power_state.SUSPENDED,
                         self.driver.get_info(self.inst).state)
        self.assertTrue(self.container(self.inst)['State']['Paused'])
        frozen = self._count(pid)
        time.sleep(0.5)   # ten counter periods
        self.assertEqual(frozen, self._count(pid))
        # sshd is frozen too: the kernel accepts, nobody answers
        self.assertIsNone(self.net.ssh_banner(self.ADDRESS, timeout=1))

        self.inst.task_state = task_states.RESUMING
        start = time.monotonic()
        self.driver.resume(self.ctx, self.inst, self.nw)
        base.record_timing('resume', time.monotonic() - start)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        # the same processes go on where they stopped
        self._counting(pid, frozen)
        after = self.container(self.inst)['State']
        self.assertEqual((before['Pid'], before['StartedAt']),
                         (after['Pid'], after['StartedAt']))
        self.assertEqual('ok', self.ssh(self.ADDRESS, 'echo',
                                        'ok').stdout.strip())

    def test_rescue_sees_the_instance_root_and_unrescue_keeps_changes(self):
        self.ssh(self.ADDRESS, 'sh', '-c', 'echo before > /root/marker')
        own_pid = self.container(self.inst)['State']['Pid']

        # Nova: power off, then the driver's rescue, from the same image
        self.inst.task_state = task_states.RESCUING
        start = time.monotonic()
        self.driver.power_off(self.inst, timeout=0)
        self.driver.rescue(self.ctx, self.inst, self.nw,
                           base.helpers.image_meta(self.image_id), 'pw',
                           None, None)
        base.record_timing('rescue (incl. power off)',
                           time.monotonic() - start)
        self.inst.vm_state = vm_states.RESCUED
        self.inst.task_state = None
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        rescue = self.docker.api.inspect_container(
            'nova-%s-rescue' % self.inst.uuid)
        self.assertNotEqual(own_pid, rescue['State']['Pid'])
        self.assertFalse(self.container(self.inst)['State']['Running'])
        [volume] = [m['Name'] for m in rescue['Mounts']]

        # same address, same key; its own root, the instance's at the mount
        self.wait_ssh(self.ADDRESS)
        out = self.ssh(self.ADDRESS, 'sh', '-c',
                       'test -e /root/marker && echo own-marker; '
                       'cat /mnt/instance/root/marker; '
                       'echo fixed > /mnt/instance/root/fixed').stdout
        self.assertEqual('before', out.strip())
        self.assertIn(self.inst.uuid, self.driver.list_instance_uuids())
        self.assertEqual(1, len(self.driver.list_instance_uuids()))

        self.inst.task_state = task_states.UNRESCUING
        start = time.monotonic()
        self.driver.unrescue(self.ctx, self.inst)
        base.record_timing('unrescue', time.monotonic() - start)
        self.inst.vm_state = vm_states.ACTIVE
        self.inst.task_state = None
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        self.wait_ssh(self.ADDRESS)
        self.assertEqual(['before', 'fixed'], self.ssh(
            self.ADDRESS, 'cat', '/root/marker',
            '/root/fixed').stdout.split())
        self.assertRaises(docker.errors.NotFound,
                          self.docker.api.inspect_container,
                          'nova-%s-rescue' % self.inst.uuid)
        self.assertRaises(docker.errors.NotFound,
                          self.docker.api.inspect_volume, volume)
        self.assertTrue(os.path.exists('/sys/class/net/%s'
                                       % self.nw[0]['devname']))
