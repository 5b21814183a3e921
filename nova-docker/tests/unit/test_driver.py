import contextlib
import json
import logging
import os
import time
import uuid

import docker.errors
import fixtures
from oslo_config import fixture as config_fixture
import oslo_messaging
import testtools

from nova.compute import power_state
from nova.compute import provider_tree
from nova.compute import task_states
from nova.compute import vm_states
import nova.conf
from nova import context as nova_context
from nova import exception
from nova_docker_vmct import compat
from nova_docker_vmct import driver as docker_driver
from nova_docker_vmct import hostinfo
import os_resource_classes as orc

from tests import helpers
from tests.unit import fake_docker
from tests.unit import fake_links

CONF = nova.conf.CONF


def api_calls(client):
    """The names of the engine calls, in order."""
    return [c[0] for c in client.api.calls]


class RecordingVirtAPI(object):
    def __init__(self, clock):
        self.waits = []
        self.timeout = False
        self.clock = clock
        self.arrival = 0.0  # seconds after entering the wait: the events

    @contextlib.contextmanager
    def wait_for_instance_event(self, instance, event_names, timeout=300,
                                error_callback=None):
        self.waits.append((list(event_names), timeout))
        began = self.clock()
        yield
        if self.timeout and event_names:
            self.clock.advance(timeout)
            raise compat.InstanceEventTimeout()
        self.clock.until(began + self.arrival)


class DriverTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(config_fixture.Config(CONF))
        self.conf.config(host='unit-host', vif_plugging_timeout=300,
                         instances_path=self.useFixture(
                             fixtures.TempDir()).path)
        self.client = fake_docker.FakeDockerClient()
        self.clock = helpers.Clock()
        self.virtapi = RecordingVirtAPI(self.clock)
        self.driver = docker_driver.DockerDriver(self.virtapi,
                                                 client=self.client)
        self.driver.clock = self.clock
        self.events = self.useFixture(helpers.ActionEvents())
        self.driver._plugger, self.links, self.wiring = fake_links.plugger(
            CONF.docker)
        self.devices = self.links.devices
        self.driver._background = lambda fn, *args: fn(*args)
        self.fetched = []

        self.saved = fake_docker.saved_image()

        def fetch(ctx, image_id):
            self.fetched.append(image_id)
            half = len(self.saved.tarball) // 2
            return iter([self.saved.tarball[:half],
                         self.saved.tarball[half:]])
        self.driver.image_fetch = fetch
        self.ctx = helpers.context()

    @property
    def ran(self):
        """The names of the plugging calls, in order."""
        return self.links.names()

    def make(self, active=True, key=True, **kw):
        vif = helpers.vif(port_id=str(uuid.uuid4()), active=active)
        inst = helpers.instance(self.ctx, network_info=[vif],
                                key_data='ssh-ed25519 AAAA test' if key
                                else None, **kw)
        return inst, inst.get_network_info()

    def spawn(self, inst, nw, image=None, power_on=True):
        self.driver.spawn(self.ctx, inst, image or helpers.image_meta(
            'f0f0f0f0-0000-0000-0000-000000000001'), [], None, {}, nw,
            power_on=power_on)

    def state(self, inst):
        return self.client.api.store['nova-%s' % inst.uuid]['State']


class TestSpawn(DriverTestCase):

    def test_a_port_bound_for_sriov_is_refused_before_any_container(self):
        inst, nw = self.make()
        nw[0]['vnic_type'] = 'direct'
        e = self.assertRaises(exception.InvalidInput, self.spawn, inst, nw)
        self.assertIn('has vnic_type direct', str(e))
        self.assertEqual({}, self.client.api.store)
        self.assertEqual([], self.ran)

    def test_spawn_creates_starts_plugs_and_waits(self):
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        c = self.client.api.store['nova-%s' % inst.uuid]
        self.assertEqual('running', c['State']['Status'])
        # by content: a tag moved later changes nothing of the instance
        self.assertEqual(self.saved.content_id, c['Config']['Image'])
        self.assertEqual(self.saved.content_id, self.client.images.tags[
            'glance/f0f0f0f0-0000-0000-0000-000000000001:latest'])
        self.assertEqual('none', c['HostConfig']['network_mode'])
        self.assertEqual((0o600, b'ssh-ed25519 AAAA test\n'),
                         c['files']['root/.ssh/authorized_keys'])
        self.assertEqual([([('network-vif-plugged', nw[0]['id'])], 300)],
                         self.virtapi.waits)
        netns = c['NetworkSettings']['SandboxKey']
        peer = ('vns' + nw[0]['id'])[:14]
        # the host end was plugged before the start, the peer moved into the
        # netns Docker names after it, then configured there
        self.assertEqual(['ovsdb.get', 'os_vif.unplug', 'create_veth_pair',
                          'os_vif.plug', 'move_to_netns',
                          'configure_in_netns', 'announce'], self.ran)
        self.assertLess(api_calls(self.client).index('create'),
                        api_calls(self.client).index('start'))
        self.assertIn(('move_to_netns', peer, netns), self.links.calls)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(inst).state)
        # gratuitous ARP from inside the netns, once the ports are wired
        self.assertEqual(('announce', netns, 'eth0', nw[0]['address'],
                          ['198.51.100.10']), self.links.calls[-1])

    def test_active_ports_and_zero_timeout_do_not_wait(self):
        inst, nw = self.make(active=True)
        self.spawn(inst, nw)
        self.conf.config(vif_plugging_timeout=0)
        inst2, nw2 = self.make(active=False)
        self.spawn(inst2, nw2)
        self.assertEqual([([], 300), ([], 0)], self.virtapi.waits)

    def test_image_loaded_once_per_glance_id(self):
        for _ in range(2):
            inst, nw = self.make()
            self.spawn(inst, nw)
        self.assertEqual(['f0f0f0f0-0000-0000-0000-000000000001'],
                         self.fetched)
        self.assertEqual(1, len(self.client.images.loads))

    def test_ipv6_ports_turn_ipv6_on_in_the_netns(self):
        inst, nw = self.make()
        self.spawn(inst, nw)
        self.assertNotIn('sysctls', self.client.api.store[
            'nova-%s' % inst.uuid]['HostConfig'])
        vif = helpers.vif(v6=('fd00::/64', 'fd00::5', 'fd00::1'))
        inst = helpers.instance(self.ctx, network_info=[vif])
        self.spawn(inst, inst.get_network_info())
        self.assertEqual('0', self.client.api.store['nova-%s' % inst.uuid][
            'HostConfig']['sysctls']['net.ipv6.conf.default.disable_ipv6'])

    def test_no_key_no_archive(self):
        inst, nw = self.make(key=False)
        self.spawn(inst, nw)
        self.assertEqual({}, self.client.api.store[
            'nova-%s' % inst.uuid]['files'])

    def test_power_on_false_leaves_it_created_unplugged(self):
        inst, nw = self.make(active=False)
        self.spawn(inst, nw, power_on=False)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(inst).state)
        self.assertEqual([], self.ran)
        self.assertEqual([], self.virtapi.waits)

    def test_vif_timeout_fatal_cleans_up(self):
        self.virtapi.timeout = True
        inst, nw = self.make(active=False)
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.spawn, inst, nw)
        self.assertNotIn('nova-%s' % inst.uuid, self.client.api.store)
        self.assertEqual(set(), self.devices)

    def test_vif_timeout_not_fatal(self):
        self.conf.config(vif_plugging_is_fatal=False)
        self.virtapi.timeout = True
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(inst).state)

    def test_container_exiting_at_once_fails_spawn_and_cleans_up(self):
        self.client.api.exit_on_start = True
        inst, nw = self.make()
        e = self.assertRaises(exception.InstancePowerOnFailure,
                              self.spawn, inst, nw)
        self.assertIn('exited at once', str(e))
        self.assertNotIn('nova-%s' % inst.uuid, self.client.api.store)

    def test_container_exiting_during_plug_is_a_power_on_failure(self):
        inst, nw = self.make()
        api = self.client.api

        def configure(*args):
            # the process dies while its interfaces are being set up in it
            api._down(api.store['nova-%s' % inst.uuid], 1)
            raise RuntimeError('RTNETLINK answers: No such process')
        self.links.configure_in_netns = configure
        e = self.assertRaises(exception.InstancePowerOnFailure,
                              self.spawn, inst, nw)
        self.assertIn('during network setup', str(e))
        self.assertNotIn('nova-%s' % inst.uuid, api.store)

    def test_container_exiting_once_plugged_is_a_power_on_failure(self):
        inst, nw = self.make()
        api = self.client.api
        configure = self.links.configure_in_netns

        def configure_then_exit(*args):
            configure(*args)
            # /bin/false: it ran when docker start returned, not now
            api._down(api.store['nova-%s' % inst.uuid], 1)
        self.links.configure_in_netns = configure_then_exit
        e = self.assertRaises(exception.InstancePowerOnFailure,
                              self.spawn, inst, nw)
        self.assertIn('during network setup (code 1)', str(e))
        self.assertNotIn('nova-%s' % inst.uuid, api.store)

    def test_plug_error_of_running_container_is_reraised(self):
        inst, nw = self.make()

        self.links.fail['os_vif.plug'] = RuntimeError('ovsdb: timeout')
        e = self.assertRaises(RuntimeError, self.spawn, inst, nw)
        self.assertIn('ovsdb: timeout', str(e))

    def test_wrong_container_format_is_rescheduled(self):
        """Nova reschedules ComputeResourcesUnavailable.

        Another host may run the image; ImageUnacceptable would end the
        build in ERROR.
        """
        inst, nw = self.make()
        e = self.assertRaises(exception.ComputeResourcesUnavailable,
                              self.spawn, inst, nw,
                              helpers.image_meta(container_format='bare'))
        self.assertIn("container_format 'bare'", str(e))
        self.assertNotIsInstance(e, exception.ImageUnacceptable)
        self.assertEqual({}, self.client.api.store)
        self.assertEqual([], self.fetched)

    def test_empty_tarball(self):
        self.driver.image_fetch = lambda ctx, image_id: [
            fake_docker.tarball([('manifest.json', b'[]')])]
        inst, nw = self.make()
        e = self.assertRaises(exception.ImageUnacceptable, self.spawn,
                              inst, nw)
        self.assertIn('found no image', str(e))
        self.assertEqual({}, self.client.api.store)

    def test_refused_tarball_is_unacceptable_and_creates_nothing(self):
        self.driver.image_fetch = lambda ctx, image_id: [
            fake_docker.tarball([('manifest.json', ('->', 'evil.json'))])]
        inst, nw = self.make()
        e = self.assertRaises(exception.ImageUnacceptable, self.spawn,
                              inst, nw)
        self.assertIn('entry manifest.json must be a regular file; it is a '
                      'symlink to evil.json', str(e))
        self.assertEqual({}, self.client.api.store)
        self.assertEqual([], self.client.images.loads)

    def test_os_command_line_overrides_cmd(self):
        inst, nw = self.make()
        self.spawn(inst, nw, image=helpers.image_meta(
            os_command_line='/usr/sbin/sshd -D -p 2222'))
        c = self.client.api.store['nova-%s' % inst.uuid]
        self.assertEqual(['/usr/sbin/sshd', '-D', '-p', '2222'],
                         c['HostConfig']['command'])


class TestSpawnSteps(DriverTestCase):
    """Each spawn step timed (log line) and an instance action event."""

    BOOT = [('docker_image_cache', 'Success'),
            ('docker_network_info', 'Success'), ('docker_create', 'Success'),
            ('docker_plug_host', 'Success'), ('docker_start', 'Success'),
            ('docker_plug_vifs', 'Success'),
            ('docker_wait_vif_plugged', 'Success')]

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct', level=logging.INFO))
        plugger = self.driver._plugger
        for target, attr, seconds in [
                (self.driver.image_cache, 'ensure', 0.01),
                (self.client.containers, 'create', 0.25),
                (self.client.api, 'put_archive', 0.15),
                (self.client.api, 'start', 0.35),
                (plugger, 'plug_host_only', 0.1), (plugger, 'move_in', 0.2),
                (plugger, 'announce', 0.05)]:
            self.takes(target, attr, seconds)
        # the gratuitous ARP runs after the spawn, in the background
        self.background = []
        self.driver._background = lambda fn, *args: self.background.append(
            (fn, args))

    def takes(self, target, attr, seconds):
        call = getattr(target, attr)

        def timed(*args, **kwargs):
            self.clock.advance(seconds)
            return call(*args, **kwargs)
        self.useFixture(fixtures.MockPatchObject(target, attr, timed))

    def test_steps_in_the_log_line_and_as_events(self):
        # network-vif-plugged comes 2.75 s after the wait began, which was
        # before the host plug (0.1 s), start (0.35 s) and the move into the
        # netns (0.2 s): 2.1 s left to wait
        self.virtapi.arrival = 2.75
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        self.assertIn('Spawned container nova-%s in 3.16 s: image_cache '
                      '0.01, network_info 0.00, create 0.40, plug_host 0.10, start 0.35, '
                      'plug_vifs 0.20, wait_vif_plugged 2.10\n' % inst.uuid,
                      self.log.output)
        self.assertEqual([self.driver._plugger.announce],
                         [fn for fn, _ in self.background])
        self.assertEqual(self.BOOT, self.events.finished())
        created = [c for c in self.events.calls if c[0] == 'create']
        self.assertEqual({(self.ctx.request_id, inst.uuid, 'unit-host')},
                         {c[2:5] for c in created})

    def test_events_arrived_during_start_and_plug_leave_no_wait(self):
        self.virtapi.arrival = 0.5
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        self.assertIn('plug_vifs 0.20, wait_vif_plugged 0.00\n',
                      self.log.output)

    def test_failing_create_is_a_failed_event_and_cleaned_up(self):
        def put_archive(name, path, data):
            raise docker.errors.APIError('no space left on device')
        self.useFixture(fixtures.MockPatchObject(
            self.client.api, 'put_archive', put_archive))
        inst, nw = self.make()
        self.assertRaises(docker.errors.APIError, self.spawn, inst, nw)
        self.assertEqual([('docker_image_cache', 'Success'),
                          ('docker_network_info', 'Success'),
                          ('docker_create', 'Error')],
                         self.events.finished())
        self.assertNotIn('nova-%s' % inst.uuid, self.client.api.store)
        self.assertIn('Spawning container nova-%s failed after 0.26 s '
                      '(image_cache 0.01, network_info 0.00, create 0.25 failed); '
                      'removing it'
                      % inst.uuid, self.log.output)

    def test_fatal_vif_timeout_fails_the_wait_event(self):
        self.virtapi.timeout = True
        inst, nw = self.make(active=False)
        self.assertRaises(exception.VirtualInterfaceCreateException,
                          self.spawn, inst, nw)
        self.assertEqual(self.BOOT[:6] + [
            ('docker_wait_vif_plugged', 'Error')],
            self.events.finished())

    def test_vif_timeout_not_fatal_is_a_long_successful_wait(self):
        self.conf.config(vif_plugging_is_fatal=False)
        self.virtapi.timeout = True
        inst, nw = self.make(active=False)
        self.spawn(inst, nw)
        self.assertEqual(self.BOOT, self.events.finished())
        self.assertIn('wait_vif_plugged 300.00\n', self.log.output)

    def test_power_on_false_creates_only(self):
        inst, nw = self.make()
        self.spawn(inst, nw, power_on=False)
        self.assertEqual(self.BOOT[:3], self.events.finished())

    def test_spawn_events_off_records_none(self):
        self.conf.config(group='docker', spawn_events=False)
        inst, nw = self.make()
        self.spawn(inst, nw)
        self.assertEqual([], self.events.calls)
        self.assertIn('Spawned container nova-%s in 1.06 s: image_cache'
                      % inst.uuid, self.log.output)

    def test_event_recording_errors_never_fail_the_spawn(self):
        inst, nw = self.make()
        self.events.fail_create = oslo_messaging.MessagingTimeout('conductor')
        self.spawn(inst, nw)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(inst).state)
        self.assertEqual(7, self.log.output.count(
            'Could not record instance action event docker_'))


class TestLifecycle(DriverTestCase):

    def setUp(self):
        super().setUp()
        self.inst, self.nw = self.make()
        self.spawn(self.inst, self.nw)
        self.client.api.calls.clear()
        self.links.calls.clear()
        self.name = 'nova-%s' % self.inst.uuid

    def _replugged(self):
        return 'create_veth_pair' in self.ran

    def test_soft_reboot_stops_gracefully_with_timeout(self):
        self.conf.config(group='docker', soft_reboot_timeout=17)
        pid = self.state(self.inst)['Pid']
        self.driver.reboot(self.ctx, self.inst, self.nw, 'SOFT')
        self.assertEqual([('stop', self.name, 17), ('start', self.name)],
                         self.client.api.calls)
        self.assertNotEqual(pid, self.state(self.inst)['Pid'])
        self.assertTrue(self._replugged())

    def test_hard_reboot_kills(self):
        self.driver.reboot(self.ctx, self.inst, self.nw, 'HARD')
        self.assertEqual([('kill', self.name),
                          ('wait', self.name, 'not-running'),
                          ('start', self.name)], self.client.api.calls)
        self.assertTrue(self._replugged())

    def test_reboot_of_paused_instance_unpauses_first(self):
        self.driver.pause(self.inst)
        self.client.api.calls.clear()
        self.driver.reboot(self.ctx, self.inst, self.nw, 'SOFT')
        self.assertEqual('unpause', self.client.api.calls[0][0])
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)

    def test_reboot_of_missing_instance(self):
        self.driver.destroy(self.ctx, self.inst, self.nw)
        self.assertRaises(exception.InstanceNotFound, self.driver.reboot,
                          self.ctx, self.inst, self.nw, 'HARD')

    def test_reboot_start_failure(self):
        self.client.api.exit_on_start = True
        self.assertRaises(exception.InstanceRebootFailure,
                          self.driver.reboot, self.ctx, self.inst, self.nw,
                          'HARD')

    def test_power_off_timeout_and_force(self):
        self.driver.power_off(self.inst, timeout=7)
        self.assertEqual([('stop', self.name, 7)], self.client.api.calls)
        self.assertEqual(power_state.SHUTDOWN,
                         self.driver.get_info(self.inst).state)
        self.assertIn('os_vif.unplug', self.ran)
        self.driver.power_on(self.ctx, self.inst, self.nw)
        self.client.api.calls.clear()
        self.driver.power_off(self.inst, timeout=0)
        self.assertEqual(('kill', self.name), self.client.api.calls[0])

    def test_power_on_running_only_replugs_if_needed(self):
        self.driver.power_on(self.ctx, self.inst, self.nw)
        self.assertEqual([], self.client.api.calls)
        self.assertEqual([], self.ran)
        self.devices.clear()   # host end vanished
        self.driver.power_on(self.ctx, self.inst, self.nw)
        self.assertTrue(self._replugged())

    def test_resume_state_on_host_boot_starts_and_plugs(self):
        self.client.api._down(self.client.api.store[self.name], 0)
        self.devices.clear()
        self.driver.resume_state_on_host_boot(self.ctx, self.inst, self.nw,
                                              None)
        self.assertEqual([('start', self.name)], self.client.api.calls)
        self.assertTrue(self._replugged())

    def test_pause_unpause(self):
        self.driver.pause(self.inst)
        self.assertEqual(power_state.PAUSED,
                         self.driver.get_info(self.inst).state)
        self.driver.unpause(self.inst)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)

    def test_destroy_removes_container_and_veth(self):
        self.assertTrue(self.devices)
        self.driver.destroy(self.ctx, self.inst, self.nw)
        self.assertEqual([('remove', self.name)], self.client.api.calls)
        self.assertEqual(set(), self.devices)
        self.assertRaises(exception.InstanceNotFound, self.driver.get_info,
                          self.inst)
        self.assertFalse(self.driver.instance_exists(self.inst))
        # idempotent
        self.driver.destroy(self.ctx, self.inst, self.nw)

    def test_plug_vifs_without_container_is_not_an_error(self):
        # init_host plugs every instance of the host: a container removed
        # behind Nova's back must not stop nova-compute
        self.driver.destroy(self.ctx, self.inst, self.nw)
        self.links.calls.clear()
        self.driver.plug_vifs(self.inst, self.nw)
        self.assertEqual([], self.ran)
        self.assertEqual(set(), self.devices)

    def test_cleanup_unplugs_only_when_asked(self):
        self.driver.cleanup(self.ctx, self.inst, self.nw, destroy_vifs=False)
        self.assertEqual([], self.ran)
        self.driver.cleanup(self.ctx, self.inst, self.nw)
        self.assertEqual(set(), self.devices)

    def test_console_output_of_current_boot(self):
        self.driver.reboot(self.ctx, self.inst, self.nw, 'HARD')
        out = self.driver.get_console_output(self.ctx, self.inst)
        self.assertEqual(b'boot 2\n', out)

    def test_console_output_is_capped(self):
        self.conf.config(group='docker', console_max_bytes=3)
        self.assertEqual(b'1\n', self.driver.get_console_output(
            self.ctx, self.inst)[-2:])
        self.assertEqual(3, len(self.driver.get_console_output(
            self.ctx, self.inst)))

    def test_lists(self):
        self.assertEqual([self.inst.uuid], self.driver.list_instance_uuids())
        self.assertEqual([self.inst.name], self.driver.list_instances())
        self.conf.config(host='other-host')
        self.assertEqual([], self.driver.list_instance_uuids())


class TestSuspend(DriverTestCase):

    def setUp(self):
        super().setUp()
        self.inst, self.nw = self.make(vm_state=vm_states.ACTIVE)
        self.spawn(self.inst, self.nw)
        self.client.api.calls.clear()
        self.links.calls.clear()
        self.name = 'nova-%s' % self.inst.uuid

    def test_suspend_freezes_and_reports_suspended(self):
        self.inst.task_state = task_states.SUSPENDING
        self.driver.suspend(self.ctx, self.inst)
        self.assertEqual([('pause', self.name)], self.client.api.calls)
        self.assertTrue(self.state(self.inst)['Paused'])
        # as Nova reads it right after suspend, and later
        self.assertEqual(power_state.SUSPENDED,
                         self.driver.get_info(self.inst).state)
        self.inst.vm_state = vm_states.SUSPENDED
        self.inst.task_state = None
        self.assertEqual(power_state.SUSPENDED,
                         self.driver.get_info(self.inst).state)
        # suspending a frozen container again changes nothing
        self.driver.suspend(self.ctx, self.inst)
        self.assertEqual([('pause', self.name)], self.client.api.calls)

    def test_pause_is_reported_as_paused_not_suspended(self):
        self.inst.task_state = task_states.PAUSING
        self.driver.pause(self.inst)
        self.inst.vm_state = vm_states.PAUSED
        self.inst.task_state = None
        self.assertEqual(power_state.PAUSED,
                         self.driver.get_info(self.inst).state)
        # frozen behind Nova's back: PAUSED, which the power state sync
        # ignores for an ACTIVE instance (SUSPENDED would stop it)
        self.inst.vm_state = vm_states.ACTIVE
        self.assertEqual(power_state.PAUSED,
                         self.driver.get_info(self.inst).state)

    def test_resume_thaws_without_replugging(self):
        self.driver.suspend(self.ctx, self.inst)
        self.client.api.calls.clear()
        self.inst.vm_state = vm_states.SUSPENDED
        self.inst.task_state = task_states.RESUMING
        pid = self.state(self.inst)['Pid']
        self.driver.resume(self.ctx, self.inst, self.nw)
        self.assertEqual([('unpause', self.name)], self.client.api.calls)
        self.assertEqual(pid, self.state(self.inst)['Pid'])
        self.assertEqual([], self.ran)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)

    def test_resume_starts_a_container_stopped_meanwhile(self):
        self.driver.suspend(self.ctx, self.inst)
        self.client.api._down(self.state_dict(), 137)    # engine restart
        self.devices.clear()
        self.client.api.calls.clear()
        self.driver.resume(self.ctx, self.inst, self.nw)
        self.assertEqual([('start', self.name)], self.client.api.calls)
        self.assertIn('create_veth_pair', self.ran)

    def test_suspend_of_stopped_container_rolls_back(self):
        self.driver.power_off(self.inst, timeout=0)
        self.client.api.calls.clear()
        e = self.assertRaises(exception.InstanceFaultRollback,
                              self.driver.suspend, self.ctx, self.inst)
        self.assertIsInstance(e.inner_exception,
                              exception.InstanceSuspendFailure)
        self.assertIn('is not running (exited)', str(e.inner_exception))
        self.assertEqual([], self.client.api.calls)

    def test_hard_reboot_of_suspended_instance(self):
        self.driver.suspend(self.ctx, self.inst)
        self.driver.reboot(self.ctx, self.inst, self.nw, 'HARD')
        self.assertFalse(self.state(self.inst)['Paused'])
        self.assertTrue(self.state(self.inst)['Running'])

    def state_dict(self):
        return self.client.api.store[self.name]


class TestRescue(DriverTestCase):

    def setUp(self):
        super().setUp()
        self.inst, self.nw = self.make(vm_state=vm_states.ACTIVE)
        self.spawn(self.inst, self.nw)
        self.name = 'nova-%s' % self.inst.uuid
        self.rescue_name = self.name + '-rescue'
        self.store = self.client.api.store

    def rescue(self, image=None):
        # Nova's rescue_instance powers the instance off first
        self.driver.power_off(self.inst, timeout=0)
        self.inst.task_state = task_states.RESCUING
        self.client.api.calls.clear()
        self.links.calls.clear()
        self.driver.rescue(self.ctx, self.inst, self.nw, image or
                           helpers.image_meta(
                               'f0f0f0f0-0000-0000-0000-000000000001'),
                           'rescue-pass', None, None)

    def test_rescue_container_mounts_the_instance_root(self):
        self.rescue()
        self.assertEqual([('create', self.rescue_name),
                          ('start', self.rescue_name)],
                         self.client.api.calls)
        rescue = self.store[self.rescue_name]
        own = self.store[self.name]
        self.assertFalse(own['State']['Running'])
        self.assertTrue(rescue['State']['Running'])
        self.assertEqual(self.inst.uuid,
                         rescue['Config']['Labels']['nova.rescue_of'])
        [mount] = rescue['Mounts']
        self.assertEqual('/mnt/instance', mount['Destination'])
        _container, spec = self.client.api.volumes[mount['Name']]
        data = own['GraphDriver']['Data']
        self.assertEqual(
            {'Name': 'local', 'Options': {
                'type': 'overlay', 'device': 'overlay',
                'o': 'lowerdir=%s,upperdir=%s,workdir=%s' % (
                    data['LowerDir'], data['UpperDir'], data['WorkDir'])}},
            spec['VolumeOptions']['DriverConfig'])
        self.assertTrue(spec['VolumeOptions']['NoCopy'])
        # the key pair, the ports plugged into the rescue container
        self.assertEqual((0o600, b'ssh-ed25519 AAAA test\n'),
                         rescue['files']['root/.ssh/authorized_keys'])
        netns = rescue['NetworkSettings']['SandboxKey']
        self.assertIn(('configure_in_netns', netns),
                      [c[:2] for c in self.links.calls])
        # Nova reads RUNNING; the rescue container is no instance
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        self.assertEqual(rescue['Id'],
                         self.driver.get_info(self.inst).internal_id)
        self.assertEqual([self.inst.uuid], self.driver.list_instance_uuids())
        # its console: the rescue container's (its first boot)
        self.assertEqual(b'boot 2\n', self.driver.get_console_output(
            self.ctx, self.inst))

    def test_rescue_mount_path_option(self):
        self.conf.config(group='docker', rescue_mount_path='/rescue/root')
        self.rescue()
        self.assertEqual('/rescue/root', self.store[self.rescue_name][
            'Mounts'][0]['Destination'])

    def test_instance_container_never_starts_while_rescued(self):
        self.rescue()
        e = self.assertRaises(exception.InstancePowerOnFailure,
                              self.driver._start, self.inst, self.nw)
        self.assertIn('unrescue it first', str(e))
        self.assertFalse(self.store[self.name]['State']['Running'])

    def test_unrescue_removes_rescue_and_volume_then_starts(self):
        self.rescue()
        self.inst.vm_state = vm_states.RESCUED
        self.inst.task_state = task_states.UNRESCUING
        volume = self.store[self.rescue_name]['Mounts'][0]['Name']
        self.client.api.calls.clear()
        self.driver.unrescue(self.ctx, self.inst)
        self.assertEqual([('remove', self.rescue_name),
                          ('remove_volume', volume),
                          ('start', self.name)], self.client.api.calls)
        self.assertEqual({}, self.client.api.volumes)
        self.assertNotIn(self.rescue_name, self.store)
        self.assertEqual(power_state.RUNNING,
                         self.driver.get_info(self.inst).state)
        self.assertEqual(self.store[self.name]['Id'],
                         self.driver.get_info(self.inst).internal_id)

    def test_volume_still_mounted_is_kept(self):
        self.rescue()
        source = self.store[self.rescue_name]['Mounts'][0]['Source']
        real = os.path.ismount
        self.patch(os.path, 'ismount', lambda p: p == source or real(p))
        self.driver.unrescue(self.ctx, self.inst)
        self.assertNotIn(self.rescue_name, self.store)
        self.assertEqual(1, len(self.client.api.volumes))

    def test_rescue_of_unmountable_root_keeps_the_instance_running(self):
        self.store[self.name]['GraphDriver'] = {'Name': 'vfs', 'Data': None}
        e = self.assertRaises(exception.InstanceNotRescuable, self.rescue)
        self.assertIn('storage driver is vfs', str(e))
        self.assertNotIn(self.rescue_name, self.store)

    def test_failed_rescue_removes_it_and_restarts_an_active_instance(self):
        e = self.assertRaises(exception.ImageUnacceptable, self.rescue,
                              helpers.image_meta(container_format='bare'))
        self.assertIn('docker', str(e))
        self.assertNotIn(self.rescue_name, self.store)
        self.assertTrue(self.store[self.name]['State']['Running'])

    def test_failed_rescue_of_stopped_instance_leaves_it_stopped(self):
        self.inst.vm_state = vm_states.STOPPED
        self.client.api.exit_on_start = True
        self.assertRaises(exception.InstancePowerOnFailure, self.rescue)
        self.assertNotIn(self.rescue_name, self.store)
        self.assertEqual({}, self.client.api.volumes)
        self.assertFalse(self.store[self.name]['State']['Running'])

    def test_host_boot_keeps_a_rescue_going(self):
        self.rescue()
        self.inst.vm_state = vm_states.RESCUED
        self.client.api._down(self.store[self.rescue_name], 0)
        self.client.api.calls.clear()
        self.driver.resume_state_on_host_boot(self.ctx, self.inst, self.nw,
                                              None)
        self.assertEqual([('start', self.rescue_name)],
                         self.client.api.calls)

    def test_hard_reboot_after_failed_unrescue_boots_the_instance(self):
        self.rescue()
        self.inst.vm_state = vm_states.ERROR
        self.driver.reboot(self.ctx, self.inst, self.nw, 'HARD')
        self.assertNotIn(self.rescue_name, self.store)
        self.assertTrue(self.store[self.name]['State']['Running'])

    def test_destroy_removes_both(self):
        self.rescue()
        self.driver.destroy(self.ctx, self.inst, self.nw)
        self.assertEqual({}, self.store)
        self.assertEqual({}, self.client.api.volumes)
        self.assertEqual(set(), self.devices)


class TestInterfaces(DriverTestCase):

    def test_detach_unplugs_only_that_port(self):
        keep = helpers.vif(mac='fa:16:3e:00:00:01', address='198.51.100.10')
        gone = helpers.vif(mac='fa:16:3e:00:00:02', address='198.51.100.11')
        inst = helpers.instance(self.ctx, network_info=[keep, gone])
        nw = inst.get_network_info()
        self.spawn(inst, nw)
        self.assertEqual({nw[0]['devname'], nw[1]['devname']}, self.devices)
        self.links.calls.clear()
        self.driver.detach_interface(self.ctx, inst, nw[1])
        self.assertEqual({nw[0]['devname']}, self.devices)
        self.assertEqual([('os_vif.unplug', nw[1]['devname'], inst.uuid),
                          ('delete_device', nw[1]['devname'])],
                         self.links.calls)


class TestRefusedEarly(DriverTestCase):

    def test_live_migration_prechecks_refuse(self):
        inst, _nw = self.make()
        checks = (lambda: self.driver.check_can_live_migrate_destination(self.ctx, inst, {}, {}),
                  lambda: self.driver.check_can_live_migrate_source(self.ctx, inst, {}))
        for check in checks:
            e = self.assertRaises(exception.MigrationPreCheckError, check)
            self.assertIn('cannot live-migrate', str(e))

    def test_resize_rolls_back_before_anything_changed(self):
        inst, nw = self.make()
        self.spawn(inst, nw)
        self.client.api.calls.clear()
        e = self.assertRaises(exception.InstanceFaultRollback,
                              self.driver.migrate_disk_and_power_off,
                              self.ctx, inst, 'other-host', inst.flavor, nw)
        self.assertIn('cannot resize or migrate', str(e.inner_exception))
        self.assertEqual([], self.client.api.calls)


class TestHost(DriverTestCase):

    def test_init_host_engine_unreachable(self):
        self.client.reachable = False
        e = self.assertRaises(docker_driver.DockerEngineUnavailable,
                              self.driver.init_host, 'h')
        self.assertIn('unix:///var/run/docker.sock', str(e))
        self.assertIn('connection refused', str(e))

    def test_init_host_ok(self):
        self.conf.config(group='docker', host_attach='linuxbridge')
        log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct.driver', level=logging.INFO))
        self.driver.init_host('h')
        # it asked the engine, and says which engine and Nova it runs with
        self.assertIn('Docker engine 20.10.24 (API 1.41) at unix:///var/run/docker.sock',
                      log.output)
        self.assertIn('Nova %s' % docker_driver.nova_version(), log.output)

    def test_init_host_refuses_an_engine_unlike_daemon_json(self):
        self.client.api.storage_driver = 'vfs'
        self.client.api.network_list.append({'Name': 'bridge', 'Driver': 'bridge'})
        e = self.assertRaises(docker_driver.DockerEngineMisconfigured,
                              self.driver.init_host, 'h')
        msg = str(e)
        self.assertIn('"storage-driver": the engine runs \'vfs\'', msg)
        self.assertIn('"bridge": the engine has its default bridge network', msg)
        self.assertIn('nova-docker/etc/docker/daemon.json', msg)

    def test_daemon_json_is_what_init_host_accepts(self):
        """The shipped file names the settings init_host checks."""
        nova_docker = os.path.join(os.path.dirname(__file__), '..', '..')
        with open(os.path.join(nova_docker, hostinfo.DAEMON_JSON.split('/', 1)[1])) as f:
            settings = json.load(f)
        self.assertEqual('none', settings['bridge'])
        self.assertEqual('overlay2', settings['storage-driver'])
        self.assertFalse(settings['iptables'])
        # dockerd creates the user dockremap and its subordinate ids
        self.assertEqual('default', settings['userns-remap'])
        self.assertEqual([], hostinfo.engine_problems(
            {'Driver': settings['storage-driver']}, []))

    def test_init_host_starts_the_privsep_daemons_and_reaches_ovsdb(self):
        self.driver.init_host('h')
        self.assertEqual(['vif_plug_capabilities', 'netns_plug_capabilities',
                          'ovsdb.check'], self.ran)

    def test_init_host_unsupported_nova(self):
        self.patch(docker_driver, 'nova_version', lambda: '35.0.0')
        self.client.reachable = False   # checked before the engine
        e = self.assertRaises(docker_driver.UnsupportedNovaVersion,
                              self.driver.init_host, 'h')
        self.assertIsInstance(e, exception.NovaException)
        msg = str(e)
        self.assertIn('supports Nova 31.x to 34.x (2025.1 Epoxy to 2026.2 '
                      'Hibiscus) only', msg)
        self.assertIn('runs Nova 35.0.0', msg)
        self.assertIn('pip install "nova>=31,<35"', msg)
        self.assertIn('tools/install-driver', msg)

    def test_init_host_older_nova(self):
        self.patch(docker_driver, 'nova_version', lambda: '30.2.0')
        e = self.assertRaises(docker_driver.UnsupportedNovaVersion,
                              self.driver.init_host, 'h')
        self.assertIn('runs Nova 30.2.0', str(e))
        self.assertIn('31.x to 34.x', str(e))

    def test_nova_versions(self):
        for ok in ('31.0.0', '31.3.1', '32.2.1', '33.0.2', '33.1.0.dev4',
                   '34.0.0', '34.1.0.dev12', '34.0.0.0rc2.dev3', '34.2.1'):
            self.assertEqual(ok, docker_driver.check_nova_version(ok))
        for bad in ('30.3.0', '30.0.0.0rc1', '35.0.0.0b1', '3.4', '310.0',
                    'unknown'):
            self.assertRaises(docker_driver.UnsupportedNovaVersion,
                              docker_driver.check_nova_version, bad)

    def test_nova_version_of_this_process(self):
        from nova import version
        self.assertEqual(version.version_string(),
                         docker_driver.nova_version())
        self.assertEqual(docker_driver.nova_version(),
                         docker_driver.check_nova_version())

    def test_nodes(self):
        self.assertEqual(['unit-host'], self.driver.get_available_nodes())

    def test_available_resource(self):
        inst, nw = self.make(vcpus=3)
        self.spawn(inst, nw)
        res = self.driver.get_available_resource('unit-host')
        self.assertEqual(4, res['vcpus'])
        self.assertEqual(8192, res['memory_mb'])
        self.assertEqual(3, res['vcpus_used'])
        self.assertEqual('docker', res['hypervisor_type'])
        self.assertEqual(20010024, res['hypervisor_version'])
        self.assertEqual('docker', res['supported_instances'][0][1])
        self.assertEqual('exe', res['supported_instances'][0][2])

    def test_update_provider_tree(self):
        self.conf.config(cpu_allocation_ratio=16.0, reserved_host_cpus=0,
                         reserved_host_memory_mb=1024,
                         reserved_host_disk_mb=1)
        tree = provider_tree.ProviderTree()
        tree.new_root('unit-host', str(uuid.uuid4()))
        self.driver.update_provider_tree(tree, 'unit-host')
        inv = tree.data('unit-host').inventory
        self.assertEqual(4, inv[orc.VCPU]['total'])
        self.assertEqual(16.0, inv[orc.VCPU]['allocation_ratio'])
        self.assertEqual(8192, inv[orc.MEMORY_MB]['total'])
        self.assertEqual(1024, inv[orc.MEMORY_MB]['reserved'])
        self.assertEqual(1, inv[orc.DISK_GB]['reserved'])   # ceil of 1 MB
        # the trait the isolated Docker aggregate requires, next to any other
        tree.add_traits('unit-host', 'CUSTOM_OPERATOR')
        self.driver.update_provider_tree(tree, 'unit-host')
        self.assertEqual({'CUSTOM_NOVA_DOCKER', 'CUSTOM_OPERATOR'},
                         set(tree.data('unit-host').traits))

    def test_network_binding_host(self):
        inst, _nw = self.make(host='compute-docker')
        self.assertEqual('compute-docker',
                         self.driver.network_binding_host_id(self.ctx, inst))
        self.assertFalse(self.driver.manages_network_binding_host_id())
        self.conf.config(group='docker', network_binding_host='aio-host')
        self.assertEqual('aio-host',
                         self.driver.network_binding_host_id(self.ctx, inst))
        self.assertTrue(self.driver.manages_network_binding_host_id())

    def test_capabilities(self):
        self.assertTrue(self.driver.capabilities['supports_image_type_raw'])
        self.assertFalse(self.driver.capabilities['supports_attach_interface'])
        # Nova's periodic image cache pass calls manage_image_cache
        self.assertTrue(self.driver.capabilities['has_imagecache'])


class TestLimits(DriverTestCase):
    """PID and disk limits; what init_host says about the engine."""

    XFS_INFO = {'DriverStatus': [['Backing Filesystem', 'xfs']],
                'DockerRootDir': '/srv/docker'}

    def setUp(self):
        super().setUp()
        self.conf.config(group='docker', host_attach='linuxbridge')
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct.driver', level=logging.INFO))

    def host_config(self, inst):
        return self.client.api.store['nova-%s' % inst.uuid]['HostConfig']

    def on_xfs(self, mount=('xfs', {'rw', 'prjquota'})):
        """The engine on overlay2 over XFS; ``mount``: what we see."""
        self.client.info_data.update(self.XFS_INFO)
        self.useFixture(fixtures.MockPatch(
            'nova_docker_vmct.hostinfo.read_mount_of',
            lambda path: mount if path == '/srv/docker' else None))

    def warnings(self, text):
        return [line for line in self.log.output.splitlines() if text in line]

    def test_pids_limit_of_conf_and_flavor(self):
        inst, nw = self.make()
        self.spawn(inst, nw)
        self.assertEqual(1024, self.host_config(inst)['pids_limit'])
        inst, nw = self.make(extra_specs={'docker:pids_limit': '64'})
        self.spawn(inst, nw)
        self.assertEqual(64, self.host_config(inst)['pids_limit'])
        self.conf.config(group='docker', pids_limit=-1)
        inst, nw = self.make()
        self.spawn(inst, nw)
        self.assertNotIn('pids_limit', self.host_config(inst))

    def test_bad_pids_limit_spec_aborts_the_build_before_any_container(self):
        inst, nw = self.make(extra_specs={'docker:pids_limit': 'lots'})
        e = self.assertRaises(exception.InvalidInput, self.spawn, inst, nw)
        self.assertIn("docker:pids_limit='lots'", str(e))
        self.assertEqual({}, self.client.api.store)
        self.assertEqual([], [c for c in self.ran if c[:2] == ['ip', 'link']])

    def test_disk_limit_on_xfs_with_project_quotas(self):
        self.on_xfs()
        self.driver.init_host('h')
        self.assertIn('disk limit: root_gb', self.log.output)
        inst, nw = self.make(root_gb=10)
        self.spawn(inst, nw)
        self.assertEqual({'size': '10G'}, self.host_config(inst)['storage_opt'])
        inst, nw = self.make(root_gb=0)
        self.spawn(inst, nw)
        self.assertNotIn('storage_opt', self.host_config(inst))
        self.conf.config(group='docker', disk_limit='off')
        self.driver.init_host('h')
        inst, nw = self.make(root_gb=10)
        self.spawn(inst, nw)
        self.assertNotIn('storage_opt', self.host_config(inst))

    def test_disk_limit_auto_on_ext4_says_so_once_and_spawns_without(self):
        self.client.info_data['DriverStatus'] = [['Backing Filesystem',
                                                  'extfs']]
        self.driver.init_host('h')
        for _ in range(2):
            inst, nw = self.make()
            self.spawn(inst, nw)
            self.assertNotIn('storage_opt', self.host_config(inst))
        said = self.warnings('Instances get no disk limit')
        self.assertEqual(1, len(said))
        self.assertIn('overlay2 is on extfs, not on XFS mounted with pquota',
                      said[0])
        self.assertIn('disk limit: none', self.log.output)

    def test_disk_limit_required_refuses_an_engine_without(self):
        self.conf.config(group='docker', disk_limit='required')
        self.on_xfs(mount=('xfs', {'rw', 'noquota'}))
        e = self.assertRaises(docker_driver.DiskLimitUnavailable,
                              self.driver.init_host, 'h')
        msg = str(e)
        self.assertIn('[docker]disk_limit = required', msg)
        self.assertIn('the XFS holding /srv/docker is mounted without '
                      'project quotas', msg)
        self.assertIn('or set [docker]disk_limit = auto', msg)

    def test_engine_refusing_the_limit_after_all(self):
        """auto: the container goes without it, and no spawn asks again."""
        self.on_xfs(mount=None)         # init_host cannot see the mount
        self.client.api.refuse_storage_opt = True
        self.driver.init_host('h')
        for _ in range(2):
            inst, nw = self.make()
            self.spawn(inst, nw)
            self.assertNotIn('storage_opt', self.host_config(inst))
            self.assertEqual('running', self.state(inst)['Status'])
        self.assertEqual(1, len([c for c in self.client.api.calls
                                 if c[0] == 'create refused']))
        self.assertEqual(1, len(self.warnings('the engine refused one')))

    def test_engine_refusing_the_limit_when_required_fails_the_spawn(self):
        self.conf.config(group='docker', disk_limit='required')
        self.on_xfs(mount=None)
        self.client.api.refuse_storage_opt = True
        self.driver.init_host('h')
        inst, nw = self.make()
        e = self.assertRaises(docker.errors.APIError, self.spawn, inst, nw)
        self.assertIn('--storage-opt is supported only', str(e))
        self.assertEqual({}, self.client.api.store)

    def test_init_host_warns_about_an_engine_without_userns_remap(self):
        self.driver.init_host('h')
        said = self.warnings('does not remap user namespaces')
        self.assertEqual(1, len(said))
        self.assertIn('unix:///var/run/docker.sock differs from '
                      'nova-docker/etc/docker/daemon.json', said[0])
        self.assertIn('"userns-remap": "default"', said[0])
        self.assertIn('user namespaces remapped: NO', self.log.output)

    def test_init_host_with_userns_remap_says_so(self):
        self.client.info_data['SecurityOptions'] = [
            'name=seccomp,profile=default', 'name=userns']
        self.driver.init_host('h')
        self.assertEqual([], self.warnings('does not remap'))
        self.assertIn('user namespaces remapped: yes', self.log.output)


class TestManageImageCache(DriverTestCase):
    """Nova's image cache pass: [image_cache] options, instances' images."""

    def setUp(self):
        super().setUp()
        self.gone = set()
        self.asked = []

        def exists(ctx, image_id):
            self.asked.append((ctx, image_id))
            return image_id not in self.gone
        self.driver.image_exists = exists
        self.ctx = nova_context.RequestContext('u', 'p', is_admin=False,
                                               auth_token='tok')
        self.now = time.time()

    def cached(self, age, gone=False):
        """Glance id of a cache tag last tagged ``age`` seconds ago."""
        image_id = str(uuid.uuid4())
        self.client.images.now = self.now - age
        fake_docker.FakeImage(
            self.client, 'sha256:%s' % uuid.uuid4().hex).tag(
                'glance/%s' % image_id, 'latest')
        if gone:
            self.gone.add(image_id)
        return image_id

    def left(self):
        """Glance ids of the cache tags left."""
        return {ref.split('/')[1].split(':')[0]
                for ref in self.client.images.tags}

    def instances(self, *image_refs):
        return [helpers.instance(self.ctx, image_ref=ref)
                for ref in image_refs]

    def test_unused_images_go_as_the_options_say(self):
        self.conf.config(group='image_cache',
                         remove_unused_original_minimum_age_seconds=3600)
        used = self.cached(60, gone=True)
        self.cached(60, gone=True)
        young = self.cached(60)
        old = self.cached(3700)
        # '': an instance booted from a volume
        self.driver.manage_image_cache(self.ctx, self.instances(used, ''))
        self.assertEqual({used, young}, self.left())
        # Glance is asked about the young unused ones only, as the context
        self.assertEqual(2, len(self.asked))
        self.assertNotIn(old, [i for ctx, i in self.asked])
        self.assertEqual({self.ctx}, {ctx for ctx, i in self.asked})

    def test_the_default_minimum_age_is_a_day(self):
        kept = self.cached(23 * 3600)
        self.cached(25 * 3600)
        self.driver.manage_image_cache(self.ctx, [])
        self.assertEqual({kept}, self.left())

    def test_remove_unused_base_images_false_does_nothing(self):
        self.conf.config(group='image_cache', remove_unused_base_images=False)
        used = self.cached(10 * 24 * 3600)
        ids = {used, self.cached(60, gone=True),
               self.cached(10 * 24 * 3600)}
        self.driver.manage_image_cache(self.ctx, self.instances(used))
        self.assertEqual(ids, self.left())
        self.assertEqual([], self.asked)
        # not even an image in use is tagged again
        self.assertEqual([], self.client.images.tagged[3:])

    def test_periodic_admin_context_asks_glance_as_the_service_user(self):
        # Nova's periodic tasks run with a context that has no token
        admin = nova_context.get_admin_context()
        service = nova_context.RequestContext('nova', 'service',
                                              is_admin=False,
                                              auth_token='svc')
        self.patch(nova_context, 'get_nova_service_user_context',
                   lambda: service)
        self.cached(60, gone=True)
        self.driver.manage_image_cache(admin, [])
        self.assertEqual([service], [ctx for ctx, i in self.asked])
        self.assertEqual(set(), self.left())

    def test_without_service_user_glance_is_asked_with_the_context(self):
        admin = nova_context.get_admin_context()

        def unconfigured():
            raise exception.InvalidConfiguration('no [service_user]')
        self.patch(nova_context, 'get_nova_service_user_context',
                   unconfigured)
        self.cached(60)
        self.driver.manage_image_cache(admin, [])
        self.assertEqual([admin], [ctx for ctx, i in self.asked])


class TestGlanceChunks(testtools.TestCase):

    def test_streams_glance_download(self):
        from nova.image import glance
        from nova_docker_vmct import images
        calls = []

        class FakeImageAPI(object):
            def download(self, context, image_id):
                calls.append(image_id)
                return iter([b'a', b'b'])

        self.assertTrue(hasattr(glance, 'API'))   # the real class, replaced
        self.patch(glance, 'API', FakeImageAPI)
        chunks = images.glance_chunks('ctx', 'img-1')
        self.assertEqual([], calls)          # lazy: nothing before load reads
        self.assertEqual([b'a', b'b'], list(chunks))
        self.assertEqual(['img-1'], calls)


class TestSnapshot(DriverTestCase):

    def test_snapshot_task_states_and_upload(self):
        inst, nw = self.make()
        self.spawn(inst, nw)
        states = []
        uploads = []
        api = self.client.api

        def commit(name, pause):
            api.calls.append(('commit', name, pause))
            return {'Id': 'sha256:snap'}
        api.commit = commit
        api.get_image = lambda ref: iter([b'saved', b'image'])
        api.remove_image = lambda ref: api.calls.append(('rmi', ref))

        class FakeImageAPI(object):
            def update(self, context, image_id, metadata, data):
                uploads.append((image_id, metadata, data.read()))

        from nova.image import glance
        self.assertTrue(hasattr(glance, 'API'))   # the real class, replaced
        self.patch(glance, 'API', FakeImageAPI)
        self.driver.snapshot(self.ctx, inst, 'SNAP-ID',
                             lambda **kw: states.append(kw))
        self.assertEqual([
            {'task_state': task_states.IMAGE_PENDING_UPLOAD},
            {'task_state': task_states.IMAGE_UPLOADING,
             'expected_state': task_states.IMAGE_PENDING_UPLOAD}], states)
        self.assertEqual('SNAP-ID', uploads[0][0])
        self.assertEqual('docker', uploads[0][1]['container_format'])
        self.assertEqual(b'savedimage', uploads[0][2])
        self.assertIn(('commit', 'nova-%s' % inst.uuid, True), api.calls)
        self.assertIn(('rmi', 'sha256:snap'), api.calls)
