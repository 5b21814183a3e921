"""devstack/tools/vmct-run-tasks (what the Zuul jobs run) against a real Rally.

Rally's own ``Dummy`` scenarios need no cloud: one task passes its SLA, one fails it, one
is invalid. A tiny exporter plugin shows that any ``--export TYPE`` reaches Rally with the
task uuids and destination (the job's ``vmct-comparison`` export works the same way).
"""

import json
import os
import subprocess
import xml.etree.ElementTree as ET

import testtools

from tests.functional import rally_home

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SCRIPT = os.path.join(ROOT, "devstack", "tools", "vmct-run-tasks")

PASSING = """---
version: 2
title: passing
subtasks:
  - title: dummy
    workloads:
      - scenario: {Dummy.dummy: {sleep: 0}}
        runner: {constant: {times: {{ times | default(1) }}, concurrency: 1}}
        sla: {failure_rate: {max: 0}}
"""
FAILING = """---
version: 2
title: failing
subtasks:
  - title: dummy exception
    workloads:
      - scenario: {Dummy.dummy_exception: {}}
        runner: {constant: {times: 2, concurrency: 1}}
        sla: {failure_rate: {max: 0}}
"""
INVALID = """---
version: 2
title: invalid
subtasks:
  - title: no such scenario
    workloads:
      - scenario: {Dummy.no_such_scenario: {}}
        runner: {constant: {times: 1, concurrency: 1}}
"""
# An exporter writing the uuids it was given to its destination.
EXPORTER = '''
import json
from rally.task import exporter


@exporter.configure("vmct-test-uuids")
class UuidsExporter(exporter.TaskExporter):
    """Writes the exported task uuids as JSON."""

    def generate(self):
        return {"files": {self.output_destination: json.dumps(
            [t["uuid"] for t in self.tasks_results])},
            "open": self.output_destination}
'''
EXPORTS = ["html-static=report.html", "json=report.json", "junit-xml=junit.xml",
           "vmct-test-uuids=uuids.json"]


class RunTasksTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.home = self.useFixture(rally_home.RallyHome())
        self.home.rally("env", "create", "--name", "empty")
        self.dir = self.home.path
        self.plugins = os.path.join(self.dir, "plugins")
        os.makedirs(self.plugins)
        with open(os.path.join(self.plugins, "uuids_exporter.py"), "w") as f:
            f.write(EXPORTER)
        for name, text in (("passing", PASSING), ("failing", FAILING), ("invalid", INVALID)):
            with open(os.path.join(self.dir, name + ".yaml"), "w") as f:
                f.write(text)
        self.results = os.path.join(self.dir, "results")

    def run_tasks(self, *args, exports=EXPORTS):
        cmd = [SCRIPT, "--results-dir", self.results, "--rally", rally_home.RALLY,
               "--rally-arg", "--config-file", "--rally-arg", self.home.conf,
               "--rally-arg", "--plugin-paths", "--rally-arg", self.plugins]
        for e in exports:
            cmd += ["--export", e]
        return subprocess.run(cmd + list(args), env=self.home.env(), cwd=self.dir,
                              capture_output=True, text=True, timeout=600)

    def read(self, name):
        with open(os.path.join(self.results, name)) as f:
            return f.read()

    def task(self, name):
        return os.path.join(self.dir, name + ".yaml")

    def test_sla_failure_exits_2_after_writing_every_report(self):
        args_file = os.path.join(self.dir, "args.yaml")
        with open(args_file, "w") as f:
            f.write("times: 2\n")
        proc = self.run_tasks("--task-args-file", args_file, "--task-args", '{"times": 3}',
                              self.task("passing"), self.task("failing"))
        self.assertEqual(2, proc.returncode, proc.stdout + proc.stderr)
        status = self.read("status.txt").splitlines()
        self.assertRegex(status[0], r"^passing [0-9a-f-]{36} passed$")
        self.assertRegex(status[1], r"^failing [0-9a-f-]{36} SLA FAILED$")
        self.assertEqual("SLA FAILED: failing", status[-1])
        uuids = [line.split()[1] for line in status[:2]]

        # one report over both tasks, in task order; --task-args won over the file
        report = json.loads(self.read("report.json"))
        self.assertEqual(uuids, [t["uuid"] for t in report["tasks"]])
        passing = report["tasks"][0]["subtasks"][0]["workloads"][0]
        self.assertEqual(3, len(passing["data"]))
        self.assertTrue(passing["pass_sla"])
        self.assertFalse(report["tasks"][1]["subtasks"][0]["workloads"][0]["pass_sla"])
        self.assertIn("<html", self.read("report.html"))
        self.assertNotIn("https://cdnjs", self.read("report.html"))  # static: offline
        suites = ET.fromstring(self.read("junit.xml"))
        failures = sum(int(s.get("failures", 0)) for s in suites.iter("testsuite"))
        self.assertGreaterEqual(failures, 1)
        self.assertEqual(uuids, json.loads(self.read("uuids.json")))
        self.assertIn("Using task: %s" % uuids[1], self.read("failing.log"))
        self.assertIn("FAIL", self.read("failing.sla.txt"))
        self.assertTrue(self.read("passing.detailed.txt"))

    def test_all_passing_exits_0(self):
        proc = self.run_tasks(self.task("passing"), exports=["json=report.json"])
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        self.assertEqual("PASSED: 1 task(s)", self.read("status.txt").splitlines()[-1])

    def test_invalid_task_and_failed_report_are_errors(self):
        proc = self.run_tasks(self.task("invalid"), self.task("passing"),
                              exports=["json=report.json", "no-such-exporter=x.html"])
        self.assertEqual(1, proc.returncode, proc.stdout + proc.stderr)
        status = self.read("status.txt").splitlines()
        self.assertRegex(status[0], r"^invalid \S+ ERROR \(rally exit code 114, see invalid.log\)$")
        self.assertEqual("report no-such-exporter FAILED (see reports.log)", status[2])
        self.assertEqual("ERROR: invalid report:no-such-exporter", status[-1])
        self.assertIn("no-such-exporter", self.read("reports.log"))
        # the task that ran, and only it, is in the reports
        passing_uuid = status[1].split()[1]
        self.assertEqual([passing_uuid],
                         [t["uuid"] for t in json.loads(self.read("report.json"))["tasks"]])

    def test_bad_arguments(self):
        for args, message in (
                ([], "no task file given"),
                ([os.path.join(self.dir, "nope.yaml")], "no task file"),
                (["--task-args-file", "/nonexistent/args.yaml", self.task("passing")],
                 "--task-args-file /nonexistent/args.yaml does not exist"),
                (["--export", "json", self.task("passing")], "--export json: use TYPE=FILE"),
                (["--frobnicate", self.task("passing")], "unknown option --frobnicate")):
            proc = subprocess.run([SCRIPT] + args, capture_output=True, text=True,
                                  cwd=self.dir, timeout=60)
            self.assertEqual(64, proc.returncode, args)
            self.assertIn(message, proc.stderr)
            self.assertFalse(os.path.exists(self.results))
