"""The plugins' docstrings are complete: the plugin reference is generated from them."""

import inspect

from rally.common.plugin import plugin
from rally import plugins
from rally.task import scenario
import testtools


def vmct_plugins(base=plugin.Plugin):
    plugins.load()
    return sorted((cls for cls in base.get_all(allow_hidden=True)
                   if cls.__module__.split(".")[0] == "rally_vmct"),
                  key=lambda cls: cls.get_name())


class DocstringsTestCase(testtools.TestCase):

    def test_every_scenario_argument_has_param_text(self):
        scenarios = vmct_plugins(scenario.Scenario)
        self.assertGreater(len(scenarios), 5)
        missing = []
        for cls in scenarios:
            documented = {p["name"]: p["doc"].strip()
                          for p in cls.get_info()["parameters"]}
            for name, arg in inspect.signature(cls.run).parameters.items():
                if name == "self" or arg.kind in (arg.VAR_POSITIONAL, arg.VAR_KEYWORD):
                    continue
                if not documented.get(name):
                    missing.append("%s: %s" % (cls.get_name(), name))
        self.assertEqual([], missing, "scenario arguments without :param text")

    def test_every_plugin_has_a_title(self):
        found = vmct_plugins()
        self.assertGreater(len(found), 20)
        self.assertEqual([], [cls.get_name() for cls in found
                              if not cls.get_info()["title"].strip()])
