# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Timed steps of one driver operation (spawn), for its log line and as
events of the instance's current action (``openstack server event show``).
"""

import contextlib
import sys
import time

from oslo_log import log as logging

from nova.compute import utils as compute_utils

LOG = logging.getLogger(__name__)


class StepTimer(object):
    """Named steps in the order they ran, each timed on a monotonic clock.

    ``record(name)`` returns a context manager around each step (default:
    none; :class:`ActionEvents` records an instance action event); the
    time it takes itself is not part of the step's.
    """

    def __init__(self, clock=time.monotonic, record=contextlib.nullcontext):
        self._clock = clock
        self._record = record
        self._started = clock()
        self.steps = []     # (name, seconds, failed)

    @contextlib.contextmanager
    def step(self, name):
        with self._record(name):
            started = self._clock()
            failed = True
            try:
                yield
                failed = False
            finally:
                self.steps.append((name, self._clock() - started, failed))

    def exit_step(self, name, manager):
        """Enter ``manager``; step ``name`` is its exit.

        After a body that succeeded: what is left to wait once the body's
        own work is done (no step after a body that failed).
        """
        return _ExitStep(self, name, manager)

    def elapsed(self):
        return self._clock() - self._started

    def summary(self):
        """'image_cache 0.01, create 0.40, ..., start 0.35 failed'."""
        return ', '.join('%s %.2f%s' % (name, seconds,
                                        ' failed' if failed else '')
                         for name, seconds, failed in self.steps)


class _ExitStep(object):

    def __init__(self, timer, name, manager):
        self._timer = timer
        self._name = name
        self._manager = manager

    def __enter__(self):
        return self._manager.__enter__()

    def __exit__(self, *exc_info):
        if exc_info[0] is not None:
            return self._manager.__exit__(*exc_info)
        with self._timer.step(self._name):
            return self._manager.__exit__(None, None, None)


class ActionEvents(object):
    """Steps as instance action events (``record`` of :class:`StepTimer`).

    Each step is an event ``<prefix><name>`` of the instance's action of the
    context's request (Nova's EventReporter: start and finish, Error with
    the traceback when the step raised). Recording is best effort: a
    failure to record is logged and the step runs, or its own exception
    goes on, unchanged.
    """

    def __init__(self, context, instance_uuid, host, prefix='docker_'):
        self._context = context
        self._instance_uuid = instance_uuid
        self._host = host
        self._prefix = prefix

    @contextlib.contextmanager
    def __call__(self, name):
        reporter = compute_utils.EventReporter(
            self._context, self._prefix + name, self._host,
            self._instance_uuid)
        try:
            reporter.__enter__()
        except Exception as e:
            self._not_recorded(reporter, 'start', e)
            yield
            return
        exc_info = (None, None, None)
        try:
            yield
        except BaseException:
            exc_info = sys.exc_info()
            raise
        finally:
            try:
                reporter.__exit__(*exc_info)
            except Exception as e:
                self._not_recorded(reporter, 'finish', e)

    def _not_recorded(self, reporter, what, error):
        LOG.warning('Could not record the %(what)s of instance action event '
                    '%(event)s: %(error)s',
                    {'what': what, 'event': reporter.event_name,
                     'error': error}, instance_uuid=self._instance_uuid)
