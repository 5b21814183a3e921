"""tools/aio/smoke.py without a cloud.

The scripted Nova of tests/unit/timing/fakes behind an openstacksdk-like connection, its fake
clock, and a guest whose sshd answers with recorded outputs once the server is ACTIVE.
"""

import io
import os
import threading
import types
from unittest import mock

import fixtures
from openstack.compute.v2 import server as sdk_server
import testtools

from rally_vmct.access import ssh as vmct_ssh
from rally_vmct.timing import waiter
from rally_vmct.workloads import runner
from tests.unit.timing import fakes
from tests.unit.task.scenarios.benchmark import fakes as benchfakes
from tests.unit import tools
from tests.unit.workloads import test_runner

smoke = tools.load("vmct_aio_smoke", os.path.join(tools.TOOLS, "aio", "smoke.py"))
fixture = test_runner.fixture

ARGS = {"network_id": "net-1", "proxy_command": "/p %h %p", "soft_reboot_fallback_seconds": 20,
        "instance_kinds": {"kvm": {"image": "vmct-guest", "flavor": "vmct.small",
                                   "availability_zone": "kvm"}}}
FAKE_ARGS = dict(ARGS, fake_kind={"name": "fake", "image": {"name": "vmct-fake-image"},
                                  "flavor": {"name": "vmct.tiny"}, "availability_zone": "fake"})


class FakeCompute:
    """``conn.compute`` of openstacksdk over :class:`fakes.FakeNova`."""

    def __init__(self, nova):
        self.nova = nova
        self.keypairs = {}

    def create_keypair(self, name, public_key):
        self.keypairs[name] = public_key
        return types.SimpleNamespace(name=name)

    def delete_keypair(self, keypair, ignore_missing=True):
        self.keypairs.pop(keypair.name)

    def find_keypair(self, name):
        return self.keypairs.get(name)

    def find_flavor(self, name, ignore_missing=True):
        return types.SimpleNamespace(id="flavor-" + name)

    def create_server(self, name, image_id, flavor_id, key_name, availability_zone, networks,
                      security_groups=()):
        created = self.nova.servers.create(name, image_id, flavor_id,
                                           availability_zone=availability_zone)
        return types.SimpleNamespace(id=created.id)

    def get_server(self, server):
        found = self.nova.servers.get(server)
        zone = self.nova.servers.records[found.id].kwargs["availability_zone"]
        return types.SimpleNamespace(
            id=found.id, status=found.status, fault=getattr(found, "fault", None),
            task_state=getattr(found, "OS-EXT-STS:task_state"), addresses=found.addresses,
            power_state=getattr(found, "OS-EXT-STS:power_state"),
            vm_state=getattr(found, "OS-EXT-STS:vm_state"), compute_host="aio",
            availability_zone=zone)

    def reboot_server(self, server, how):
        self.nova.servers.reboot(server, how)

    def delete_server(self, server, ignore_missing=False):
        self.nova.servers.delete(server)

    def wait_for_delete(self, server, wait=None):
        return server

    def servers(self, all_projects=False):
        return [record for record in self.nova.servers.records.values()
                if record.state()[1] != "GONE"]


class FakeNetwork:
    """``conn.network``: ports of a server until it is deleted, and security groups."""

    def __init__(self, nova, ports):
        self.nova, self.port_list = nova, ports
        self.groups, self.rules = {}, []

    def ports(self, device_id):
        return [] if device_id in self.nova.servers.deleted else list(self.port_list)

    def create_security_group(self, name):
        self.groups[name] = types.SimpleNamespace(id="sg-" + name, name=name)
        return self.groups[name]

    def create_security_group_rule(self, **rule):
        self.rules.append(rule)

    def delete_security_group(self, group, ignore_missing=True):
        self.groups.pop(group.name)

    def find_security_group(self, name):
        return self.groups.get(name)


class FakeGuest:
    """``probes.SSHCommandProbe`` stand-in: the guest's sshd answers 1 s after ACTIVE.

    Its incarnation changes with every (re)start unless ``keeps_life``.
    """

    def __init__(self, nova, facts, keeps_life=False):
        self.nova = nova
        self.keeps_life = keeps_life
        self.log = []
        self.answers = [
            (vmct_ssh.INCARNATION_COMMAND, self.incarnation),
            ("uname", (0, facts, "")),
            ("vmct-mounts-begin", (0, fixture("facts/qemu-tcg-guest-var-tmp.probe"), "")),
            (" prepare", (0, fixture("sysbench/1.0-fileio-prepare.txt"), "")),
            (" cleanup", (0, fixture("sysbench/1.0-fileio-cleanup.txt"), "")),
            ("--file-test-mode=rndrd", (0, fixture("sysbench/1.0-fileio-rndrd.txt"), "")),
            ("sysbench cpu", (0, fixture("sysbench/1.0-cpu.txt"), ""))]

    def incarnation(self, command):
        (record,) = self.nova.servers.records.values()
        starts = len([a for a in record.actions if a["action"] in ("create", "reboot")])
        return 0, "b0a7 %d\n" % (1 if self.keeps_life else starts), ""

    def probe(self, host, user, pkey=None, proxy_command=None, connect_timeout=None):
        (server_id,) = self.nova.servers.records
        probe = fakes.FakeProbe(self.nova, server_id, delay=1.0)
        probe.client = benchfakes.FakeSSH(self.answers, self.log, host)
        probe.close = probe.client.close
        return probe


# a port Neutron bound to the fake compute host "aio"
BOUND = types.SimpleNamespace(id="port-1", binding_host_id="aio", binding_vif_type="ovs")


class SmokeTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = fakes.FakeClock()
        self.out = io.StringIO()
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", self.out))

    def smoke(self, facts=test_runner.FACTS, keeps_life=False, kind="kvm", args=ARGS,
              ports=(BOUND,), **scripts):
        """A Smoke of ``kind`` whose server has ``ports`` until it is deleted."""
        self.nova = fakes.FakeNova(self.clock, **scripts)
        self.compute = FakeCompute(self.nova)
        self.guest = FakeGuest(self.nova, facts, keeps_life)
        self.useFixture(fixtures.MonkeyPatch(
            "rally_vmct.access.probes.SSHCommandProbe", self.guest.probe))
        conn = types.SimpleNamespace(
            compute=self.compute,
            image=types.SimpleNamespace(find_image=lambda name, ignore_missing: (
                types.SimpleNamespace(id="image-" + name))),
            network=FakeNetwork(self.nova, ports))
        self.network = conn.network
        return smoke.Smoke(kind, args, conn, clock=self.clock)

    def test_every_step_passes_and_is_timed_from_observed_states(self):
        s = self.smoke()
        self.assertEqual(0, s.run(), self.out.getvalue())
        self.assertEqual([], s.failures)
        # its own security group let SSH in, and went with the server
        self.assertIn(22, [r.get("port_range_min") for r in self.network.rules])
        self.assertEqual({}, self.network.groups)
        # the fakes' scripts: ACTIVE 2 s after create and hard reboot, 3 s after soft reboot,
        # gone 1 s after delete; the fake sshd answers 1 s after ACTIVE. Polls every 0.1 s.
        for step, seconds in (("boot -> ACTIVE", 2.0), ("ACTIVE -> SSH ok", 1.0),
                              ("reboot HARD -> ACTIVE", 2.0), ("reboot SOFT -> ACTIVE", 3.0),
                              ("delete -> gone", 1.0)):
            self.assertAlmostEqual(seconds, s.results[step], delta=0.11, msg=step)
        for line in ("sysbench, netperf, netserver installed", "sysbench cpu 2 s: 29788.33",
                     "fileio O_DIRECT in /var/tmp (ext2): 6622.18 MiB/s",
                     "reboot HARD restarted the guest", "reboot SOFT restarted the guest",
                     "soft reboot stayed soft (< 20 s)", "keypair deleted", "no server left"):
            self.assertIn(line, self.out.getvalue())
        self.assertEqual([], self.compute.servers())
        self.assertEqual({}, self.compute.keypairs)

    def test_a_soft_reboot_that_falls_back_to_hard_fails(self):
        s = self.smoke(reboot_SOFT=[(0.0, "REBOOT", "reboot_started", 1),
                                    (20.0, "HARD_REBOOT", "reboot_started_hard", 1),
                                    (22.0, "ACTIVE", None, 1)])
        self.assertEqual(1, s.run())
        self.assertEqual(["soft reboot stayed soft (< 20 s)"], s.failures)

    def test_a_reboot_that_did_not_restart_the_guest_fails(self):
        s = self.smoke(keeps_life=True)
        self.assertEqual(1, s.run())
        self.assertEqual(["reboot HARD restarted the guest", "reboot SOFT restarted the guest"],
                         s.failures)

    def test_a_missing_tool_fails_with_its_hint(self):
        s = self.smoke(facts=test_runner.FACTS.replace("netserver=/usr/bin/netserver", ""))
        self.assertEqual(1, s.run())
        (failure,) = s.failures
        self.assertIn("netserver is not installed on the instance", failure)
        self.assertIn("netserver: package netperf (netserver ships with it)", failure)

    def test_no_sysbench_stops_the_kind_and_cleans_up(self):
        s = self.smoke(facts=test_runner.FACTS.replace("sysbench 1.0.20", ""))
        e = self.assertRaises(runner.ToolMissing, s.run)
        self.assertIn("sysbench is not installed on instance srv-1 (kind kvm, 10.0.0.5)", str(e))
        self.assertEqual(["srv-1"], self.nova.servers.deleted)
        self.assertEqual({}, self.compute.keypairs)

    def test_a_build_error_names_the_fault_and_cleans_up(self):
        s = self.smoke(create=[(0.0, "BUILD", "scheduling", 0), (1.0, "ERROR", None, 0)])
        e = self.assertRaises(waiter.ServerFault, s.run)
        self.assertIn("No valid host was found", str(e))
        self.assertEqual(["srv-1"], self.nova.servers.deleted)
        self.assertEqual({}, self.compute.keypairs)

    def test_the_fake_kind_is_bound_rebooted_and_deleted_without_ssh(self):
        s = self.smoke(kind="fake", args=FAKE_ARGS)
        self.assertEqual(0, s.run(), self.out.getvalue())
        for step, seconds in (("boot -> ACTIVE", 2.0), ("reboot HARD -> ACTIVE", 2.0),
                              ("reboot SOFT -> ACTIVE", 3.0), ("delete -> gone", 1.0)):
            self.assertAlmostEqual(seconds, s.results[step], delta=0.11, msg=step)
        self.assertNotIn("ACTIVE -> SSH ok", s.results)
        self.assertEqual([], self.guest.log)    # no SSH command
        for line in ("scheduled to AZ fake", "1 port(s) bound to aio (vif_type ovs) ok",
                     "no ports left for the server", "no server left"):
            self.assertIn(line, self.out.getvalue())
        self.assertEqual({}, self.compute.keypairs)

    def test_every_kind_checks_its_ports_bound(self):
        s = self.smoke()
        self.assertEqual(0, s.run(), self.out.getvalue())
        self.assertIn("1 port(s) bound to aio (vif_type ovs) ok", self.out.getvalue())
        self.assertNotIn("OVN chassis", self.out.getvalue())     # not an ML2/OVN cloud

    def test_under_ovn_the_hosts_own_chassis_claims_each_port(self):
        self.useFixture(fixtures.MockPatchObject(smoke, "OVN_SB_DB", "unix:/sb.sock"))
        claims = {"port-1": "aio"}
        self.useFixture(fixtures.MockPatchObject(smoke, "ovn_chassis_of", claims.get))
        s = self.smoke(kind="fake", args=FAKE_ARGS)
        self.assertEqual(0, s.run(), self.out.getvalue())
        self.assertIn("port(s) claimed by OVN chassis aio ok", self.out.getvalue())
        # a port left on a bridge no chassis of this host watches stays unclaimed
        claims["port-1"] = "(none)"
        s = self.smoke(kind="fake", args=FAKE_ARGS)
        self.assertEqual(1, s.run())
        self.assertEqual(["port(s) claimed by OVN chassis (none)"], s.failures)

    def test_a_port_neutron_did_not_bind_fails(self):
        for vif_type, host in (("binding_failed", "aio"), ("ovs", "elsewhere")):
            port = types.SimpleNamespace(id="p", binding_host_id=host, binding_vif_type=vif_type)
            s = self.smoke(kind="fake", args=FAKE_ARGS, ports=[port])
            self.assertEqual(1, s.run())
            self.assertEqual(["1 port(s) bound to aio (vif_type %s)" % vif_type], s.failures)
        s = self.smoke(kind="fake", args=FAKE_ARGS, ports=[])
        self.assertEqual(1, s.run())
        self.assertEqual(["0 port(s) bound to aio (vif_type -)"], s.failures)


class PureTestCase(testtools.TestCase):

    def test_smoke_kinds_are_the_instance_kinds_then_the_fake_kind(self):
        self.assertEqual({"kvm": dict(ARGS["instance_kinds"]["kvm"], reachable=True),
                          "fake": {"image": "vmct-fake-image", "flavor": "vmct.tiny",
                                   "availability_zone": "fake", "reachable": False}},
                         smoke.smoke_kinds(FAKE_ARGS))
        self.assertEqual(["kvm"], list(smoke.smoke_kinds(ARGS)))

    def test_nova_view_is_what_the_waiter_reads(self):
        server = sdk_server.Server(status="REBOOT", task_state="reboot_started", power_state=1,
                                   vm_state="active")
        self.assertEqual(waiter.ServerState("REBOOT", "reboot_started", "active", 1),
                         waiter.ServerState.of(smoke.nova_view(server)))

    def test_restarted_needs_two_different_answers(self):
        self.assertTrue(smoke.restarted("b 1", "b 2"))
        self.assertFalse(smoke.restarted("b 1", "b 1"))
        self.assertFalse(smoke.restarted(None, "b 2"))
        self.assertFalse(smoke.restarted("b 1", None))


class MainTestCase(testtools.TestCase):
    """main(): the kinds at once, each on its own connection, every failure named."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatchObject(smoke, "task_args", return_value=FAKE_ARGS))
        self.conns = []
        self.useFixture(fixtures.MockPatchObject(smoke, "connect", side_effect=self.connect))
        self.barrier = threading.Barrier(2, timeout=10)
        self.useFixture(fixtures.MockPatchObject(smoke, "Smoke", side_effect=self.fake_smoke))

    def connect(self):
        self.conns.append(object())
        return self.conns[-1]

    def fake_smoke(self, kind, args, conn):
        # both kinds must be running for either to pass this point
        self.barrier.wait()
        return mock.Mock(run=mock.Mock(side_effect=RuntimeError("no cloud")
                                       if kind == "fake" else [0]))

    def test_kinds_run_at_once_and_a_failure_is_named(self):
        out = self.useFixture(fixtures.StringStream("stdout"))
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", out.stream))
        self.assertEqual(1, smoke.main([]))
        self.assertEqual(2, len(set(map(id, self.conns))))
        text = out.getDetails()["stdout"].as_text()
        self.assertIn("fake     FAILED: no cloud", text)
        self.assertIn("smoke FAILED for: fake", text)
        self.assertNotIn("kvm      FAILED", text)
