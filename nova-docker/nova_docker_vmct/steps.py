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
import traceback

from oslo_log import log as logging

from nova import objects

from nova_docker_vmct import compat

LOG = logging.getLogger(__name__)
# what InstanceActionEvent.pack_action_event_finish adds to an event
FINISH_FIELDS = ('finish_time', 'result', 'details', 'traceback')


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

    def send(self):
        """Let the recorder send what it noted (:meth:`ActionEvents.send`)."""
        send = getattr(self._record, 'send', None)
        return send() if send else None

    def summary(self):
        """'image_cache 0.01, create 0.40, ..., start 0.35 failed'."""
        return ', '.join('%s %.2f%s' % (name, seconds,
                                        ' failed' if failed else '')
                         for name, seconds, failed in self.steps)


def spawn_timer(context, instance_uuid, host, clock, prefix, events=True):
    """A spawn's :class:`StepTimer`; with ``events``, each step is an event."""
    if not events:
        return StepTimer(clock=clock)
    return StepTimer(clock=clock, record=ActionEvents(
        context, instance_uuid, host, prefix=prefix))


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
    context's request, with what Nova's EventReporter would write: start
    and finish time, host, result, and for a step that raised ``Error``
    with the exception's message and traceback. EventReporter costs two
    conductor calls per step inside the spawn: about 1.5 s of a Docker boot
    in the all-in-one cloud (tools/bench/spawn-gap), time the instance is
    not ACTIVE yet. So a step's event is only noted when the step ends,
    and :meth:`send` creates them all in the background once the spawn is
    over (``InstanceActionEvent.create``, one call each, times as noted).
    Recording is best effort: a failure is logged, never raised.
    """

    def __init__(self, context, instance_uuid, host, prefix='docker_',
                 spawn=None):
        self._context = context
        self._instance_uuid = instance_uuid
        self._host = host
        self._prefix = prefix
        self._spawn = spawn or compat.spawn
        self.noted = []     # the events' values, in the order steps ended

    @contextlib.contextmanager
    def __call__(self, name):
        event_name = self._prefix + name
        values = objects.InstanceActionEvent.pack_action_event_start(
            self._context, self._instance_uuid, event_name, host=self._host)
        exc_val = exc_tb = None
        try:
            yield
        except BaseException as e:
            exc_val, exc_tb = e, ''.join(
                traceback.format_tb(sys.exc_info()[2]))
            raise
        finally:
            values.update(objects.InstanceActionEvent.pack_action_event_finish(
                self._context, self._instance_uuid, event_name,
                exc_val=exc_val, exc_tb=exc_tb))
            self.noted.append(values)

    def send(self):
        """Create the noted events in the background (:func:`compat.spawn`)."""
        noted, self.noted = self.noted, []
        if not noted:
            return None
        try:
            return self._spawn(self._create, noted)
        except Exception as e:      # no thread to send them (shutting down)
            LOG.warning('Could not record instance action events %(events)s: '
                        '%(error)s', {'events': [v['event'] for v in noted],
                                      'error': e},
                        instance_uuid=self._instance_uuid)
            return None

    def _create(self, noted):
        for values in noted:
            failed = values['result'] == 'Error'
            # a failed step's event is finished as EventReporter finishes it,
            # which also marks the action Error: its finish time is then
            # when it was sent
            fields = {k: v for k, v in values.items()
                      if k not in ('instance_uuid', 'request_id') and not (
                          failed and k in FINISH_FIELDS)}
            try:
                objects.InstanceActionEvent(
                    context=self._context, **fields).create(
                        self._instance_uuid, self._context.request_id)
                if failed:
                    objects.InstanceActionEvent.event_finish_with_failure(
                        self._context, self._instance_uuid, values['event'],
                        exc_val=values.get('details'),
                        exc_tb=values.get('traceback'), want_result=False)
            except Exception as e:
                LOG.warning('Could not record instance action event '
                            '%(event)s: %(error)s',
                            {'event': values['event'], 'error': e},
                            instance_uuid=self._instance_uuid)
