"""``vmct-compare-runs`` on real exports: three ``rally task start`` runs, for real.

The test-only scenario plugin of test_comparison_export (fixed atomic actions per
iteration) runs three times in a private Rally DB: a baseline run, a run with the
same distributions (other values), and a run whose docker builds take twice as
long. Each is exported with ``rally task export --type vmct-comparison-json`` and
the console script the package installs compares them.
"""

import json
import os
import subprocess
import sys


from tests.functional import rally_home
from tests.functional import test_comparison_export as export_test

COMPARE = os.path.join(os.path.dirname(sys.executable), "vmct-compare-runs")


def _task(kvm_builds, docker_builds, kvm_deletes, docker_deletes):
    def workload(kind, builds, deletes):
        return {"scenario": {"VMCTFunctionalTest.emit_contract": {
            "kind": {"name": kind}, "builds": builds, "deletes": deletes}},
            "runner": {"constant": {"times": len(builds), "concurrency": 1}}}
    return {"version": 2, "title": "vmct compare-runs functional test",
            "subtasks": [{"title": "lifecycle", "workloads": [
                workload("kvm", kvm_builds, kvm_deletes),
                workload("docker", docker_builds, docker_deletes)]}]}


BASELINE = _task([10.0, 10.4, 9.8, 10.2, 10.1], [3.0, 3.1, 2.9, 3.05, 2.95],
                 [5.0, 5.1, 4.9, 5.05, 4.95], [1.0, 1.02, 0.98, 1.01, 0.99])
# the same distributions, other draws
AGAIN = _task([10.1, 9.9, 10.3, 10.0, 10.2], [3.02, 2.97, 3.08, 2.93, 3.0],
              [4.97, 5.08, 5.02, 4.93, 5.0], [1.01, 0.99, 1.0, 0.98, 1.02])
# docker's builds slowed on purpose: twice as long
SLOWED = _task([10.1, 9.9, 10.3, 10.0, 10.2], [6.04, 5.94, 6.16, 5.86, 6.0],
               [4.97, 5.08, 5.02, 4.93, 5.0], [1.01, 0.99, 1.0, 0.98, 1.02])


class TestCompareRuns(rally_home.RallyHomeTestCase):

    @classmethod
    def prepare(cls, home):
        plugins = os.path.join(home.path, "plugins")
        os.mkdir(plugins)
        with open(os.path.join(plugins, "vmct_functional_plugin.py"), "w") as f:
            f.write(export_test.PLUGIN)
        cls.base = ["--plugin-paths", plugins]
        home.rally("env", "create", "--name", "vmct-runs", "--no-use")
        cls.exports, cls.uuids = {}, {}
        for name, task in (("baseline", BASELINE), ("again", AGAIN), ("slowed", SLOWED)):
            task_file = os.path.join(home.path, "%s.json" % name)
            with open(task_file, "w") as f:
                json.dump(task, f)
            home.rally(*cls.base, "task", "start", task_file, "--env", "vmct-runs",
                       "--no-use", "--tag", name)
            uuid = home.rally("task", "list", "--env", "vmct-runs", "--uuids-only"
                              ).stdout.split()[-1]
            cls.uuids[name] = uuid
            out = os.path.join(home.path, "%s-cmp.json" % name)
            home.rally(*cls.base, "task", "export", uuid, "--type", "vmct-comparison-json",
                       "--to", out)
            cls.exports[name] = out

    def compare(self, *args):
        return subprocess.run([COMPARE] + list(args), capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, LC_ALL="C.UTF-8"))

    def test_equivalent_runs_show_no_regression(self):
        proc = self.compare(self.exports["baseline"], self.exports["again"])
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)
        self.assertNotIn("REGRESSED", proc.stdout)
        last = proc.stdout.splitlines()[-1]
        # kvm and docker: vmct.build, its child nova.boot_server, vmct.delete
        self.assertTrue(last.startswith("6 metrics"), last)
        self.assertIn("0 regressed, 0 more failures, 0 missing, 0 improved, 6 same", last)
        self.assertTrue(last.endswith("exit 0"), last)

    def test_one_kind_slowed_on_purpose_is_a_regression(self):
        proc = self.compare(self.exports["baseline"], self.exports["slowed"], "--json")
        self.assertEqual(1, proc.returncode, proc.stdout + proc.stderr)
        verdicts = {(m["kind"], m["metric"]): m["verdict"]
                    for m in json.loads(proc.stdout)["metrics"]}
        self.assertEqual({("docker", "vmct.build"), ("docker", "nova.boot_server")},
                         {k for k, v in verdicts.items() if v == "regressed"})
        self.assertNotIn("regressed", [v for k, v in verdicts.items() if k[0] == "kvm"])
        text = self.compare(self.exports["baseline"], self.exports["slowed"]).stdout
        line = [x for x in text.splitlines() if "docker" in x and "vmct.build" in x][0]
        self.assertTrue(line.startswith("REGRESSED"), line)
        self.assertIn("interval excludes 1 (Holm) and reaches past ±5 % on the worse side",
                      line)

    def test_python_m_and_bad_input(self):
        proc = subprocess.run([sys.executable, "-m", "rally_vmct.runs.compare",
                               self.exports["baseline"], self.exports["baseline"]],
                              capture_output=True, text=True, timeout=120)
        # a run against itself: no regression, but docker's nova.boot_server spreads too
        # much for 5 values a side to tell ±5 %: exit 3, with the N that would tell
        self.assertEqual(3, proc.returncode, proc.stdout + proc.stderr)
        self.assertIn("0 regressed, 0 more failures, 0 missing, 0 improved", proc.stdout)
        self.assertIn("same          docker    c=1   vmct.build [s]", proc.stdout)
        self.assertRegex(proc.stdout, r"cannot tell +docker +c=1 +nova.boot_server \[s\] .*"
                         r"about \d+ values a side would tell a ±5 % change")
        bad = os.path.join(self.home.path, "bad.json")
        with open(bad, "w") as f:
            json.dump({"tasks": []}, f)
        proc = self.compare(bad, self.exports["baseline"])
        self.assertEqual(2, proc.returncode)
        self.assertIn("is not a vmct-comparison JSON export", proc.stderr)

    def test_runs_exported_together_are_the_unit(self):
        # rally task export UUID1 UUID2 (two real tasks): each side has two runs, so
        # the comparison's interval is over the runs' mean logs
        out = os.path.join(self.home.path, "pooled.json")
        self.home.rally(*self.base, "task", "export", self.uuids["baseline"],
                        self.uuids["again"], "--type", "vmct-comparison-json", "--to", out)
        with open(out) as f:
            data = json.load(f)
        self.assertEqual(2, data["methods"]["runs"])
        docker = [g for g in data["groups"] if g["kind"] == "docker"
                  and g["metric"] == "vmct.build"][0]
        self.assertEqual(("run", 2, 2, 10), (docker["replicate"], docker["runs"],
                                             docker["baseline_runs"], docker["n"]))
        self.assertEqual("welch-t-log-runs", docker["rule"])
