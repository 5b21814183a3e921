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
"""Batched polling (``[vmct] poll_mode = batched``): one Nova list per poll for many servers.

Per-server polling GETs each server every ``poll_interval``: at concurrency 256,
up to 1,280 requests per second to nova-api. Rally runs iterations as threads
inside worker processes, so a :class:`Watcher`, one per process and Nova endpoint,
project and user (:func:`shared`), lists ``GET /servers/detail?changes-since=T``
every ``poll_interval`` while any :class:`~rally_vmct.timing.waiter.ServerWaiter`
of it waits, and hands each waiter its server's new state. What Nova answers
(Nova 34, ``api/openstack/compute/servers.py`` ``_get_servers``, the ``show``
view per entry, ``db/main/api.py`` ``instance_get_all_by_filters_sort``):

* the caller's project's servers whose ``updated_at`` >= T, deleted ones included
  (status ``DELETED``; changes-since lifts the ``deleted=False`` filter), each
  with every field a GET shows: ``OS-EXT-STS:task_state``, ``vm_state``,
  ``power_state``, ``fault`` for ERROR (the list fills faults), addresses. No
  field the waiter reads is missing, so no GET is needed for one.
* Each change of those fields is an ``instance.save()``, which sets
  ``updated_at``; a delete saves ``vm_state=deleted`` just before its soft delete
  (which keeps ``updated_at``). Build requests (not scheduled yet) are listed
  whatever T is; between them and the first save of the instance (``updated_at``
  still empty) a server is not listed, so a waiter that has never seen its
  server GETs it once when the list does not show it.

So a server absent from an answer has not changed: its waiter's state stays. A
server listed as DELETED is gone, as a 404 is. T is when the previous list was
sent (or a waiter joining late last looked) minus ``[vmct] changes_since_margin``:
``updated_at`` has whole seconds in MySQL, and Nova's clock may differ from this
host's. Transitions keep their meaning: 'at' is when the list's answer arrived,
'since' when the previous list (or look) this waiter got was sent.

Lists are paced like a server's GETs (interval, rate cap, back-off after API
errors), and an action request (create, reboot...) makes the next one go at
once, as :meth:`~rally_vmct.timing.waiter.Pacer.sent` does. One list is in
flight at a time: the poll period is the longer of the interval and the list's
latency. There is no thread of its own: a waiter that finds a list due sends it
for all, the others wait for its answer. Each list's requests are shared among
the servers waited for while it ran (:meth:`ServerWaiter.cost`).
"""

import collections
import datetime
import os
import threading

from rally_vmct.timing import waiter

# Nova's [api] max_limit default: a page this long is followed by the next one.
PAGE_SIZE = 1000


def iso(wall):
    """ISO 8601 UTC of a wall-clock time, as changes-since takes it."""
    return datetime.datetime.fromtimestamp(wall, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


def lister(nova):
    """``list_servers(changes_since, marker)`` over a novaclient."""
    def list_servers(changes_since, marker=None):
        return nova.servers.list(detailed=True, marker=marker,
                                 search_opts={"changes-since": changes_since})
    return list_servers


class _Member:
    """A waiter being watched: the answers it has not read yet, its changes-since."""

    def __init__(self, server_waiter, since_wall):
        self.waiter = server_waiter
        self.server_id = server_waiter.server_id
        self.since_wall = since_wall
        self.inbox = collections.deque()

    def deliver(self, server, sent, received, sent_wall):
        if server is not waiter.UNCHANGED and getattr(server, "status", None) == "DELETED":
            server = None            # gone, as a 404 says
        # Unchanged after unchanged: the newer one says all the older one did.
        if server is waiter.UNCHANGED and self.inbox and self.inbox[-1][0] is waiter.UNCHANGED:
            self.inbox.pop()
        self.inbox.append((server, sent, received))
        self.since_wall = sent_wall


class Watcher:
    """Polls the servers its waiters wait for with one changes-since list per poll.

    :param list_servers: callable(changes_since ISO string, marker) -> servers
        (:func:`lister`)
    :param margin: seconds subtracted from changes-since
    """

    # A waiter whose last look is older than this (s) starts with a GET of its
    # server rather than widening everyone's changes-since window back to it.
    stale_after = 5.0

    def __init__(self, list_servers, interval=0.2, max_interval=2.0,
                 max_requests_per_second=5.0, margin=2.0, clock=None):
        self.clock = clock or waiter.Clock()
        self.pacer = waiter.Pacer(interval, max_interval, max_requests_per_second,
                                  clock=self.clock)
        self.list_servers = list_servers
        self.margin = margin
        self.requests = 0          # list requests sent (pages and retries included)
        self.lists = 0             # lists answered
        self._members = {}         # ServerWaiter -> _Member
        self._urgent = set()       # members that requested an action since their last poll
        self._listing = False
        self._cond = threading.Condition()

    def register(self, server_waiter):
        """Watch ``server_waiter``'s server until :meth:`unregister`."""
        since = server_waiter.seen_wall
        member = _Member(server_waiter, self.clock.wall() if since is None else since)
        with self._cond:
            self._members[server_waiter] = member
            if server_waiter.urgent:
                self._urgent.add(member)
                self._cond.notify_all()

    def unregister(self, server_waiter):
        with self._cond:
            self._urgent.discard(self._members.pop(server_waiter, None))

    def next_answer(self, server_waiter, deadline, what):
        """``(server or None or UNCHANGED, sent, received)``: the next list's word on it."""
        with self._cond:
            member = self._members[server_waiter]
        while True:
            with self._cond:
                if member.inbox:
                    return member.inbox.popleft()
                lead = self._take_turn(deadline, what)
            if lead:
                try:
                    self._list_for_all(deadline, what)
                finally:
                    with self._cond:
                        self._listing = False
                        self._cond.notify_all()

    def _take_turn(self, deadline, what):
        """Under the lock: True when this caller is to list now; else wait a little."""
        now = self.clock.monotonic()
        if self._listing:
            if now >= deadline:
                error = self.pacer.last_error
                raise waiter.WaitTimeout("No server list answered in time while %s%s" % (
                    what, "; last API error: %s" % error if error is not None else ""))
            self.clock.wait(self._cond, deadline - now)
            return False
        pause = 0 if self._urgent else self.pacer.next_start() - now
        if pause > 0:
            self.clock.wait(self._cond, pause)
            return False
        self._listing = True
        return True

    def _list_for_all(self, deadline, what):
        with self._cond:
            members = list(self._members.values())
            since = min(member.since_wall for member in members) - self.margin
            if self._urgent:
                self._urgent.clear()
                self.pacer.hurry()
        pages = []
        before = self.pacer.requests
        try:
            servers, sent, received = self.pacer.call(
                lambda: self._list_pages(iso(since), pages), deadline, what)
        finally:
            self._share(self.pacer.requests - before + len(pages), members)
        sent_wall = self.clock.wall_of(sent)
        listed = {server.id: server for server in servers}
        with self._cond:
            self.lists += 1
            for member in members:
                if self._members.get(member.waiter) is member:
                    member.deliver(listed.get(member.server_id, waiter.UNCHANGED), sent,
                                   received, sent_wall)

    def _list_pages(self, changes_since, pages):
        servers = []
        marker = None
        while True:
            page = self.list_servers(changes_since, marker)
            servers.extend(page)
            if len(page) < PAGE_SIZE:
                return servers
            marker = page[-1].id
            pages.append(marker)        # one more request

    def _share(self, requests, members):
        """Divide a list's requests among the servers waited for while it ran."""
        with self._cond:
            self.requests += requests
            for member in members:
                member.waiter.list_requests += requests / len(members)


_watchers = {}
_watchers_lock = threading.Lock()


def _forget_after_fork():
    # A forked Rally worker starts with no watcher (and no lock held by a thread
    # that does not exist in it).
    global _watchers_lock
    _watchers.clear()
    _watchers_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def client_key(nova):
    """(endpoint, project, user) of a novaclient; the client itself if it cannot say."""
    http = getattr(nova, "client", None)
    try:
        key = (http.get_endpoint(), http.get_project_id(), http.get_user_id())
    except Exception:
        key = (None,)
    return key if None not in key else ("client", id(nova))


def shared(nova, clock=None, **settings):
    """This process's :class:`Watcher` of ``nova``'s endpoint, project and user.

    The first call creates it with ``settings`` (:class:`Watcher`'s keyword
    arguments); later ones make it list through their client, the newest.
    """
    key = client_key(nova)
    with _watchers_lock:
        found = _watchers.get(key)
        if found is None:
            found = _watchers[key] = Watcher(lister(nova), clock=clock, **settings)
        else:
            found.list_servers = lister(nova)
    return found
