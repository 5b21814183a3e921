"""tools/aio/aio.py: the checks `tools/aio/up` waits on, without a cloud."""

import calendar
import os
import types

import testtools

from tests.unit import tools

aio = tools.load("vmct_aio", os.path.join(tools.TOOLS, "aio", "aio.py"))
# 2026-01-02T03:04:05Z
T = calendar.timegm((2026, 1, 2, 3, 4, 5))


def service(host, updated_at, state="up", status="enabled"):
    return types.SimpleNamespace(host=host, updated_at=updated_at, state=state, status=status)


class FakeConn:

    def __init__(self, services, agents=()):
        self.compute = types.SimpleNamespace(services=lambda binary, host: [
            s for s in services if s.host == host])
        self.network = types.SimpleNamespace(agents=lambda host: [
            a for a in agents if a.host == host])


class ComputeUpTestCase(testtools.TestCase):

    def test_a_report_after_the_start_second_counts(self):
        self.assertTrue(aio.reported_since("2026-01-02T03:04:06.000000", T))
        self.assertTrue(aio.reported_since("2026-01-02T03:04:06Z", T))
        # the second the compute started may hold the old process's last report
        self.assertFalse(aio.reported_since("2026-01-02T03:04:05.000000", T))
        self.assertFalse(aio.reported_since("2026-01-02T03:03:59.000000", T))
        self.assertFalse(aio.reported_since(None, T))
        self.assertTrue(aio.reported_since(None, None))

    def test_a_restarted_compute_is_up_once_it_reported_since_its_start(self):
        conn = FakeConn([service("h", "2026-01-02T03:04:00.000000")])
        self.assertTrue(aio.compute_up(conn, "h"))
        self.assertFalse(aio.compute_up(conn, "h", since=T))
        conn = FakeConn([service("h", "2026-01-02T03:04:10.000000", status="disabled")])
        self.assertFalse(aio.compute_up(conn, "h", since=T))

    def test_wait_computes_takes_host_at_epoch(self):
        agent = types.SimpleNamespace(host="h", is_alive=True, agent_type="Open vSwitch agent")
        conn = FakeConn([service("h", "2026-01-02T03:04:10.000000"),
                         service("g", "2026-01-02T03:04:10.000000")],
                        [agent, types.SimpleNamespace(host="g", is_alive=True,
                                                      agent_type="Open vSwitch agent")])
        self.assertTrue(aio.wait_computes(conn, "ovs", 1, ["h@%d" % T, "g"]))
        self.assertFalse(aio.wait_computes(conn, "ovs", 0, ["h@%d" % (T + 10)]))

    def test_wait_computes_waits_for_the_backends_agent(self):
        conn = FakeConn([service("h", "2026-01-02T03:04:10.000000"),
                         service("g", "2026-01-02T03:04:10.000000")],
                        [types.SimpleNamespace(host="h", is_alive=True,
                                               agent_type="OVN Controller Gateway agent"),
                         types.SimpleNamespace(host="g", is_alive=True,
                                               agent_type="OVN Controller agent")])
        self.assertTrue(aio.wait_computes(conn, "ovn", 0, ["h", "g"]))
        # an ML2/OVS cloud waits for Open vSwitch agents, which this one has none of
        self.assertFalse(aio.wait_computes(conn, "ovs", 0, ["h"]))

    def test_a_dead_or_other_agent_does_not_wire_the_host(self):
        conn = FakeConn([], [types.SimpleNamespace(host="h", is_alive=False,
                                                   agent_type="OVN Controller agent"),
                             types.SimpleNamespace(host="h", is_alive=True,
                                                   agent_type="OVN Metadata agent")])
        self.assertFalse(aio.agent_alive(conn, "h", *aio.HOST_AGENT_TYPES["ovn"]))
