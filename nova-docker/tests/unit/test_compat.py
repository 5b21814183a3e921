"""What differs between Nova 31 and 34 (nova_docker_vmct.compat).

Each code path on its own, and the one the running Nova takes against that
Nova itself: tools/test-matrix runs these under each supported series.
"""

import inspect
import time
import types

import eventlet.timeout
import fixtures
from oslo_config import fixture as config_fixture
import testtools

from nova.compute import manager
import nova.conf
from nova import exception
from nova.virt import driver as nova_driver
from nova.virt import fake as nova_fake
from nova_docker_vmct import compat
from nova_docker_vmct import driver as docker_driver
from nova_docker_vmct import floor
from nova_docker_vmct import vif_events

from tests import helpers

CONF = nova.conf.CONF


def running_major():
    return int(docker_driver.nova_version().split('.')[0])


def importer(modules):
    """An import_module that knows only ``modules`` (name -> module)."""
    def import_module(name):
        try:
            return modules[name]
        except KeyError:
            raise ImportError('No module named %r' % name)
    return import_module


class TestBackgroundSpawn(testtools.TestCase):

    def test_nova_34_thread_pool_factory(self):
        pools = types.SimpleNamespace(spawn=lambda f: 'pool')
        utils = types.SimpleNamespace(spawn=lambda f: 'utils')
        spawn = compat.background_spawn(importer({
            'nova.thread_pool_factory': pools, 'nova.utils': utils}))
        self.assertIs(pools.spawn, spawn)

    def test_nova_31_to_33_utils(self):
        utils = types.SimpleNamespace(spawn=lambda f: 'utils')
        spawn = compat.background_spawn(importer({'nova.utils': utils}))
        self.assertIs(utils.spawn, spawn)

    def test_the_running_nova(self):
        if running_major() >= 34:
            from nova import thread_pool_factory
            self.assertIs(thread_pool_factory.spawn, compat.spawn)
        else:
            from nova import utils
            self.assertIs(utils.spawn, compat.spawn)

    def test_runs_in_the_background_with_the_request_context(self):
        ctx = helpers.context()
        ctx.update_store()
        seen = []

        def work(arg):
            from oslo_context import context as common_context
            seen.append((arg, common_context.get_current()))
            return arg * 2

        handle = compat.spawn(work, 21)
        # a futurist Future (32 on) or an eventlet GreenThread (31)
        wait = getattr(handle, 'result', None) or handle.wait
        self.assertEqual(42, wait())
        self.assertEqual([(21, ctx)], seen)


class TestEventTimeout(testtools.TestCase):

    def test_nova_32_on_its_own_exception(self):
        nova_exception = types.SimpleNamespace(InstanceEventTimeout=KeyError)
        self.assertIs(KeyError, compat.event_timeout(nova_exception))

    def test_nova_31_eventlet_timeout(self):
        self.assertIs(eventlet.timeout.Timeout,
                      compat.event_timeout(types.SimpleNamespace()))

    def test_the_running_nova(self):
        expected = (exception.InstanceEventTimeout if running_major() >= 32
                    else eventlet.timeout.Timeout)
        self.assertIs(expected, compat.InstanceEventTimeout)


class KeywordDeadline(object):
    """VirtAPI.wait_for_instance_event of Nova 31 and 32."""

    def wait_for_instance_event(self, instance, event_names, deadline=300,
                                error_callback=None):
        return ('deadline', instance, event_names, deadline, error_callback)


class KeywordTimeout(object):
    """VirtAPI.wait_for_instance_event of Nova 33 and 34."""

    def wait_for_instance_event(self, instance, event_names, timeout=300,
                                error_callback=None):
        return ('timeout', instance, event_names, timeout, error_callback)


class TestWaitForInstanceEvent(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.conf = self.useFixture(config_fixture.Config(CONF))
        self.inst = helpers.instance()
        self.events = [('network-vif-plugged', 'port-1')]

    def test_nova_31_and_32_deadline(self):
        self.assertEqual(
            ('deadline', 'i', ['e'], 7, print),
            compat.wait_for_instance_event(KeywordDeadline(), 'i', ['e'], 7,
                                           error_callback=print))

    def test_nova_33_on_timeout(self):
        self.assertEqual(
            ('timeout', 'i', ['e'], 7, print),
            compat.wait_for_instance_event(KeywordTimeout(), 'i', ['e'], 7,
                                           error_callback=print))

    def test_the_running_nova_names_the_third_argument(self):
        params = list(inspect.signature(
            manager.ComputeVirtAPI.wait_for_instance_event).parameters)
        expected = 'deadline' if running_major() <= 32 else 'timeout'
        self.assertEqual(['self', 'instance', 'event_names', expected,
                          'error_callback'], params)

    def virtapi(self):
        """Nova's own ComputeVirtAPI, with its real event bookkeeping."""
        compute = types.SimpleNamespace(
            reportclient=None, instance_events=manager.InstanceEvents())
        return manager.ComputeVirtAPI(compute)

    def test_real_wait_times_out_with_compat_exception(self):
        started = time.monotonic()
        with testtools.ExpectedException(compat.InstanceEventTimeout):
            with compat.wait_for_instance_event(
                    self.virtapi(), self.inst, self.events, 0.2):
                pass
        # the timeout went where it was meant to: not 300 s, not none
        self.assertGreaterEqual(time.monotonic() - started, 0.15)

    def test_vif_timeout_not_fatal_goes_on(self):
        # vif_events.plugged with the real VirtAPI: Nova 31's eventlet
        # Timeout is a BaseException and must still be caught
        self.conf.config(vif_plugging_timeout=1, vif_plugging_is_fatal=False)
        log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct.vif_events'))
        nw = [dict(helpers.vif(active=False), id='port-1')]
        ran = []
        with vif_events.plugged(self.virtapi(), self.inst, nw):
            ran.append(True)
        self.assertEqual([True], ran)
        self.assertIn('Timed out waiting for network-vif-plugged', log.output)

    def test_vif_timeout_fatal(self):
        self.conf.config(vif_plugging_timeout=1, vif_plugging_is_fatal=True)
        nw = [dict(helpers.vif(active=False), id='port-1')]
        with testtools.ExpectedException(
                exception.VirtualInterfaceCreateException):
            with vif_events.plugged(self.virtapi(), self.inst, nw):
                pass


class TestDriverSignatures(testtools.TestCase):
    """The drivers' methods take what the running Nova passes.

    Nova's compute manager passes many arguments by keyword: every
    ComputeDriver method a driver overrides must take the same ones.
    """

    def check(self, cls, base):
        checked = []
        for name, method in vars(cls).items():
            theirs = getattr(base, name, None)
            if name.startswith('_') or not callable(theirs):
                continue
            if isinstance(method, (staticmethod, property)):
                continue
            ours = [(p.name, p.kind) for p in
                    inspect.signature(method).parameters.values()]
            expected = [(p.name, p.kind) for p in
                        inspect.signature(theirs).parameters.values()]
            self.assertEqual(expected, ours, '%s.%s' % (cls.__name__, name))
            checked.append(name)
        return checked

    def test_docker_driver(self):
        checked = self.check(docker_driver.DockerDriver,
                             nova_driver.ComputeDriver)
        for name in ('spawn', 'rescue', 'reboot', 'power_on', 'destroy',
                     'resume', 'get_available_resource',
                     'update_provider_tree', 'init_host'):
            self.assertIn(name, checked)

    def test_rescue_takes_share_info(self):
        # share_info came with Nova 31 (the oldest supported): the manager
        # passes it by keyword in all four
        params = inspect.signature(
            docker_driver.DockerDriver.rescue).parameters
        self.assertIn('share_info', params)
        self.assertIn('share_info', inspect.signature(
            nova_driver.ComputeDriver.rescue).parameters)

    def test_floor_driver(self):
        checked = self.check(floor.FloorDriver, nova_fake.FakeDriver)
        self.assertIn('spawn', checked)
