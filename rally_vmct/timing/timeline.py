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
"""Lifecycle phases recorded as Rally atomic actions, bounded by observed instants.

Rally's ``ActionTimer`` stamps an atomic action when a ``with`` block is entered
and left. A lifecycle phase ends when the waiter *observed* a change (the
answer that showed ACTIVE, the first TCP connect that got through), and the
next phase starts at that same instant, so :class:`Phase` takes explicit
monotonic bounds and writes the same structure as Rally
(``{"name", "started_at", "finished_at", "children", "failed"}``, wall-clock
seconds) into the scenario's atomic action list. Phases nest like Rally's timers
(and Rally's own timers opened inside a phase nest under it).

No Rally import: the structure is plain dicts.
"""


class Timeline:
    """Maps monotonic instants to wall-clock time for one scenario iteration.

    :param actions: the scenario's atomic action list (``scenario._atomic_actions``)
    :param clock: object with ``monotonic()`` and ``wall()``
    """

    def __init__(self, actions, clock):
        self.actions = actions
        self.clock = clock
        self.mono0 = clock.monotonic()
        self.wall0 = clock.wall()

    def wall(self, mono):
        return self.wall0 + (mono - self.mono0)

    def now(self):
        return self.clock.monotonic()

    def phase(self, name, start=None):
        """A :class:`Phase` named ``name`` starting at ``start`` (monotonic; now by default)."""
        return Phase(self, name, start)

    def _open_list(self):
        actions = self.actions
        while actions and "finished_at" not in actions[-1]:
            actions = actions[-1]["children"]
        return actions


class Phase:
    """One atomic action; ``end(at)`` sets its end, else it ends when the block exits."""

    def __init__(self, timeline, name, start=None):
        self.timeline = timeline
        self.name = name
        self.start = timeline.now() if start is None else start
        self.finish = None
        self.action = None
        self._parent = None

    def __enter__(self):
        self._parent = self.timeline._open_list()
        self.action = {"name": self.name, "children": [],
                       "started_at": self.timeline.wall(self.start)}
        self._parent.append(self.action)
        return self

    def end(self, at):
        """The phase ended at monotonic ``at`` (an observation's time)."""
        self.finish = at

    def discard(self):
        """Drop this phase from the record (its bounds could not be observed)."""
        self._parent.remove(self.action)
        self.action = None

    def rename(self, name):
        """Rename this phase and the prefix of its children (``old.x`` -> ``new.x``)."""
        old = self.name
        self.name = name

        def walk(action):
            if action["name"] == old or action["name"].startswith(old + "."):
                action["name"] = name + action["name"][len(old):]
            for child in action["children"]:
                walk(child)
        if self.action is not None:
            walk(self.action)

    @property
    def duration(self):
        return None if self.finish is None else self.finish - self.start

    def __exit__(self, exc_type, exc, tb):
        if self.finish is None:
            self.finish = self.timeline.now()
        if self.action is None:
            return
        self.action["finished_at"] = self.timeline.wall(self.finish)
        if exc_type is not None:
            self.action["failed"] = True
