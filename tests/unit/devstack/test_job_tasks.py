"""devstack/tools/vmct-job-tasks run for real, with recording stand-ins for devstack's venv."""

import os
import subprocess

import fixtures
import testtools

from tests.unit.devstack import base

SCRIPT = os.path.join(base.DEVSTACK, "tools", "vmct-job-tasks")
RECORDER = """#!/bin/bash
printf '%s\\n' "$(basename "$0") $*" >> "$CALLS"
if [ "$(basename "$0")" = vmct-run-tasks ]; then exit "${FAKE_RC:-0}"; fi
exit "${FAKE_WAIT_RC:-0}"
"""


class JobTasksTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.calls = os.path.join(self.tmp, "calls")
        self.venv = os.path.join(self.tmp, "venv", "bin")
        self.source = os.path.join(self.tmp, "rally-vmct")
        tools = os.path.join(self.source, "devstack", "tools")
        for directory, name in ((self.venv, "python3"), (self.venv, "nova-manage"),
                                (tools, "vmct-run-tasks")):
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, name)
            with open(path, "w") as f:
                f.write(RECORDER)
            os.chmod(path, 0o755)

    def run_script(self, *args, rc=0, wait_rc=0):
        env = dict(os.environ, CALLS=self.calls, FAKE_RC=str(rc), FAKE_WAIT_RC=str(wait_rc))
        proc = subprocess.run([SCRIPT, "--source-dir", self.source, "--venv-bin", self.venv,
                               "--results-dir", "/r", "--task-args-file", "/a.yaml"]
                              + list(args), env=env, capture_output=True, text=True)
        calls = []
        if os.path.exists(self.calls):
            with open(self.calls) as f:
                calls = f.read().splitlines()
        return proc, calls

    def test_waits_maps_zones_then_runs_the_tasks(self):
        proc, calls = self.run_script("--expect", "kvm=1", "--expect", "docker=2",
                                      "--task-args", '{"times": 4}', "--expect-timeout", "9",
                                      "samples/tasks/a.yaml", "samples/tasks/b.yaml")
        self.assertEqual(0, proc.returncode, proc.stderr)
        aggregates = os.path.join(self.source, "devstack", "tools", "vmct_aggregates.py")
        self.assertEqual([
            "python3 %s --wait-only --timeout 9 --expect kvm=1 --expect docker=2" % aggregates,
            "nova-manage --config-file /etc/nova/nova.conf cell_v2 discover_hosts --verbose",
            "python3 %s --expect kvm=1 --expect docker=2" % aggregates,
            "vmct-run-tasks --results-dir /r --task-args-file /a.yaml --task-args "
            '{"times": 4} %s/samples/tasks/a.yaml %s/samples/tasks/b.yaml'
            % (self.source, self.source)], calls)

    def test_empty_task_args_are_not_passed(self):
        proc, calls = self.run_script("--task-args", "{}", "samples/tasks/a.yaml")
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertNotIn("--task-args ", calls[-1])

    def test_exit_status_is_the_task_runners(self):
        proc, calls = self.run_script("samples/tasks/a.yaml", rc=2)
        self.assertEqual(2, proc.returncode)
        self.assertEqual(4, len(calls))

    def test_hosts_that_do_not_come_up_stop_it_before_the_tasks(self):
        proc, calls = self.run_script("samples/tasks/a.yaml", wait_rc=1)
        self.assertEqual(1, proc.returncode)
        self.assertEqual(1, len(calls))

    def test_no_task_file_is_an_error_naming_the_variable(self):
        proc, calls = self.run_script()
        self.assertEqual(1, proc.returncode)
        self.assertIn("vmct_tasks is empty", proc.stderr)
        self.assertEqual([], calls)
