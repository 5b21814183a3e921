"""What the comparison reads back of the host cost tables, row by row."""

import testtools

from rally_vmct.hostcost import iteration
from rally_vmct.hostcost import phase_samples

MIB = 1024 * 1024


def phase_table(kind, rows):
    summary = [dict(dict.fromkeys(k for _, k, _ in iteration.PHASE_COLUMNS),
                    phase=phase, seconds=1.0, host_cpu_s=cpu, pss_mean=pss)
               for phase, cpu, pss in rows]
    return iteration.phase_table(kind, "local", summary, "about")


class TestPhaseSamples(testtools.TestCase):

    def test_host_cost_title(self):
        title = iteration.phase_table_title("qemu-tcg", "compute-1")
        self.assertEqual(("qemu-tcg", "compute-1"), phase_samples.parse_title(title))
        self.assertIsNone(phase_samples.parse_title("kvm: lifecycle [s]"))

    def test_figures_are_phase_table_columns(self):
        columns = [name for name, _, _ in iteration.PHASE_COLUMNS]
        for column, _, _ in phase_samples.FIGURES:
            self.assertIn(column, columns)

    def test_samples_of_the_compared_phases(self):
        table = phase_table("kvm", [("build", 3.0, 60 * MIB), ("reboot", 1.0, None),
                                    ("iteration", 9.0, 60 * MIB)])
        found = phase_samples.samples({"output": {"complete": [table, "junk"]}},
                                      " (soft)")
        self.assertEqual([("kvm", "host cost: build", "host CPU (all CPUs, busy)", "CPU s", 3.0),
                          ("kvm", "host cost: build", "instance PSS, mean", "MiB", 60.0),
                          ("kvm", "host cost: reboot (soft)", "host CPU (all CPUs, busy)",
                           "CPU s", 1.0)],
                         found)
