"""devstack/tools/vmct_aggregates.py with a fake compute API."""

import importlib.util
import io
import os
import types

import testtools

from tests.unit.devstack import base

VALUES = os.path.join(base.ROOT, "tools", "vmct-values")
_spec = importlib.util.spec_from_file_location(
    "vmct_aggregates", os.path.join(base.DEVSTACK, "tools", "vmct_aggregates.py"))
agg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agg)


def hv(host, hv_type, status="enabled", state="up"):
    return types.SimpleNamespace(hypervisor_type=hv_type, status=status, state=state,
                                 service_details={"host": host, "id": 1})


class FakeCompute(object):
    def __init__(self, rounds, aggregates=None):
        self.rounds = list(rounds)
        self.aggregates = aggregates or {}
        self.calls = []

    def hypervisors(self, details=False):
        assert details
        return self.rounds.pop(0) if len(self.rounds) > 1 else self.rounds[0]

    def find_aggregate(self, name):
        return self.aggregates.get(name)

    def create_aggregate(self, name, availability_zone):
        self.calls.append(("create", name, availability_zone))
        a = types.SimpleNamespace(name=name, availability_zone=availability_zone, hosts=[])
        self.aggregates[name] = a
        return a

    def add_host_to_aggregate(self, aggregate, host):
        self.calls.append(("add", aggregate.name, host))
        aggregate.hosts.append(host)


class AggregatesTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.values = agg.read_values(VALUES)
        self.messages = []

    def run_with(self, compute, expect=None, timeout=0):
        clock = iter(range(0, 10000, 5))
        return agg.run(types.SimpleNamespace(compute=compute), self.values, expect or {},
                       timeout, self.messages.append, sleep=lambda s: None,
                       clock=lambda: next(clock))

    def test_hosts_go_to_the_zone_of_their_hypervisor_type(self):
        compute = FakeCompute([[hv("node1", "QEMU"), hv("node1-docker", "docker"),
                                hv("bm", "ironic"), hv("old", "QEMU", state="down")]])
        kinds = self.run_with(compute)
        self.assertEqual({"kvm": ["node1"], "docker": ["node1-docker"]}, kinds)
        self.assertEqual([("create", "docker", "docker"), ("add", "docker", "node1-docker"),
                          ("create", "qemu", "qemu"), ("add", "qemu", "node1")],
                         compute.calls)

    def test_idempotent(self):
        existing = {"qemu": types.SimpleNamespace(name="qemu", hosts=["node1"])}
        compute = FakeCompute([[hv("node1", "KVM"), hv("node2", "QEMU")]], existing)
        self.run_with(compute)
        self.assertEqual([("add", "qemu", "node2")], compute.calls)

    def test_waits_for_expected_hosts(self):
        compute = FakeCompute([[hv("c", "QEMU")], [hv("c", "QEMU")],
                               [hv("c", "QEMU"), hv("d", "docker")]])
        kinds = self.run_with(compute, {"docker": 1}, timeout=60)
        self.assertEqual(["d"], kinds["docker"])

    def test_wait_only_changes_nothing(self):
        compute = FakeCompute([[hv("c", "QEMU")], [hv("c", "QEMU"), hv("d", "docker")]])
        clock = iter(range(0, 10000, 5))
        kinds = agg.run(types.SimpleNamespace(compute=compute), self.values, {"docker": 1},
                        60, self.messages.append, sleep=lambda s: None,
                        clock=lambda: next(clock), wait_only=True)
        self.assertEqual({"kvm": ["c"], "docker": ["d"]}, kinds)
        self.assertEqual([], compute.calls)
        self.assertEqual(["found docker: d; kvm: c"], self.messages)

    def test_timeout_names_what_is_missing(self):
        compute = FakeCompute([[hv("c", "QEMU")]])
        e = self.assertRaises(RuntimeError, self.run_with, compute, {"docker": 1}, 20)
        self.assertIn("1 docker host(s) expected, found 0 (none)", str(e))
        self.assertEqual([], compute.calls)

    def test_zone_names_from_the_environment_win(self):
        values = agg.zone_values(VALUES, {"VMCT_KVM_AZ": "fast", "VMCT_DOCKER_AZ": ""})
        self.assertEqual(("fast", "docker"), (values["VMCT_KVM_AZ"], values["VMCT_DOCKER_AZ"]))

    def test_parse_expect(self):
        self.assertEqual({"docker": 2, "kvm": 1}, agg.parse_expect(["docker=2", "kvm=1"]))
        for bad in ("xen=1", "docker", "docker=x"):
            e = self.assertRaises(ValueError, agg.parse_expect, [bad])
            self.assertIn("--expect %r" % bad, str(e))

    def test_bad_arguments_exit_with_usage_error(self):
        stderr = io.StringIO()
        self.useFixture(__import__("fixtures").MonkeyPatch("sys.stderr", stderr))
        e = self.assertRaises(SystemExit, agg.main, ["--expect", "xen=1"])
        self.assertEqual(2, e.code)
        self.assertIn("--expect 'xen=1'", stderr.getvalue())
