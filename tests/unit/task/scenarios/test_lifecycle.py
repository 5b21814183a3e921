"""VMCT lifecycle scenarios against a scripted fake Nova on a fake clock."""

from unittest import mock

from oslo_config import cfg
from rally import plugins
import testtools

from rally_vmct.timing import waiter
from rally_vmct import opts
from rally_vmct.task import lookup
from rally_vmct.task import output
from rally_vmct.task.scenarios import lifecycle
from rally_vmct.timing import power
from rally_vmct.timing import session as server_session
from tests.unit.timing import fakes
from tests.unit.task import test_lookup

KIND = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"},
        "image_id": "img-1", "flavor_id": "flv-1", "availability_zone": "az-kvm",
        "scheduler_hints": {"group": "g1"}}


CREDENTIAL = fakes.Obj(profiler_hmac_key=None, profiler_conn_str=None)


def names(actions):
    return [a["name"] for a in actions]


def duration(action):
    return action["finished_at"] - action["started_at"]


class ScenarioTestCase(testtools.TestCase):

    reachable_delay = 1.0

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()
        self.addCleanup(cfg.CONF.clear_override, "build_timeout", opts.GROUP)
        self.addCleanup(cfg.CONF.clear_override, "reboot_timeout", opts.GROUP)
        self.clock = fakes.FakeClock()
        self.nova = fakes.FakeNova(self.clock)

    def override(self, **values):
        for name, value in values.items():
            cfg.CONF.set_override(name, value, opts.GROUP)

    def make(self, cls, context=None):
        ctx = {"task": {"uuid": "task-uuid"}, "owner_id": "owner-uuid", "iteration": 1,
               "user": {"credential": CREDENTIAL},
               "tenant": {"networks": [{"id": "net-1"}]}}
        ctx.update(context or {})
        scenario = cls(ctx, clients=fakes.FakeClients(self.nova))
        scenario.clock = self.clock
        self.probes = []
        self.sessions = []
        test = self

        class Session(server_session.ServerSession):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                test.sessions.append(self)

            def make_probe(self, name):
                probe = fakes.FakeProbe(test.nova, self.server.id, test.reachable_delay)
                probe.name = name
                test.probes.append(probe)
                return probe
        scenario.session_class = Session
        return scenario

    def output(self, scenario, kind, title_part):
        return [c for c in scenario._output[kind] if title_part in c["title"]]


class TestBootAndDelete(ScenarioTestCase):

    def test_normal_sequence(self):
        s = self.make(lifecycle.BootAndDeleteServer)
        s.run(dict(KIND))
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.wait_for_network", "vmct.delete"], names(actions))
        build, network, delete = actions
        # a phase ends in the middle of the poll interval its change was seen in
        # (waiter.Observation.estimate): ACTIVE, scripted at 2.0, is first seen by the poll
        # sent at 2.0, the one sent at 1.8 still saw BUILD: 1.9; SSH answers at 3.0
        self.assertAlmostEqual(1.9, duration(build), places=6)
        self.assertAlmostEqual(1.1, duration(network), places=6)
        self.assertAlmostEqual(0.9, duration(delete), places=6)
        # network starts exactly when ACTIVE was observed
        self.assertEqual(build["finished_at"], network["started_at"])
        record = self.nova.servers.created[0]
        self.assertEqual("az-kvm", record.kwargs["availability_zone"])
        self.assertEqual({"group": "g1"}, record.kwargs["scheduler_hints"])
        self.assertEqual([{"net-id": "net-1"}], record.kwargs["nics"])
        self.assertEqual(("img-1", "flv-1"), (record.kwargs["image"], record.kwargs["flavor"]))
        self.assertEqual([record.id], self.nova.servers.deleted)

        [chart] = s._output["additive"]
        self.assertEqual("kvm: lifecycle [s]", chart["title"])
        self.assertEqual(("kvm", "lifecycle", "s"), output.parse_chart_title(chart["title"]))
        rows = dict(chart["data"])
        self.assertEqual(["build", "wait_for_network", "build_and_network", "delete", "total"],
                         [r[0] for r in chart["data"]])
        self.assertAlmostEqual(3.0, rows["build_and_network"], places=6)
        phases = rows["build"] + rows["wait_for_network"] + rows["delete"]
        self.assertLessEqual(phases, rows["total"] + 1e-9)
        self.assertLess(rows["total"] - phases, 0.5)

        [transitions] = self.output(s, "complete", "server state transitions")
        statuses = [r[2:4] for r in transitions["data"]["rows"] if r[1] == "status"]
        self.assertEqual([["None", "BUILD"], ["BUILD", "ACTIVE"], ["ACTIVE", "GONE"]], statuses)
        [probe_row] = [r for r in transitions["data"]["rows"] if r[1] == "probe tcp"]
        self.assertEqual(["vmct.wait_for_network", "probe tcp", "10.0.0.5:22: refused x5",
                          "answered (check 6)",
                          3.0, 2.8], probe_row)
        [actions_table] = self.output(s, "complete", "instance actions")
        events = [r[2] for r in actions_table["data"]["rows"]]
        self.assertIn("compute__do_build_and_run_instance", events)
        self.assertIn("compute_terminate_instance", events)

    def test_polling_respects_interval_and_rate(self):
        self.override(poll_interval=0.05, max_requests_per_second=4.0)
        self.addCleanup(cfg.CONF.clear_override, "poll_interval", opts.GROUP)
        self.addCleanup(cfg.CONF.clear_override, "max_requests_per_second", opts.GROUP)
        s = self.make(lifecycle.BootAndDeleteServer)
        s.run(dict(KIND))
        requests = self.nova.requests
        self.assertGreater(len(requests), 12)
        for (t1, what), (t2, _) in zip(requests, requests[1:]):
            # only the poll right after an action request comes sooner than 1/4 s
            if not what.startswith("POST"):
                self.assertGreaterEqual(t2 - t1, 0.25 - 1e-9, (t1, what))
        posts = [i for i, (_, what) in enumerate(requests) if what.startswith("POST")]
        self.assertEqual(2, len(posts))
        for i in posts:
            self.assertEqual(requests[i][0], requests[i + 1][0])

    def test_very_fast_transitions(self):
        self.nova.scripts["create"] = [(0.0, "ACTIVE", None, 1)]
        self.nova.scripts["delete"] = [(0.0, "GONE", None, None)]
        self.reachable_delay = 0.0
        s = self.make(lifecycle.BootAndDeleteServer)
        s.run(dict(KIND))
        build, network, delete = s.atomic_actions()
        self.assertEqual(0.0, duration(build))
        self.assertEqual(0.0, duration(network))
        self.assertEqual(0.0, duration(delete))

    def test_error_status_carries_nova_fault_and_cleans_up(self):
        self.nova.scripts["create"] = [(0.0, "BUILD", "scheduling", 0),
                                       (1.0, "ERROR", None, 0)]
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.ServerFault, s.run, dict(KIND))
        self.assertIn("No valid host was found", str(e))
        self.assertIn("Nova fault 500", str(e))
        [build] = s.atomic_actions()
        self.assertTrue(build["failed"])
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)
        self.assertEqual([], s._output["additive"])
        self.assertEqual(1, len(self.output(s, "complete", "server state transitions")))
        [actions_table] = self.output(s, "complete", "instance actions")
        self.assertIn("Error", [r[6] for r in actions_table["data"]["rows"]])

    def test_build_timeout_is_a_clear_error_and_cleans_up(self):
        self.override(build_timeout=5.0)
        self.nova.scripts["create"] = [(0.0, "BUILD", "spawning", 0)]
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND))
        self.assertIn("waiting for server to become ACTIVE (build)", str(e))
        self.assertIn("BUILD (task_state=spawning", str(e))
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)

    def never_reachable(self):
        """The fake probe never answers; the network wait gives up after 3 s."""
        self.reachable_delay = 10_000
        cfg.CONF.set_override("network_timeout", 3.0, opts.GROUP)
        self.addCleanup(cfg.CONF.clear_override, "network_timeout", opts.GROUP)

    def test_unreachable_instance_times_out_and_cleans_up(self):
        self.never_reachable()
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND))
        self.assertIn("fake probe", str(e))
        self.assertIn("failed attempts: refused x", str(e))
        [table] = self.output(s, "complete", "server state transitions")
        [probe_row] = [r for r in table["data"]["rows"] if r[1] == "probe tcp"]
        self.assertEqual("no answer", probe_row[3])
        self.assertEqual(["vmct.build", "vmct.wait_for_network"], names(s.atomic_actions()))
        self.assertTrue(s.atomic_actions()[1]["failed"])
        self.assertEqual(1, len(self.nova.servers.deleted))

    def test_unreachable_instance_keeps_its_console(self):
        self.never_reachable()
        self.nova.console = "".join("boot line %d\n" % i for i in range(60)) + (
            "Kernel panic - not syncing: IO-APIC + timer doesn't work!\n")
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND))
        self.assertIn("the console's last lines: boot line 56 | boot line 57 | boot line 58 "
                      "| boot line 59 | Kernel panic - not syncing", str(e))
        [console] = self.output(s, "complete", "console when vmct.wait_for_network gave up")
        self.assertEqual("TextArea", console["chart_plugin"])
        self.assertEqual(40, len(console["data"]))
        self.assertEqual(("boot line 21", "Kernel panic - not syncing: IO-APIC + timer doesn't "
                          "work!"), (console["data"][0], console["data"][-1]))

    def test_an_empty_console_is_said_so(self):
        self.never_reachable()
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND))
        self.assertTrue(str(e).endswith("; the console log is empty"), str(e))
        self.assertEqual([[]], [c["data"] for c in self.output(s, "complete", "console when")])

    def test_a_console_nova_refuses_is_named_not_fatal(self):
        self.never_reachable()
        self.nova.refusals["console_output"] = fakes.APIError(409, "Cannot get console")
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND))
        self.assertIn("failed attempts: refused x", str(e))
        self.assertIn("console log unavailable (APIError: Cannot get console (HTTP 409))", str(e))
        [console] = self.output(s, "complete", "console when")
        self.assertEqual(["console log unavailable (APIError: Cannot get console (HTTP 409))"],
                         console["data"])
        self.assertEqual(1, len(self.nova.servers.deleted))

    def test_no_address_is_a_clear_error(self):
        self.nova.addresses = {}
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(waiter.WaitError, s.run, dict(KIND))
        self.assertIn("has no IP address", str(e))
        self.assertIn("nics", str(e))

    def test_keypair_and_secgroup_from_context(self):
        s = self.make(lifecycle.BootAndDeleteServer, {
            "user": {"credential": CREDENTIAL, "keypair": {"name": "kp", "private": "x"},
                     "secgroup": {"name": "sg"}}})
        s.run(dict(KIND), boot_args={"nics": [{"net-id": "net-9"}], "security_groups": ["a"]})
        kwargs = self.nova.servers.created[0].kwargs
        self.assertEqual("kp", kwargs["key_name"])
        self.assertEqual(["a", "sg"], kwargs["security_groups"])
        self.assertEqual([{"net-id": "net-9"}], kwargs["nics"])

    def test_unresolved_kind_is_resolved_in_the_scenario(self):
        kind = {k: v for k, v in KIND.items() if k not in ("image_id", "flavor_id")}
        s = self.make(lifecycle.BootAndDeleteServer)
        cloud = test_lookup.FakeCloud(images=[test_lookup.image("img-9", "cirros")],
                                      flavors=[test_lookup.flavor("flv-9", "m1.tiny")])
        with mock.patch.object(lookup, "clients_of", return_value=cloud):
            s.run(kind)
        record = self.nova.servers.created[0]
        self.assertEqual(("img-9", "flv-9"), (record.kwargs["image"], record.kwargs["flavor"]))
        self.assertEqual([("images.list", {"status": "active"})], cloud.calls)

    def test_ssh_probe_without_key_is_a_clear_error(self):
        s = self.make(lifecycle.BootAndDeleteServer)
        s.session_class = server_session.ServerSession      # the real probes
        e = self.assertRaises(waiter.WaitError, s.run, dict(KIND), probe="ssh")
        self.assertIn("keypair", str(e))
        self.assertEqual(1, len(self.nova.servers.deleted))

    def test_poll_mode_argument_reaches_the_session(self):
        self.nova.addresses = {}
        s = self.make(lifecycle.BootAndDeleteServer)
        s.run(dict(KIND), probe="none", poll_mode="batched")
        self.assertEqual(["batched"], [session.poll_mode for session in self.sessions])
        self.assertEqual(["vmct.build", "vmct.delete"], names(s.atomic_actions()))

    def test_probe_none_times_build_and_delete_only(self):
        self.nova.addresses = {}            # no address needed
        s = self.make(lifecycle.BootAndDeleteServer)
        s.run(dict(KIND), probe="none")
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.delete"], names(actions))
        self.assertAlmostEqual(1.9, duration(actions[0]), places=6)   # the middle of (1.8, 2.0]
        self.assertAlmostEqual(0.9, duration(actions[1]), places=6)
        self.assertEqual([], self.probes)
        [chart] = s._output["additive"]
        self.assertEqual(["build", "delete", "total"], [r[0] for r in chart["data"]])
        [table] = self.output(s, "complete", "server state transitions")
        self.assertEqual([], [r for r in table["data"]["rows"] if r[1].startswith("probe")])
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)

    def test_probe_none_with_wait_for_ssh_names_both_arguments(self):
        s = self.make(lifecycle.BootAndDeleteServer)
        e = self.assertRaises(ValueError, s.run, dict(KIND), probe="none", wait_for_ssh=True)
        self.assertIn("'probe: none'", str(e))
        self.assertIn("'wait_for_ssh: true'", str(e))
        self.assertEqual([], self.nova.servers.created)


class TestReboot(ScenarioTestCase):

    def reboot(self, **kwargs):
        s = self.make(lifecycle.BootAndRebootServer)
        s.run(dict(KIND), **kwargs)
        return s

    def test_hard_reboot_children_in_order(self):
        s = self.reboot(reboot_type="hard")
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.wait_for_network", "vmct.reboot_hard",
                          "vmct.delete"], names(actions))
        reboot = actions[2]
        children = reboot["children"]
        self.assertEqual(["vmct.reboot_hard.left_active", "vmct.reboot_hard.active",
                          "vmct.reboot_hard.reachable"], names(children))
        left, active, reachable = children
        self.assertEqual(reboot["started_at"], left["started_at"])
        self.assertEqual(left["finished_at"], active["started_at"])
        self.assertEqual(active["finished_at"], reachable["started_at"])
        self.assertEqual(reachable["finished_at"], reboot["finished_at"])
        self.assertAlmostEqual(0.0, duration(left), places=6)     # task state set at once
        self.assertAlmostEqual(1.9, duration(active), places=6)   # the middle of (1.8, 2.0]
        self.assertAlmostEqual(1.1, duration(reachable), places=6)
        paths = self.output(s, "additive", "reboot path")[0]
        self.assertEqual("kvm: reboot path [count]", paths["title"])
        self.assertEqual([["soft", 0], ["soft_fell_back_to_hard", 0], ["hard", 1]],
                         paths["data"])
        rows = dict(self.output(s, "additive", "lifecycle")[0]["data"])
        self.assertAlmostEqual(3.0, rows["reboot_hard"], places=6)
        # the change seen after the request is bounded below by the request itself
        [table] = self.output(s, "complete", "server state transitions")
        [row] = [r for r in table["data"]["rows"] if r[1] == "status" and r[3] == "HARD_REBOOT"]
        request = reboot["started_at"] - actions[0]["started_at"]
        self.assertEqual("vmct.reboot_hard", row[0])
        self.assertAlmostEqual(request, row[5], places=3)
        self.assertAlmostEqual(request, row[4], places=3)

    def test_soft_reboots_repeated(self):
        s = self.reboot(reboot_type="soft", reboots=3)
        reboots = [a for a in s.atomic_actions() if a["name"] == "vmct.reboot_soft"]
        self.assertEqual(3, len(reboots))
        paths = dict(self.output(s, "additive", "reboot path")[0]["data"])
        self.assertEqual({"soft": 3, "soft_fell_back_to_hard": 0, "hard": 0}, paths)
        self.assertEqual(3, len([r for r in self.nova.servers.created[0].actions
                                 if r["action"] == "reboot"]))

    def test_reboot_too_fast_to_see_is_proven_by_instance_action(self):
        self.nova.scripts["reboot_SOFT"] = [(0.0, "ACTIVE", None, 1)]
        s = self.reboot(reboot_type="soft")
        reboot = s.atomic_actions()[2]
        self.assertEqual(["vmct.reboot_soft.active", "vmct.reboot_soft.reachable"],
                         names(reboot["children"]))
        self.assertEqual(reboot["started_at"], reboot["children"][0]["started_at"])
        self.assertIn("GET os-instance-actions/id", [w for _, w in self.nova.requests])

    def test_reboot_that_never_leaves_active_times_out(self):
        self.override(reboot_timeout=5.0)
        self.nova.scripts["reboot_HARD"] = [(0.0, "ACTIVE", None, 1)]
        self.nova.hide_reboot_events = True
        s = self.make(lifecycle.BootAndRebootServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND), reboot_type="hard")
        self.assertIn("server to leave ACTIVE after the hard reboot request", str(e))
        self.assertIn("ACTIVE (task_state=None", str(e))
        reboot = s.atomic_actions()[2]
        self.assertTrue(reboot["failed"])
        self.assertEqual(1, len(self.nova.servers.deleted))

    def test_soft_reboot_fell_back_to_hard(self):
        self.nova.scripts["reboot_SOFT"] = [(0.0, "REBOOT", "reboot_pending", 1),
                                            (0.3, "REBOOT", "reboot_started", 1),
                                            (123.0, "ACTIVE", None, 1)]
        s = self.reboot(reboot_type="soft", reboots=2)
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.wait_for_network",
                          "vmct.reboot_soft_fell_back_to_hard",
                          "vmct.reboot_soft_fell_back_to_hard", "vmct.delete"], names(actions))
        self.assertEqual(["vmct.reboot_soft_fell_back_to_hard.left_active",
                          "vmct.reboot_soft_fell_back_to_hard.active",
                          "vmct.reboot_soft_fell_back_to_hard.reachable"],
                         names(actions[2]["children"]))
        paths = dict(self.output(s, "additive", "reboot path")[0]["data"])
        self.assertEqual({"soft": 0, "soft_fell_back_to_hard": 2, "hard": 0}, paths)
        rows = [r[0] for r in self.output(s, "additive", "lifecycle")[0]["data"]]
        self.assertIn("reboot_soft_fell_back_to_hard", rows)
        self.assertNotIn("reboot_soft", rows)

    def test_fallback_threshold_follows_the_cloud_setting(self):
        self.nova.scripts["reboot_SOFT"] = [(0.0, "REBOOT", "reboot_pending", 1),
                                            (20.0, "ACTIVE", None, 1)]
        s = self.reboot(reboot_type="soft", soft_reboot_fallback_seconds=15)
        self.assertEqual("vmct.reboot_soft_fell_back_to_hard", s.atomic_actions()[2]["name"])
        s = self.reboot(reboot_type="soft", soft_reboot_fallback_seconds=120)
        self.assertEqual("vmct.reboot_soft", s.atomic_actions()[2]["name"])

    def test_reboot_error_carries_fault(self):
        self.nova.scripts["reboot_HARD"] = [(0.0, "HARD_REBOOT", "reboot_pending_hard", 1),
                                            (1.0, "ERROR", None, 0)]
        s = self.make(lifecycle.BootAndRebootServer)
        e = self.assertRaises(waiter.ServerFault, s.run, dict(KIND), reboot_type="hard")
        self.assertIn("No valid host", str(e))
        self.assertIn("ACTIVE again after the hard reboot", str(e))

    def test_guest_that_did_not_restart_fails_the_iteration(self):
        s = self.make(lifecycle.BootAndRebootServer, {
            "user": {"credential": CREDENTIAL, "keypair": {"name": "kp", "private": "x"}}})
        with mock.patch.object(server_session.ServerSession, "incarnation",
                               return_value="boot-1 4242"):
            e = self.assertRaises(power.RebootNotSeen, s.run, dict(KIND),
                                  reboot_type="hard", wait_for_ssh=True)
        self.assertIn("did not restart", str(e))
        [reboot] = [a for a in s.atomic_actions() if a["name"] == "vmct.reboot_hard"]
        self.assertEqual(["vmct.reboot_hard.left_active", "vmct.reboot_hard.active",
                          "vmct.reboot_hard.reachable", "vmct.reboot_hard.ssh_ready"],
                         names(reboot["children"]))

    def test_unseen_reboot_proven_by_boot_id_when_events_are_hidden(self):
        self.nova.scripts["reboot_SOFT"] = [(0.0, "ACTIVE", None, 1)]
        self.nova.hide_reboot_events = True
        s = self.make(lifecycle.BootAndRebootServer, {
            "user": {"credential": CREDENTIAL, "keypair": {"name": "kp", "private": "x"}}})
        lives = iter(["boot-1 10", "boot-2 10", "boot-2 10"])
        with mock.patch.object(server_session.ServerSession, "incarnation",
                               side_effect=lambda: next(lives)):
            s.run(dict(KIND), reboot_type="soft", wait_for_ssh=True)
        [reboot] = [a for a in s.atomic_actions() if a["name"] == "vmct.reboot_soft"]
        self.assertEqual("vmct.reboot_soft.active", reboot["children"][0]["name"])

    def test_probe_none_reboot_ends_at_active(self):
        self.nova.addresses = {}
        s = self.reboot(reboot_type="hard", reboots=2, probe="none")
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.reboot_hard", "vmct.reboot_hard", "vmct.delete"],
                         names(actions))
        for reboot in actions[1:3]:
            self.assertEqual(["vmct.reboot_hard.left_active", "vmct.reboot_hard.active"],
                             names(reboot["children"]))
            self.assertEqual(reboot["children"][-1]["finished_at"], reboot["finished_at"])
            self.assertAlmostEqual(1.9, duration(reboot), places=6)     # the middle of (1.8, 2.0]
        self.assertEqual([], self.probes)
        paths = dict(self.output(s, "additive", "reboot path")[0]["data"])
        self.assertEqual({"soft": 0, "soft_fell_back_to_hard": 0, "hard": 2}, paths)


class TestStopStart(ScenarioTestCase):

    def test_cycles(self):
        s = self.make(lifecycle.BootStopStartServer)
        s.run(dict(KIND), cycles=2)
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.wait_for_network", "vmct.stop", "vmct.start",
                          "vmct.stop", "vmct.start", "vmct.delete"], names(actions))
        stop, start = actions[2], actions[3]
        # SHUTOFF at +1.5 between the polls sent at 1.4 and 1.6: their middle
        self.assertAlmostEqual(1.5, duration(stop), places=6)
        self.assertEqual(["vmct.start.active", "vmct.start.reachable"],
                         names(start["children"]))
        self.assertAlmostEqual(0.9, duration(start["children"][0]), places=6)
        self.assertAlmostEqual(1.1, duration(start["children"][1]), places=6)
        rows = [r[0] for r in self.output(s, "additive", "lifecycle")[0]["data"]]
        self.assertEqual(["build", "wait_for_network", "stop", "start", "delete", "total"], rows)

    def test_stop_timeout(self):
        self.override(reboot_timeout=4.0)
        self.nova.scripts["stop"] = [(0.0, "ACTIVE", "powering-off", 1)]
        s = self.make(lifecycle.BootStopStartServer)
        e = self.assertRaises(waiter.WaitTimeout, s.run, dict(KIND))
        self.assertIn("SHUTOFF (stop)", str(e))
        self.assertEqual(1, len(self.nova.servers.deleted))

    def test_probe_none_start_ends_at_active(self):
        self.nova.addresses = {}
        s = self.make(lifecycle.BootStopStartServer)
        s.run(dict(KIND), cycles=2, probe="none")
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.stop", "vmct.start", "vmct.stop", "vmct.start",
                          "vmct.delete"], names(actions))
        for start in (actions[2], actions[4]):
            self.assertEqual(["vmct.start.active"], names(start["children"]))
            self.assertEqual(start["children"][0]["finished_at"], start["finished_at"])
            self.assertAlmostEqual(0.9, duration(start), places=6)      # the middle of (0.8, 1.0]
        self.assertEqual([], self.probes)
        rows = [r[0] for r in self.output(s, "additive", "lifecycle")[0]["data"]]
        self.assertEqual(["build", "stop", "start", "delete", "total"], rows)
