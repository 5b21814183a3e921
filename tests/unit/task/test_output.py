"""The report contract: what the exporter reads is what the scenarios write."""

import testtools

from rally_vmct.hostcost import density
from rally_vmct.hostcost import density_curves
from rally_vmct.hostcost import iteration
from rally_vmct.hostcost import phase_samples
from rally_vmct.task import output


class ContractTestCase(testtools.TestCase):

    def test_host_cost_columns_read_are_written(self):
        written = [column for column, _, _ in iteration.PHASE_COLUMNS]
        read = [output.HOST_COST_PHASE] + [column for column, _, _ in phase_samples.FIGURES]
        self.assertEqual([], [column for column in read if column not in written])

    def test_host_cost_title_round_trips(self):
        title = iteration.phase_table_title("kvm", "compute-1")
        self.assertEqual("kvm: host cost by phase on compute-1", title)
        self.assertEqual(("kvm", "compute-1"), phase_samples.parse_title(title))
        self.assertIsNone(output.parse_host_cost_title("kvm: lifecycle [s]"))

    def test_density_columns_read_are_written(self):
        written = [column for column, _, _ in density.COLUMNS]
        read = [output.DENSITY_INSTANCES] + [column for column, _, _, _ in density_curves.CURVES]
        self.assertEqual([], [column for column in read if column not in written])
        self.assertIn(output.DENSITY_LIMIT, density.LIMIT_COLUMNS)
        self.assertIn(output.DENSITY_REASON, density.LIMIT_COLUMNS)
        self.assertEqual("kvm: density", density.table_title("kvm"))
        self.assertEqual("kvm: density limit", density.limit_title("kvm"))
