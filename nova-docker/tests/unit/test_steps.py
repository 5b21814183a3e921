import contextlib

import fixtures
import testtools

from nova import exception
from nova_docker_vmct import compat
from nova_docker_vmct import steps

from tests import helpers


class TestStepTimer(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = helpers.Clock()

    def test_steps_in_order_and_summary(self):
        timer = steps.StepTimer(clock=self.clock)
        for name, seconds in [('image_cache', 0.014), ('create', 0.4)]:
            with timer.step(name):
                self.clock.advance(seconds)
        self.clock.advance(0.1)     # between steps: only in the total
        self.assertEqual([('image_cache', 0.014, False),
                          ('create', 0.4, False)],
                         [(n, round(t, 3), f) for n, t, f in timer.steps])
        self.assertEqual('image_cache 0.01, create 0.40', timer.summary())
        self.assertAlmostEqual(0.514, timer.elapsed())

    def test_failed_step_is_timed_and_its_error_goes_on(self):
        timer = steps.StepTimer(clock=self.clock)
        with testtools.ExpectedException(ValueError, 'no space'):
            with timer.step('create'):
                self.clock.advance(1.25)
                raise ValueError('no space')
        self.assertEqual('create 1.25 failed', timer.summary())

    def test_recording_is_not_part_of_the_step(self):
        recorded = []

        @contextlib.contextmanager
        def record(name):
            self.clock.advance(0.5)     # two conductor calls
            recorded.append(name)
            yield
            self.clock.advance(0.5)
        timer = steps.StepTimer(clock=self.clock, record=record)
        with timer.step('start'):
            self.clock.advance(0.25)
        self.assertEqual(['start'], recorded)
        self.assertEqual('start 0.25', timer.summary())
        self.assertEqual(1.25, timer.elapsed())

    def test_exit_step_is_what_is_left_after_the_body(self):
        clock = self.clock

        @contextlib.contextmanager
        def waiter():
            began = clock()
            yield 'entered'
            clock.until(began + 2.0)    # the event came 2 s after entering
        timer = steps.StepTimer(clock=clock)
        with timer.exit_step('wait', waiter()) as value:
            with timer.step('plug'):
                clock.advance(0.75)
        self.assertEqual('entered', value)
        self.assertEqual('plug 0.75, wait 1.25', timer.summary())

    def test_exit_step_after_a_failed_body_is_no_step(self):
        timer = steps.StepTimer(clock=self.clock)
        with testtools.ExpectedException(ValueError):
            with timer.exit_step('wait', contextlib.nullcontext()):
                raise ValueError()
        self.assertEqual([], timer.steps)

    def test_exit_step_fails_with_its_exit(self):
        @contextlib.contextmanager
        def waiter():
            yield
            raise compat.InstanceEventTimeout()
        timer = steps.StepTimer(clock=self.clock)
        self.assertRaises(compat.InstanceEventTimeout,
                          self._exit_step, timer, waiter())
        self.assertEqual('wait 0.00 failed', timer.summary())

    @staticmethod
    def _exit_step(timer, manager):
        with timer.exit_step('wait', manager):
            pass


class TestActionEvents(testtools.TestCase):
    """Noted during the spawn, created after it; InstanceActionEvent replaced."""

    def setUp(self):
        super().setUp()
        self.events = self.useFixture(helpers.ActionEvents())
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct.steps'))
        self.ctx = helpers.context()
        self.record = steps.ActionEvents(self.ctx, 'uuid-1', 'unit-host')

    def test_nothing_is_sent_during_the_steps(self):
        with self.record('create'):
            pass
        with self.record('start'):
            self.assertEqual([], self.events.calls)
        self.assertEqual([], self.events.calls)
        self.record.send()
        self.assertEqual(['docker_create', 'docker_start'],
                         [c[1] for c in self.events.calls])
        self.record.send()      # sent once
        self.assertEqual(2, len(self.events.calls))

    def test_created_on_the_request_of_the_context_with_the_steps_times(self):
        with self.record('create'):
            pass
        self.record.send()
        (what, event, request_id, uuid, host, result, details, start,
         finish) = self.events.calls[0]
        self.assertEqual(('create', 'docker_create', self.ctx.request_id,
                          'uuid-1', 'unit-host', 'Success', None),
                         (what, event, request_id, uuid, host, result,
                          details))
        self.assertLessEqual(start, finish)

    def test_a_failed_step_finishes_with_its_error(self):
        with testtools.ExpectedException(ValueError, 'conflict'):
            with self.record('create'):
                raise ValueError('conflict')
        self.record.send()
        self.assertEqual([('docker_create', 'Error')], self.events.finished())
        # finished as EventReporter finishes it: the action is marked Error;
        # as Nova does, only a NovaException's message is shown, else its class
        self.assertEqual(('finish', 'docker_create', 'ValueError'),
                         self.events.calls[-1])

    def test_recording_errors_are_logged_never_raised(self):
        self.events.fail_create = exception.InstanceActionNotFound(
            request_id='req-1', instance_uuid='uuid-1')
        with self.record('create'):
            pass
        with self.record('start'):
            pass
        self.record.send()
        self.assertEqual(2, self.log.output.count(
            'Could not record instance action event docker_'))
        self.assertIn('docker_create: Action for request_id req-1',
                      self.log.output)

    def test_no_thread_to_send_them_is_logged_never_raised(self):
        record = steps.ActionEvents(
            self.ctx, 'uuid-1', 'unit-host',
            spawn=mock_spawn_failing(RuntimeError('executor shut down')))
        with record('create'):
            pass
        self.assertIsNone(record.send())
        self.assertIn('Could not record instance action events '
                      '[\'docker_create\']: executor shut down',
                      self.log.output)


def mock_spawn_failing(error):
    def spawn(func, *args):
        raise error
    return spawn
