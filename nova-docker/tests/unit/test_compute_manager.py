"""Nova's compute manager drives the driver (fake engine, no services).

The manager's own suspend, resume, pause, rescue, unrescue, resize and power
state sync code runs unchanged; only what would reach the database, the
message bus, Neutron, Glance or placement is replaced. What these tests pin
down is the state Nova leaves the instance in (vm_state, task_state,
power_state) and the fault it records when the driver refuses. The build
path runs on a SQLite database: the spawn steps are events of the boot's
instance action.
"""

import contextlib
from unittest import mock
import uuid

import fixtures
from oslo_config import fixture as config_fixture
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import test_fixtures as db_fixtures
from oslo_messaging import conffixture as messaging_conffixture
import testtools

from nova.compute import build_results
from nova.compute import instance_actions
from nova.compute import manager
from nova.compute import power_state
from nova.compute import task_states
from nova.compute import vm_states
import nova.conf
from nova.db.main import api as main_db_api
from nova.db import migration
from nova import exception
from nova.network import model as network_model
from nova import objects
from nova import rpc

from tests import helpers
from tests.unit import fake_docker
from tests.unit import fake_links

CONF = nova.conf.CONF


class ComputeTestCase(testtools.TestCase):
    """Nova's ComputeManager with the Docker driver on the fake engine."""

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(config_fixture.Config(CONF))
        self.conf.config(host='unit-host', vif_plugging_timeout=0,
                         instances_path=self.useFixture(
                             fixtures.TempDir()).path)
        messaging = self.useFixture(
            messaging_conffixture.ConfFixture(CONF))
        messaging.transport_url = 'fake:/'
        rpc.init(CONF)
        self.addCleanup(rpc.cleanup)
        with mock.patch('nova.scheduler.client.report.SchedulerReportClient'):
            self.compute = manager.ComputeManager(
                compute_driver='docker.DockerDriver')
        self.driver = self.compute.driver
        self.client = fake_docker.FakeDockerClient()
        self.driver._client = self.client
        self.driver._plugger, _links, _wiring = fake_links.plugger(
            CONF.docker)
        saved = fake_docker.saved_image()
        self.driver.image_fetch = lambda ctx, image_id: iter([saved.tarball])
        self.ctx = helpers.context()
        self.image = helpers.image_meta(
            'f0f0f0f0-0000-0000-0000-000000000001')


class ManagerTestCase(ComputeTestCase):

    def setUp(self):
        super().setUp()
        self.inst = helpers.instance(self.ctx, host='unit-host',
                                     vm_state=vm_states.ACTIVE,
                                     power_state=power_state.RUNNING)
        self.inst.system_metadata = {}
        self.nw = self.inst.get_network_info()
        self.inst.obj_reset_changes()
        self.saved = []
        self.faults = []
        self._replace_services()
        self.driver.spawn(self.ctx, self.inst, self.image, [], None, {},
                          self.nw)
        self.name = 'nova-%s' % self.inst.uuid

    def _replace_services(self):
        def save(*args, **kwargs):
            self.saved.append((self.inst.vm_state, self.inst.task_state,
                               self.inst.power_state))

        def fault(context, instance, exc, exc_info=None, **kw):
            self.faults.append(exc)

        c = self.compute
        for target, attr, kwargs in [
                (self.inst, 'save', {'side_effect': save}),
                (self.inst, 'refresh', {}),
                (c, '_notify_about_instance_usage', {}),
                (c, '_get_instance_block_device_info', {'return_value': {}}),
                (c, '_get_rescue_image', {'return_value': self.image}),
                (c.network_api, 'get_instance_nw_info',
                 {'return_value': self.nw}),
                (c.compute_api, 'stop', {}),
                (c.compute_api, 'force_stop', {}),
                (c, '_revert_allocation', {})] + self._no_shares(c):
            self.useFixture(fixtures.MockPatchObject(target, attr, **kwargs))
        for name, kwargs in [
                ('nova.compute.utils.notify_about_instance_action', {}),
                ('nova.compute.utils.notify_about_instance_rescue_action',
                 {}),
                ('nova.compute.utils.notify_about_resize_prep_instance', {}),
                ('nova.compute.utils.notify_usage_exists', {}),
                ('nova.compute.utils.add_instance_fault_from_exc',
                 {'side_effect': fault}),
                ('nova.objects.InstanceActionEvent.event_start', {}),
                ('nova.objects.InstanceActionEvent.event_finish', {}),
                ('nova.objects.InstanceActionEvent.'
                 'event_finish_with_failure', {}),
                ('nova.objects.BlockDeviceMappingList.get_by_instance_uuid',
                 {'return_value': objects.BlockDeviceMappingList()})]:
            self.useFixture(fixtures.MockPatch(name, **kwargs))

    @staticmethod
    def _no_shares(c):
        """The manager's Manila share lookup and mounts, replaced.

        Nova 34 has them on ``share_manager``; 31 to 33 on the manager.
        """
        if hasattr(c, 'share_manager'):
            return [(c.share_manager, 'get_share_info', {}),
                    (c.share_manager, 'mount_all', {})]
        return [(c, '_get_share_info', {}), (c, '_mount_all_shares', {})]

    def act(self, task_state, method, *args):
        """Run a manager method the way the API casts it."""
        self.inst.task_state = task_state
        self.saved.clear()
        return getattr(self.compute, method)(self.ctx, self.inst, *args)

    def now(self):
        return (self.inst.vm_state, self.inst.task_state,
                self.inst.power_state)

    def sync(self):
        """One round of the _sync_power_states periodic task."""
        self.saved.clear()
        self.compute._query_driver_power_state_and_sync(self.ctx, self.inst)


class TestSuspend(ManagerTestCase):

    def test_suspend_resume(self):
        self.act(task_states.SUSPENDING, 'suspend_instance')
        self.assertEqual((vm_states.SUSPENDED, None, power_state.SUSPENDED),
                         self.now())
        self.assertTrue(self.client.api.store[self.name]['State']['Paused'])
        # the power state sync leaves a suspended (frozen) container alone
        self.sync()
        self.assertEqual([], self.saved)
        self.compute.compute_api.stop.assert_not_called()
        self.act(task_states.RESUMING, 'resume_instance')
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.now())
        self.assertFalse(self.client.api.store[self.name]['State']['Paused'])

    def test_pause_is_not_mistaken_for_suspend(self):
        self.act(task_states.PAUSING, 'pause_instance')
        self.assertEqual((vm_states.PAUSED, None, power_state.PAUSED),
                         self.now())
        self.sync()
        self.assertEqual([], self.saved)
        self.act(task_states.UNPAUSING, 'unpause_instance')
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.now())

    def test_suspend_of_a_dead_container_keeps_the_instance_active(self):
        self.client.api._down(self.client.api.store[self.name], 1)
        self.assertRaises(exception.InstanceSuspendFailure, self.act,
                          task_states.SUSPENDING, 'suspend_instance')
        self.assertEqual(vm_states.ACTIVE, self.inst.vm_state)
        self.assertIsNone(self.inst.task_state)
        self.assertIsInstance(self.faults[0],
                              exception.InstanceSuspendFailure)
        self.assertIn('is not running', str(self.faults[0]))


class TestRescue(ManagerTestCase):

    def test_rescue_unrescue(self):
        self.act(task_states.RESCUING, 'rescue_instance', None, None, True)
        self.assertEqual((vm_states.RESCUED, None, power_state.RUNNING),
                         self.now())
        store = self.client.api.store
        self.assertTrue(store[self.name + '-rescue']['State']['Running'])
        self.assertFalse(store[self.name]['State']['Running'])
        self.sync()
        self.assertEqual([], self.saved)
        self.act(task_states.UNRESCUING, 'unrescue_instance')
        self.assertEqual((vm_states.ACTIVE, None, power_state.RUNNING),
                         self.now())
        self.assertNotIn(self.name + '-rescue', store)
        self.assertTrue(store[self.name]['State']['Running'])
        self.assertEqual({}, self.client.api.volumes)

    def test_failed_rescue(self):
        # Nova sets any failed rescue to ERROR (rescue_instance catches
        # every exception); the driver leaves the container running
        self.compute._get_rescue_image.return_value = helpers.image_meta(
            container_format='bare')
        e = self.assertRaises(exception.InstanceNotRescuable, self.act,
                              task_states.RESCUING, 'rescue_instance', None,
                              None, True)
        self.assertIn('container_format', str(e))
        self.assertEqual(vm_states.ERROR, self.inst.vm_state)
        self.assertTrue(self.client.api.store[self.name]['State']['Running'])
        self.assertNotIn(self.name + '-rescue', self.client.api.store)


class TestResize(ManagerTestCase):

    def test_resize_is_refused_and_the_instance_stays_active(self):
        migration = objects.Migration(
            id=1, uuid='00000000-0000-0000-0000-00000000aaaa',
            dest_host='other-host', dest_compute='other-host',
            dest_node='other-host', status='pre-migrating')
        self.useFixture(fixtures.MockPatchObject(migration, 'save'))
        self.assertRaises(exception.MigrationError, self.act,
                          task_states.RESIZE_PREP, 'resize_instance', None,
                          migration, self.inst.flavor, True, None)
        self.assertEqual(vm_states.ACTIVE, self.inst.vm_state)
        self.assertIsNone(self.inst.task_state)
        self.assertEqual('error', migration.status)
        self.assertIn('cannot resize or migrate', str(self.faults[0]))
        self.assertTrue(self.client.api.store[self.name]['State']['Running'])


class TestBootActionEvents(ComputeTestCase):
    """The spawn steps land on the boot's instance action.

    Nova's _do_build_and_run_instance with its instance action, event and
    instance objects on a SQLite database with Nova's schema; the network
    (_build_resources), the resource claim, the scheduler and notifications
    replaced.
    """

    BOOT = ['compute__do_build_and_run_instance', 'docker_image_cache',
            'docker_network_info', 'docker_create', 'docker_plug_host', 'docker_start',
            'docker_plug_vifs', 'docker_wait_vif_plugged']

    def setUp(self):
        super().setUp()
        self._database()
        c = self.compute
        vif = helpers.vif(active=True)
        self.inst = objects.Instance(
            context=self.ctx, uuid=str(uuid.uuid4()), user_id='fake-user',
            project_id='fake-project', host='unit-host', hostname='vmct-test',
            vm_state=vm_states.BUILDING, task_state=task_states.SCHEDULING,
            flavor=helpers.flavor(), memory_mb=256, vcpus=1, root_gb=1,
            ephemeral_gb=0, key_data=None)
        self.inst.create()
        # as the conductor does before it casts the build to the compute
        self.action = objects.InstanceAction.action_start(
            self.ctx, self.inst.uuid, instance_actions.CREATE)

        @contextlib.contextmanager
        def build_resources(context, instance, *args):
            # ports allocated, no volumes
            instance.task_state = task_states.BLOCK_DEVICE_MAPPING
            instance.save()
            yield {'block_device_info': None, 'accel_info': [],
                   'network_info': network_model.NetworkInfo([vif])}
        for target, attr, kwargs in [
                (c, '_build_resources', {'side_effect': build_resources}),
                (c.rt, 'instance_claim', {}),
                (c, '_update_scheduler_instance_info', {}),
                (c, '_notify_about_instance_usage', {}),
                (c, '_cleanup_allocated_networks', {})]:
            self.useFixture(fixtures.MockPatchObject(target, attr, **kwargs))
        self.useFixture(fixtures.MockPatch(
            'nova.compute.utils.notify_about_instance_create'))
        # the steps' events are created once the spawn is over, in the
        # background: here at once, so that the test reads them
        self.useFixture(fixtures.MockPatch(
            'nova_docker_vmct.compat.spawn',
            side_effect=lambda func, *args: func(*args)))

    def _database(self):
        path = self.useFixture(fixtures.TempDir()).path
        facade = enginefacade.transaction_context()
        self.useFixture(db_fixtures.ReplaceEngineFacadeFixture(
            main_db_api.context_manager, facade))
        main_db_api.configure(CONF)
        facade.configure(connection='sqlite:///%s/nova.sqlite' % path)
        migration.db_sync(database='main')

    def build(self):
        return self.compute._do_build_and_run_instance(
            self.ctx, self.inst, helpers.image(self.image.id), None, {}, None,
            [], None, [], [], node='unit-host')

    def events(self):
        """(event, result) of the boot's action, in the order they started.

        Each has its start and finish time and this host.
        """
        events = objects.InstanceActionEventList.get_by_action(
            self.ctx, self.action.id)
        self.assertEqual({'unit-host'}, {e.host for e in events})
        for e in events:
            self.assertLessEqual(e.start_time, e.finish_time)
        return [(e.event, e.result) for e in reversed(events)]

    def test_boot(self):
        self.assertEqual(build_results.ACTIVE, self.build())
        self.assertEqual([(e, 'Success') for e in self.BOOT], self.events())
        self.assertEqual(vm_states.ACTIVE, objects.Instance.get_by_uuid(
            self.ctx, self.inst.uuid).vm_state)

    def test_failed_step(self):
        self.client.api.exit_on_start = True
        self.assertEqual(build_results.FAILED, self.build())
        # Nova's own event succeeds: it turns the failure into a result
        self.assertEqual([(e, 'Success') for e in self.BOOT[:5]] +
                         [('docker_start', 'Error')], self.events())
        start = objects.InstanceActionEventList.get_by_action(
            self.ctx, self.action.id)[0]
        # the frames only (Nova's): the message is the instance fault's
        self.assertIn('in _start_container', start.traceback)
        self.assertEqual('Error', objects.InstanceAction.get_by_request_id(
            self.ctx, self.inst.uuid, self.ctx.request_id).message)
        self.assertEqual({}, self.client.api.store)
