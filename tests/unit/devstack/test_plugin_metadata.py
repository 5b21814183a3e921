"""devstack/settings names the plugin and the plugin it needs (define_plugin, plugin_requires)."""

import glob
import os
import re

import yaml

from tests.unit.devstack import base

SETTINGS = os.path.join(base.DEVSTACK, "settings")
# How devstack's Zuul role reads them (roles/write-devstack-local-conf/library/
# devstack_local_conf.py, PluginGraph): without running the file, one line at a time.
DEFINE_RE = re.compile(r"^define_plugin\s+(\S+).*")
REQUIRE_RE = re.compile(r"^plugin_requires\s+(\S+)\s+(\S+).*")
RECORD = """
function define_plugin {
    stub_record define_plugin "$@"
}
function plugin_requires {
    stub_record plugin_requires "$@"
}
"""


def read_settings():
    """(name, requirements) the way the Zuul role parses the settings file."""
    name, reqs = None, set()
    with open(SETTINGS) as f:
        for line in f:
            m = DEFINE_RE.match(line)
            if m:
                name = m.group(1)
            m = REQUIRE_RE.match(line)
            if m and m.group(1) == name:
                reqs.add(m.group(2))
    return name, reqs


class PluginMetadataTestCase(base.PluginTestCase):

    def test_zuul_role_reads_name_and_requirement(self):
        self.assertEqual(("rally-vmct", {"rally-openstack"}), read_settings())

    def test_names_match_the_jobs_devstack_plugins(self):
        with open(os.path.join(base.ROOT, ".zuul.d", "jobs.yaml")) as f:
            jobs = {item["job"]["name"]: item["job"] for item in yaml.safe_load(f)
                    if "job" in item}
        plugins = jobs["rally-vmct-devstack-base"]["vars"]["devstack_plugins"]
        name, reqs = read_settings()
        self.assertIn(name, plugins)
        self.assertTrue(reqs <= set(plugins), plugins)

    def test_names_match_the_enable_plugin_lines(self):
        for path in glob.glob(os.path.join(base.DEVSTACK, "local.conf*.example")):
            with open(path) as f:
                enabled = [line.split()[1] for line in f if line.startswith("enable_plugin ")]
            self.assertIn("rally-vmct", enabled, path)

    def test_sourcing_settings_calls_them(self):
        r = self.run_plugin("override_defaults", prelude=RECORD)
        self.assertRan(r)
        self.assertEqual([["rally-vmct"]], r.named("define_plugin"))
        self.assertEqual([["rally-vmct", "rally-openstack"]], r.named("plugin_requires"))
