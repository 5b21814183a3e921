"""tools/bench/poll_cost.py: the sweep's per-level figures."""

import configparser
import os

import testtools

from tests.unit import tools

poll_cost = tools.load("poll_cost", os.path.join(tools.TOOLS, "bench", "poll_cost.py"))


class QuantilesTest(testtools.TestCase):

    def test_p50_p95_p99_of_a_level(self):
        values = [float(v) for v in range(1, 101)]
        self.assertEqual([50.5, 95.05, 99.01],
                         [round(q, 2) for q in poll_cost.quantiles(values)])

    def test_one_iteration_is_every_quantile(self):
        self.assertEqual([3.0, 3.0, 3.0], poll_cost.quantiles([3.0]))

    def test_none_is_not_a_number(self):
        self.assertTrue(all(q != q for q in poll_cost.quantiles([])))


class WorkloadsTest(testtools.TestCase):

    def test_every_workload_of_every_subtask(self):
        report = {"tasks": [{"subtasks": [{"workloads": [1, 2]}, {"workloads": [3]}]}]}
        self.assertEqual([1, 2, 3], list(poll_cost.workloads(report)))


class ScaleConfTest(testtools.TestCase):
    """samples/tasks/scale.conf: options Rally knows, each raised above its default.

    oslo.config ignores an option it does not know (a wrong group, a typo): the sweep
    would then run with the default waits, which fail the high levels.
    """

    def test_every_option_is_registered_and_raised(self):
        from rally_openstack.common.cfg import opts as openstack_opts

        from rally_vmct import opts as vmct_opts
        registered = {}
        for group, options in openstack_opts.list_opts() + vmct_opts.list_opts():
            registered.update({(group, o.dest): o for o in options})
        parser = configparser.ConfigParser()
        self.assertEqual([poll_cost.SCALE_CONF], parser.read(poll_cost.SCALE_CONF))
        given = [("DEFAULT", key, value) for key, value in parser.defaults().items()]
        given += [(section, key, value) for section in parser.sections()
                  for key, value in parser.items(section) if key not in parser.defaults()]
        self.assertEqual(3, len(given), given)
        for section, key, value in given:
            option = registered.get((section, key))
            self.assertIsNotNone(option, "[%s] %s is no Rally option" % (section, key))
            self.assertGreater(float(value), option.default, (section, key))
