"""VMCT.density's tables: steps, memory cost per step, the hosts' fluctuation."""

import testtools

from rally_vmct.hostcost.agent import procfs
from rally_vmct.hostcost import density


class TestDensity(testtools.TestCase):

    def test_steps(self):
        self.assertEqual([1, 1, 1], density.steps(3, 1))
        self.assertEqual([4, 4, 2], density.steps(10, 4))
        self.assertEqual([3], density.steps(3, 5))

    def test_step_cost_without_instances_on_the_hosts(self):
        samples = [{"type": "sample", "t": t, "mem": {"used": 10 * procfs.MIB,
                                                      "available": 0}} for t in (0, 1, 2)]
        cost = density.step_cost([samples], ["srv-1"], (0.5, 1.5),
                                 density.Baseline(4 * procfs.MIB))
        self.assertEqual(10 * procfs.MIB, cost.used)
        self.assertEqual(6 * procfs.MIB, cost.increase_per_instance)
        self.assertFalse(cost.within_fluctuation)
        self.assertIsNone(cost.pss_per_instance)
        self.assertEqual(0, cost.found)

    @staticmethod
    def used_samples(*mib):
        return [{"type": "sample", "t": float(t),
                 "mem": {"used": m * procfs.MIB, "available": 0}} for t, m in enumerate(mib)]

    def test_baseline_is_the_mean_and_range_of_the_samples(self):
        monitor = density.Monitor({"interval": 1.0, "hosts": [{"name": "local",
                                                               "path": "/unused"}]},
                                  wait=lambda *args: None)
        monitor.samples = lambda t0, t1: [self.used_samples(100, 104, 102),
                                          self.used_samples(50, 50, 50)]
        # the mean over time of the lines between samples: 102.5 + 50; the range: 4 + 0
        self.assertEqual(density.Baseline(152.5 * procfs.MIB, 4 * procfs.MIB),
                         monitor.baseline(0.0, 2.0))

    def test_an_increase_within_the_hosts_fluctuation_is_no_cost(self):
        baseline = density.Baseline(100 * procfs.MIB, 8 * procfs.MIB)
        for after, per_instance in ((90, None), (108, None), (112, 6.0)):
            cost = density.step_cost([self.used_samples(after, after)], ["a", "b"],
                                     (0.0, 1.0), baseline)
            self.assertEqual(per_instance is None, cost.within_fluctuation, after)
            self.assertEqual(per_instance, cost.increase_per_instance and
                             cost.increase_per_instance / procfs.MIB, after)

    def test_the_table_says_within_the_hosts_fluctuation(self):
        fill = density.Fill(max_servers=2)
        fill.rows = [density.ServerRow(instances=n, step=n, boot_s=1.0, build_s=0.5)
                     for n in (1, 2)]
        fill.costs = {1: density.StepCost(used=90 * procfs.MIB,
                                          within_fluctuation=True),
                      2: density.StepCost(used=120 * procfs.MIB,
                                          increase_per_instance=10 * procfs.MIB)}
        rows = density.table("kvm", fill, True)["data"]["rows"]
        self.assertEqual([density.WITHIN_FLUCTUATION, 10.0], [r[5] for r in rows])
        [memory] = [c for c in density.curves("kvm", fill)
                    if "memory per instance" in c["title"]]
        self.assertEqual([["host memory increase per instance", [[2, 10.0]]]], memory["data"])
