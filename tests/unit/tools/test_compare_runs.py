"""tools/bench/compare_runs.py: do two runs of a task agree on the lifecycle metrics?"""

import io
import json
import os
from unittest import mock

import fixtures
import testtools

from rally_vmct.workloads import stats
from tests.unit import tools

compare_runs = tools.load("compare_runs", os.path.join(tools.TOOLS, "bench", "compare_runs.py"))


def group(kind, metric, values, source="atomic"):
    s = stats.summary(values)
    return dict(kind=kind, concurrency=1, source=source, group="atomic action", metric=metric,
                unit="s", n=s.n, mean=s.mean, sd=s.sd, cv=s.cv, min=s.min, max=s.max,
                ci_low=s.ci_low, ci_high=s.ci_high)


class CompareRunsTestCase(testtools.TestCase):

    def export(self, *groups):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "run.json")
        with open(path, "w") as f:
            json.dump({"format": "vmct-comparison", "groups": list(groups)}, f)
        return path

    def run_tool(self, *argv):
        out = io.StringIO()
        with mock.patch("sys.stdout", out):
            self.assertEqual(0, compare_runs.main(list(argv)))
        return out.getvalue().splitlines()

    def test_apart_and_overlapping_intervals_with_welch_p(self):
        a = self.export(group("docker", "vmct.build", [1.0, 1.1, 0.9, 1.0]),
                        group("docker", "vmct.delete", [2.0, 2.2, 1.8]),
                        group("docker", "vmct.sysbench_cpu", [5.0, 5.1]))
        b = self.export(group("docker", "vmct.build", [3.0, 3.1, 2.9, 3.0]),
                        group("docker", "vmct.delete", [2.1, 2.3, 1.9]),
                        group("docker", "vmct.sysbench_cpu", [9.0, 9.1]))
        lines = self.run_tool(a, b)
        build = [ln for ln in lines if "vmct.build" in ln][0]
        self.assertIn("APART", build)
        p = float(build.rsplit("p=", 1)[1])
        self.assertLess(p, 0.001)
        self.assertIn("overlap", [ln for ln in lines if "vmct.delete" in ln][0])
        # benchmark workloads are no lifecycle metric unless asked for
        self.assertFalse([ln for ln in lines if "sysbench" in ln])
        self.assertEqual("2 metrics compared; 1 with intervals apart", lines[-1])
        self.assertEqual("3 metrics compared; 2 with intervals apart",
                         self.run_tool(a, b, "--all")[-1])

    def test_one_value_has_no_interval(self):
        a = self.export(group("kvm", "vmct.build", [4.0]))
        lines = self.run_tool(a, a)
        self.assertIn("no interval", lines[0])
        self.assertIn("p=-", lines[0])

    def test_not_an_export_names_the_fix(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "x.json")
        with open(path, "w") as f:
            json.dump({"format": "rally"}, f)
        e = self.assertRaises(SystemExit, compare_runs.main, [path, path])
        self.assertIn("--type vmct-comparison", str(e))
