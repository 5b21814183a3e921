import contextlib

import fixtures
import testtools

from nova import exception
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
            raise exception.InstanceEventTimeout()
        timer = steps.StepTimer(clock=self.clock)
        self.assertRaises(exception.InstanceEventTimeout,
                          self._exit_step, timer, waiter())
        self.assertEqual('wait 0.00 failed', timer.summary())

    @staticmethod
    def _exit_step(timer, manager):
        with timer.exit_step('wait', manager):
            pass


class TestActionEvents(testtools.TestCase):
    """Through Nova's EventReporter, InstanceActionEvent replaced."""

    def setUp(self):
        super().setUp()
        self.events = self.useFixture(helpers.ActionEvents())
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct.steps'))
        self.ctx = helpers.context()
        self.record = steps.ActionEvents(self.ctx, 'uuid-1', 'unit-host')

    def test_start_and_finish_on_the_request_of_the_context(self):
        with self.record('create'):
            pass
        self.assertEqual(
            [('start', 'docker_create', self.ctx.request_id, 'uuid-1',
              'unit-host'),
             ('finish', 'docker_create', None)], self.events.calls)

    def test_a_failed_step_finishes_with_its_error(self):
        error = ValueError('conflict')
        with testtools.ExpectedException(ValueError, 'conflict'):
            with self.record('create'):
                raise error
        self.assertEqual(('finish', 'docker_create', error), self.events.calls[-1])

    def test_start_not_recorded_the_step_runs(self):
        self.events.fail_start = exception.InstanceActionNotFound(
            request_id='req-1', instance_uuid='uuid-1')
        ran = []
        with self.record('create'):
            ran.append(True)
        self.assertEqual([True], ran)
        self.assertEqual(['start'], [c[0] for c in self.events.calls])
        self.assertIn('Could not record the start of instance action event '
                      'docker_create: Action for request_id req-1',
                      self.log.output)

    def test_finish_not_recorded_the_steps_own_error_goes_on(self):
        self.events.fail_finish = RuntimeError('conductor timeout')
        with testtools.ExpectedException(ValueError, 'conflict'):
            with self.record('create'):
                raise ValueError('conflict')
        with self.record('start'):
            pass
        self.assertEqual(2, self.log.output.count(
            'Could not record the finish'))
