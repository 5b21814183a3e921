"""tools/conformance: the tempest.conf writer, the summary table and the lists they read."""

import configparser
import io
import json
import os
import re

import fixtures
import subunit
import testtools
import yaml

from tests.unit import tools

HERE = os.path.join(tools.TOOLS, "conformance")
summary = tools.load("conformance_summary", os.path.join(HERE, "summary.py"))
tempest_conf = tools.load("tempest_conf", os.path.join(HERE, "tempest_conf.py"))
SAMPLE = os.path.join(tools.ROOT, "samples", "tasks", "conformance.yaml")

with open(os.path.join(HERE, "expected.yaml")) as f:
    EXPECTED = yaml.safe_load(f)


def workload(kind, label, scenario, ok=True, error=None, checks=None, actions=()):
    data = [{"error": error or [], "atomic_actions": [{"name": n} for n in actions],
             "output": {"additive": [], "complete": []}}]
    if checks is not None:
        data[0]["output"]["complete"].append({
            "title": "%s: action checks" % kind, "chart_plugin": "Table",
            "data": {"cols": ["action", "expected", "outcome", "ok", "detail", "state after",
                              "seconds"], "rows": checks}})
    return {"description": "%s: %s" % (kind, label), "scenario": {scenario: {}},
            "data": data, "total_iteration_count": 1,
            "failed_iteration_count": 0 if ok else 1, "pass_sla": ok}


def report(*subtasks):
    return {"tasks": [{"uuid": "task-1", "subtasks": [
        {"title": "%s: conformance" % kind, "workloads": list(workloads)}
        for kind, workloads in subtasks]}]}


ACTIVE = "ACTIVE (task_state=None, power_state=1)"


def subunit_stream(results):
    out = io.BytesIO()
    stream = subunit.StreamResultToBytes(out)
    for test_id, status, reason in results:
        stream.status(test_id=test_id, test_status="inprogress")
        if reason:
            stream.status(test_id=test_id, file_name="reason", file_bytes=reason.encode(),
                          mime_type="text/plain; charset=utf8", eof=True)
        stream.status(test_id=test_id, test_status=status)
    return out.getvalue()


class SummaryTest(testtools.TestCase):

    def rally_report(self, docker_ok=True):
        checks = [["rescue", "done", "done", "yes", "RESCUE, then unrescue: ACTIVE", ACTIVE, 3],
                  ["attach_interface", "refused", "refused", "yes", "HTTP 400: no", ACTIVE, 1],
                  ["console_url", "refused", "refused", "yes", "HTTP 400: novnc", ACTIVE, 0.1]]
        return report(
            ("qemu-tcg", [workload("qemu-tcg", "boot and delete",
                                   "NovaServers.boot_and_delete_server")]),
            ("docker", [workload("docker", "snapshot, boot the snapshot",
                                 "NovaServers.snapshot_server", ok=docker_ok,
                                 error=None if docker_ok else ["GetResourceErrorStatus",
                                                               "Resource is ERROR"],
                                 actions=["nova.boot_server", "nova.snapshot_server"]),
                        workload("docker", "rescue and refusals",
                                 "VMCT.boot_and_check_actions", checks=checks)]))

    def test_rally_tests_per_kind_with_checks_and_expected_skips(self):
        s = summary.summarize(self.rally_report(), None, EXPECTED, [])
        self.assertEqual(["qemu-tcg", "docker"], list(s["kinds"]))
        docker = s["kinds"]["docker"]["rally"]
        names = [t["name"] for t in docker["tests"]]
        self.assertIn("snapshot, boot the snapshot (NovaServers.snapshot_server)", names)
        self.assertIn("check rescue: done (expected done)", names)
        self.assertIn("check attach_interface: refused (expected refused)", names)
        refused = [t for t in docker["tests"] if t.get("action") == "attach_interface"][0]
        self.assertIn("cannot hot-plug a port", refused["reason"])
        self.assertEqual(0, docker["failed"])
        self.assertEqual(5, docker["passed"])        # 2 workloads + 3 checks
        skipped = [t for t in docker["tests"] if t["status"] == "skipped"]
        self.assertIn("NovaServers.resize_server", [t["name"] for t in skipped])
        self.assertTrue(all(t["reason"] and t["explained"] for t in skipped))
        self.assertEqual(docker["skipped"], len(skipped))
        self.assertEqual([], s["problems"])
        self.assertEqual(["task-1"], s["rally_tasks"])

    def test_failed_workload_is_a_problem_with_its_error(self):
        s = summary.summarize(self.rally_report(docker_ok=False), None, EXPECTED, [])
        self.assertEqual(1, s["kinds"]["docker"]["rally"]["failed"])
        [problem] = s["problems"]
        self.assertIn("docker rally FAILED snapshot", problem)
        self.assertIn("GetResourceErrorStatus: Resource is ERROR", problem)

    def test_workload_whose_context_failed(self):
        w = workload("docker", "interfaces", "NovaServers.boot_server_and_list_interfaces")
        w.update(data=[], total_iteration_count=0, pass_sla=True, contexts_results=[
            {"plugin_name": "network", "setup": {"error": "NotFound: router"}}])
        s = summary.summarize(report(("docker", [w])), None, EXPECTED, [])
        [problem] = s["problems"]
        self.assertIn("context network: NotFound: router", problem)

    def test_tempest_skips_explained_or_not(self):
        results = {
            "tempest.api.compute.servers.test_server_actions.ServerActionsTestJSON."
            "test_resize_server_confirm[id-1]": ("skip", "Resize not available."),
            "tempest.api.compute.servers.test_servers.ServersTestJSON.test_x[id-2]":
                ("skip", "Some new reason."),
            "tempest.api.compute.servers.test_delete_server.DeleteServersTestJSON."
            "test_delete_active_server[id-3]": ("success", ""),
            "setUpClass (tempest.api.compute.servers.test_server_rescue."
            "ServerRescueTestJSON)": ("fail", "Traceback: BuildErrorException"),
        }
        s = summary.summarize(None, results, EXPECTED, [("regex-a", "why a")])
        t = s["kinds"]["docker"]["tempest"]
        self.assertEqual((1, 2, 1), (t["passed"], t["skipped"], t["failed"]))
        self.assertEqual([{"regex": "regex-a", "reason": "why a"}], t["excluded"])
        resize = [x for x in t["tests"] if "resize" in x["name"]][0]
        self.assertTrue(resize["explained"])
        self.assertIn("one compute host per kind", resize["reason"])
        self.assertEqual(2, len(s["problems"]))
        self.assertIn("unexplained skip", " ".join(s["problems"]))
        self.assertIn("FAILED setUpClass", " ".join(s["problems"]))

    def test_explain_skip_needs_every_given_regex(self):
        skips = [{"match": "resize", "message": "^Resize", "reason": "r"},
                 {"match": "resize", "reason": "any resize"}]
        self.assertEqual("r", summary.explain_skip("x.test_resize", "Resize off", skips)["reason"])
        self.assertEqual("any resize",
                         summary.explain_skip("x.test_resize", "other", skips)["reason"])
        self.assertIsNone(summary.explain_skip("x.test_boot", "Resize off", skips))

    def test_main_writes_json_and_text_from_files(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        rally_json = os.path.join(tmp, "rally.json")
        with open(rally_json, "w") as f:
            json.dump(self.rally_report(), f)
        stream = os.path.join(tmp, "tempest.subunit")
        with open(stream, "wb") as f:
            f.write(subunit_stream([
                ("tempest.api.compute.servers.test_novnc.NoVNCConsoleTestJSON.test_novnc[id-9]",
                 "skip", "VNC Console feature is disabled."),
                ("tempest.api.compute.servers.test_servers.ServersTestJSON.test_update[id-8]",
                 "success", None)]))
        out = os.path.join(tmp, "out")
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", io.StringIO()))
        rc = summary.main(["--expected", os.path.join(HERE, "expected.yaml"),
                           "--exclude", os.path.join(HERE, "tempest-exclude.txt"),
                           "--out", out, "--rally-json", rally_json,
                           "--tempest-subunit", stream, "--seconds", "rally=100", "total=200.5"])
        self.assertEqual(0, rc)
        with open(os.path.join(out, "conformance.json")) as f:
            data = json.load(f)
        self.assertEqual({"rally": 100, "total": 200}, data["seconds"])
        self.assertEqual(1, data["kinds"]["docker"]["tempest"]["passed"])
        with open(os.path.join(out, "conformance.txt")) as f:
            text = f.read()
        self.assertRegex(text, r"docker +tempest:fast +1 +1 +0 +1\n")
        self.assertRegex(text, r"qemu-tcg +rally +1 +\d+ +0 +-\n")
        self.assertIn("no VNC console", text)
        self.assertIn("excluded test_server_actions.ServerActionsTestOtherB."
                      "test_get_console_output_with_unlimited_size", text)
        self.assertIn("docker attach_interface: the Docker driver cannot hot-plug", text)
        self.assertIn("problems: none", text)


class ListsTest(testtools.TestCase):
    """The lists say why: every exclusion and expected skip has a reason."""

    def test_every_exclusion_has_a_reason_and_compiles(self):
        exclusions = summary.read_exclusions(os.path.join(HERE, "tempest-exclude.txt"))
        self.assertTrue(exclusions)
        for regex, reason in exclusions:
            re.compile(regex)
            self.assertGreater(len(reason), 20, regex)

    def test_fast_set_selects_server_tests_only(self):
        with open(os.path.join(HERE, "tempest-fast.txt")) as f:
            regexes = [line.split("#")[0].strip() for line in f]
        regexes = [r for r in regexes if r]
        self.assertGreater(len(regexes), 5)
        for regex in regexes:
            re.compile(regex)
            self.assertTrue(regex.startswith(r"^tempest\.api\.compute\.servers\."), regex)

    def test_expected_entries_have_reasons(self):
        for entry in EXPECTED["tempest"]["skips"]:
            self.assertTrue(entry.get("match") or entry.get("message"), entry)
            for key in ("match", "message"):
                if key in entry:
                    re.compile(entry[key])
            self.assertGreater(len(entry["reason"]), 10)
        for entry in EXPECTED["rally"]["not_run"]:
            self.assertTrue(entry["scenarios"])
            self.assertGreater(len(entry["reason"]), 10)

    def test_sample_header_lists_what_is_not_run(self):
        with open(SAMPLE) as f:
            header = f.read().split("#}")[0]
        for entry in EXPECTED["rally"]["not_run"]:
            for scenario in entry["scenarios"]:
                name = scenario.split(".", 1)[1]
                # the header may abbreviate families: "boot_server_from_volume*"
                self.assertTrue(name in header or any(
                    name.startswith(w.rstrip("*,")) for w in header.split()
                    if w.endswith(("*", "*,"))) or "volume" in name, name)
        for action in EXPECTED["rally"]["refusals"]:
            self.assertIn(action, header)


class TempestConfTest(testtools.TestCase):

    VALUES = {"log_file": "/w/tempest.log", "auth_url": "http://127.0.0.1:5000/v3",
              "region": "RegionOne", "admin_username": "admin", "admin_password": "pw",
              "admin_project_name": "admin", "admin_domain_name": "Default",
              "image_id": "img-1", "flavor_id": "f-1", "alt_flavor_id": "f-2",
              "network": "vmct-net"}

    def parse(self, text):
        parser = configparser.RawConfigParser()
        parser.read_string(text)
        return parser

    def test_render(self):
        conf = self.parse(tempest_conf.render(self.VALUES))
        self.assertEqual("img-1", conf.get("compute", "image_ref"))
        self.assertEqual("img-1", conf.get("compute", "image_ref_alt"))
        self.assertEqual("f-2", conf.get("compute", "flavor_ref_alt"))
        self.assertEqual("vmct-net", conf.get("compute", "fixed_network_name"))
        self.assertEqual("false", conf.get("auth", "create_isolated_networks"))
        self.assertEqual("false", conf.get("validation", "run_validation"))
        self.assertEqual("false", conf.get("service_available", "cinder"))
        self.assertEqual("http://127.0.0.1:5000/v3", conf.get("identity", "uri_v3"))
        features = dict(conf.items("compute-feature-enabled"))
        for flag in ("rescue", "suspend", "pause", "snapshot", "console_output", "shelve"):
            self.assertEqual("true", features[flag], flag)
        for flag in ("resize", "interface_attach", "vnc_console", "change_password",
                     "live_migration", "cold_migration", "config_drive"):
            self.assertEqual("false", features[flag], flag)

    def test_every_flag_says_why(self):
        for flag, (value, why) in tempest_conf.DOCKER_FEATURES.items():
            self.assertIsInstance(value, bool)
            self.assertGreater(len(why), 10, flag)

    def test_write_looks_up_and_creates_the_alt_flavor(self):
        tmp = self.useFixture(fixtures.TempDir()).path

        class FakeCloud:
            created = []

            def flavor(self, name):
                return {"id": "f-1", "name": name, "ram": 256, "vcpus": 1, "disk": 1} \
                    if name == "vmct.tiny" else None

            def network_exists(self, name):
                return name == "vmct-net"

            def ensure_flavor(self, name, like):
                self.created.append((name, like["ram"]))
                return {"id": "f-2"}

            def image_id(self, name):
                return "img-9"

        args = type("Args", (), dict(out=os.path.join(tmp, "tempest.conf"),
                                     image="vmct-workload-docker", flavor="vmct.tiny",
                                     alt_flavor="vmct-conformance.alt", network="vmct-net"))
        env = {"OS_AUTH_URL": "http://127.0.0.1:5000/v3", "OS_USERNAME": "admin",
               "OS_PASSWORD": "pw", "OS_PROJECT_NAME": "admin"}
        self.useFixture(fixtures.MonkeyPatch("sys.stdout", io.StringIO()))
        with open(args.out, "w") as f:      # tempest init leaves one, 0644
            f.write("[DEFAULT]\n")
        os.chmod(args.out, 0o644)
        cloud = FakeCloud()
        tempest_conf.write(args, env=env, cloud=cloud)
        self.assertEqual([("vmct-conformance.alt", 256)], cloud.created)
        conf = self.parse(open(args.out).read())
        self.assertEqual("img-9", conf.get("compute", "image_ref"))
        self.assertEqual(os.path.join(tmp, "tempest.log"), conf.get("DEFAULT", "log_file"))
        self.assertEqual(0o600, os.stat(args.out).st_mode & 0o777)
        args.network = "nope"
        self.assertRaises(SystemExit, tempest_conf.write, args, env=env, cloud=cloud)
