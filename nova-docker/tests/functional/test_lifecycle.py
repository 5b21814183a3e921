"""Spawn, reach, reboot, stop/start and delete through the driver."""

import time
import uuid

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
        t_ssh = self.wait_ssh('198.51.100.10')
        base.record_timing('spawn_return_to_ssh', t_ssh)
        self.assertEqual('vmct-spawn',
                         self.ssh('198.51.100.10', 'hostname').stdout.strip())
        link = self.ssh('198.51.100.10', 'ip', '-o', 'link', 'show',
                        'eth0').stdout
        self.assertIn('fa:16:3e:00:00:10', link)
        self.assertIn('mtu 1400', link)
        route = self.ssh('198.51.100.10', 'ip', 'route', 'show',
                         'default').stdout
        self.assertIn('via 198.51.100.1 dev eth0', route)
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


class TestRefusedPort(base.DriverTestCase):

    def test_a_port_bound_for_sriov_is_refused_before_any_container(self):
        """Nova aborts the build with InvalidInput's text as the fault."""
        inst, nw = self.make_instance()
        nw[0]['vnic_type'] = 'direct'
        e = self.assertRaises(exception.InvalidInput, self.spawn, inst, nw)
        self.assertIn('port %s has vnic_type direct' % nw[0]['id'], str(e))
        self.assertEqual([], self.docker.containers.list(
            all=True, filters={'name': 'nova-%s' % inst.uuid}))
        self.assertFalse(self.host_dev_exists(nw))
        self.assertEqual([self.net.veth], self.net.bridge_ports())


class TestRunningInstance(base.DriverTestCase):
    """One instance per test, booted in setUp."""

    ADDRESS = '198.51.100.20'

    def setUp(self):
        super().setUp()
        self.inst, self.nw = self.make_instance(address=self.ADDRESS,
                                                mac='fa:16:3e:00:00:20')
        self.spawn(self.inst, self.nw)
        self.wait_ssh(self.ADDRESS)

    def _state(self):
        return self.container(self.inst)['State']

    def _kill_signals(self, since):
        """Signals Docker sent the container since ``since`` (events)."""
        events = self.docker.events(
            since=since, until=time.time() + 0.01, decode=True,
            filters={'container': 'nova-%s' % self.inst.uuid,
                     'event': 'kill'})
        return [e['Actor']['Attributes'].get('signal') for e in events]

    def _assert_rebooted(self, before, kind):
        after = self._state()
        self.assertTrue(after['Running'])
        self.assertNotEqual(before['StartedAt'], after['StartedAt'])
        self.assertNotEqual(before['Pid'], after['Pid'])
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        t = self.wait_ssh(self.ADDRESS)
        base.record_timing('reboot_%s_return_to_ssh' % kind, t)
        # the network was plugged again into the new netns
        self.assertTrue(self.host_dev_exists(self.nw))
        self.assertIn('fa:16:3e:00:00:20', self.ssh(
            self.ADDRESS, 'ip', '-o', 'link', 'show', 'eth0').stdout)

    def test_soft_reboot(self):
        before = self._state()
        since = time.time() - 0.01
        start = time.monotonic()
        self.driver.reboot(self.ctx, self.inst, self.nw, 'SOFT')
        base.record_timing('reboot_soft', time.monotonic() - start)
        # sshd stops on SIGTERM: a graceful stop, never a kill
        self.assertEqual(['15'], self._kill_signals(since))
        self._assert_rebooted(before, 'soft')

    def test_hard_reboot(self):
        before = self._state()
        since = time.time() - 0.01
        start = time.monotonic()
        self.driver.reboot(self.ctx, self.inst, self.nw, 'HARD')
        base.record_timing('reboot_hard', time.monotonic() - start)
        self.assertEqual(['9'], self._kill_signals(since))   # SIGKILL only
        self._assert_rebooted(before, 'hard')

    def test_soft_reboot_of_stopped_instance_starts_it(self):
        self.driver.power_off(self.inst, timeout=0)
        self.driver.reboot(self.ctx, self.inst, self.nw, 'SOFT')
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        self.wait_ssh(self.ADDRESS)

    def test_power_off_on(self):
        start = time.monotonic()
        self.driver.power_off(self.inst, timeout=5)
        base.record_timing('power_off_graceful', time.monotonic() - start)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(self.inst).state)
        self.assertFalse(self.host_dev_exists(self.nw))
        self.assertFalse(self.net.tcp_open(self.ADDRESS))
        start = time.monotonic()
        self.driver.power_on(self.ctx, self.inst, self.nw)
        base.record_timing('power_on', time.monotonic() - start)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        self.wait_ssh(self.ADDRESS)
        # power_on of a running instance only makes sure it is plugged
        self.driver.power_on(self.ctx, self.inst, self.nw)
        self.wait_ssh(self.ADDRESS)

    def test_power_off_forced(self):
        start = time.monotonic()
        self.driver.power_off(self.inst, timeout=0)
        base.record_timing('power_off_forced', time.monotonic() - start)
        self.assertEqual(137, self._state()['ExitCode'])
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(self.inst).state)

    def _console_showing(self, line, timeout=10):
        """The console output once it shows ``line``, or as it is then.

        Docker delivers a container's output to its log asynchronously:
        under load, sshd answers before its start-up line is in the log.
        """
        deadline = time.monotonic() + timeout
        while True:
            out = self.driver.get_console_output(self.ctx, self.inst)
            if line in out or time.monotonic() > deadline:
                return out
            time.sleep(0.1)

    def test_console_output_is_current_boot_only(self):
        first = self._console_showing(b'Server listening on 0.0.0.0')
        self.assertIsInstance(first, bytes)
        self.assertEqual(1, first.count(b'Server listening on 0.0.0.0'))
        self.driver.reboot(self.ctx, self.inst, self.nw, 'HARD')
        self.wait_ssh(self.ADDRESS)
        second = self._console_showing(b'Server listening on 0.0.0.0')
        self.assertEqual(1, second.count(b'Server listening on 0.0.0.0'))
        everything = self.docker.api.logs('nova-%s' % self.inst.uuid)
        self.assertEqual(2, everything.count(b'Server listening on 0.0.0.0'))

    def test_pause_unpause(self):
        self.driver.pause(self.inst)
        self.assertEqual(power_state.PAUSED,
                         self.driver.get_info(self.inst).state)
        # the kernel still accepts connections, but frozen sshd says nothing
        self.assertIsNone(self.net.ssh_banner(self.ADDRESS, timeout=1))
        self.driver.unpause(self.inst)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        self.assertTrue(self.net.ssh_banner(self.ADDRESS).startswith(
            'SSH-2.0-'))

    def test_plug_vifs_replugs_lost_interface(self):
        # somebody deleted the host end: plug_vifs (init_host) restores it
        base.run('ip', 'link', 'del', self.nw[0]['devname'])
        self.assertFalse(self.net.tcp_open(self.ADDRESS, timeout=0.3))
        self.driver.plug_vifs(self.inst, self.nw)
        self.wait_ssh(self.ADDRESS)


class TestSpawnVariants(base.DriverTestCase):

    def test_second_spawn_uses_cached_image(self):
        inst1, nw1 = self.make_instance(address='198.51.100.31',
                                        mac='fa:16:3e:00:00:31')
        inst2, nw2 = self.make_instance(address='198.51.100.32',
                                        mac='fa:16:3e:00:00:32')
        self.spawn(inst1, nw1)
        t = self.spawn(inst2, nw2)
        base.record_timing('spawn_cached_image', t)
        self.assertEqual([self.image_id], self.fetches)
        self.wait_ssh('198.51.100.31')
        self.wait_ssh('198.51.100.32')
        # the two instances reach each other over the bridge
        banner = self.ssh('198.51.100.31', 'bash', '-c',
                          'exec 3<>/dev/tcp/198.51.100.32/22; head -c 8 <&3')
        self.assertEqual('SSH-2.0-', banner.stdout)

    def test_spawn_powered_off(self):
        inst, nw = self.make_instance(address='198.51.100.33')
        self.spawn(inst, nw, power_on=False)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(inst).state)
        self.assertFalse(self.host_dev_exists(nw))
        self.driver.power_on(self.ctx, inst, nw)
        self.wait_ssh('198.51.100.33')

    def test_spawn_refuses_non_docker_image_and_leaves_nothing(self):
        """ComputeResourcesUnavailable: Nova reschedules it to another host."""
        inst, nw = self.make_instance(address='198.51.100.34')
        image = base.helpers.image_meta(container_format='bare')
        self.assertRaises(exception.ComputeResourcesUnavailable, self.spawn,
                          inst, nw, image)
        self.assertRaises(exception.InstanceNotFound,
                          self.driver.get_info, inst)
        self.assertEqual([], self.fetches)

    def test_failed_start_removes_container_and_veth(self):
        inst, nw = self.make_instance(address='198.51.100.35')
        image = base.helpers.image_meta(self.image_id,
                                        os_command_line='/bin/false')
        self.assertRaises(exception.InstancePowerOnFailure, self.spawn,
                          inst, nw, image)
        self.assertRaises(exception.InstanceNotFound,
                          self.driver.get_info, inst)
        self.assertFalse(self.host_dev_exists(nw))
        self.assertEqual([self.net.veth], self.net.bridge_ports())

    def test_key_and_hostname_injected(self):
        inst, nw = self.make_instance(address='198.51.100.36',
                                      hostname='web-36',
                                      dns=['198.51.100.53'],
                                      v6=('fd00:51::/64', 'fd00:51::36',
                                          'fd00:51::1'))
        self.spawn(inst, nw)
        self.wait_ssh('198.51.100.36')
        out = self.ssh('198.51.100.36', 'sh', '-c',
                       'hostname; stat -c %a /root/.ssh/authorized_keys; '
                       'cat /root/.ssh/authorized_keys; '
                       'grep ^nameserver /etc/resolv.conf').stdout.split('\n')
        self.assertEqual('web-36', out[0])
        self.assertEqual('600', out[1])
        self.assertEqual(self.key_data.strip(), out[2].strip())
        self.assertEqual('nameserver 198.51.100.53', out[3].strip())
        v6 = self.ssh('198.51.100.36', 'sh', '-c',
                      'ip -6 -o addr show dev eth0 scope global; '
                      'ip -6 route show default').stdout
        self.assertIn('fd00:51::36/64', v6)
        self.assertIn('default via fd00:51::1 dev eth0', v6)


class TestSnapshot(base.DriverTestCase):
    """docker commit + docker save of a running instance (Glance stubbed)."""

    def test_snapshot_uploads_a_loadable_docker_save_tarball(self):
        import json
        import tarfile

        from nova.image import glance

        inst, nw = self.make_instance(address='198.51.100.70')
        self.spawn(inst, nw)
        self.wait_ssh('198.51.100.70')
        self.ssh('198.51.100.70', 'sh', '-c', 'echo snap > /root/marker')
        uploads = []
        tmp = self.tmp

        class GlanceStub(object):
            def update(self, context, image_id, metadata, data):
                path = '%s/upload-%s.tar' % (tmp, image_id)
                with open(path, 'wb') as f:
                    f.write(data.read())
                uploads.append((image_id, metadata, path))

        self.assertTrue(hasattr(glance, 'API'))   # the real class, replaced
        self.patch(glance, 'API', GlanceStub)
        snap_id = str(uuid.uuid4())
        states = []
        self.driver.snapshot(self.ctx, inst, snap_id,
                             lambda **kw: states.append(kw['task_state']))
        self.assertEqual(['image_pending_upload', 'image_uploading'], states)
        image_id, metadata, path = uploads[0]
        self.assertEqual(snap_id, image_id)
        self.assertEqual('docker', metadata['container_format'])
        with tarfile.open(path) as tar:
            manifest = json.load(tar.extractfile('manifest.json'))
        self.assertEqual(1, len(manifest))
        self.assertFalse(manifest[0].get('RepoTags'))   # saved by id
        # the committed image is not left in the engine
        config_id = manifest[0]['Config'].split('/')[-1].replace(
            '.json', '')
        self.assertRaises(base.docker.errors.ImageNotFound,
                          self.docker.images.get, 'sha256:' + config_id)
        # the instance kept running (commit pauses only briefly)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(inst).state)
        # boot the snapshot: the marker file is in it
        self.fetches.clear()
        self.driver.image_fetch = lambda ctx, i: base.file_chunks(path)
        inst2, nw2 = self.make_instance(address='198.51.100.71',
                                        mac='fa:16:3e:00:00:71')
        self.spawn(inst2, nw2, image=base.helpers.image_meta(snap_id))
        self.addCleanup(self.driver.image_cache.remove, snap_id)
        self.wait_ssh('198.51.100.71')
        self.assertEqual('snap', self.ssh('198.51.100.71', 'cat',
                                          '/root/marker').stdout.strip())
        # the loaded snapshot carries only the cache tag
        self.assertEqual(['%s/%s:latest' % (self.repository, snap_id)],
                         self.docker.images.get(
                             '%s/%s:latest' % (self.repository,
                                               snap_id)).tags)
