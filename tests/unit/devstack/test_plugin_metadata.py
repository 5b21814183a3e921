"""devstack/settings names the plugin (define_plugin) as devstack's Zuul role reads it."""

import glob
import os
import re

from tests.unit.devstack import base
from tests.unit.devstack import test_zuul

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

    def test_zuul_role_reads_the_name_and_no_requirement(self):
        """The settings declare no plugin_requires.

        devstack's role fails on a node whose devstack_plugins lack a plugin another one
        requires, and the multinode job's Docker-only compute runs this plugin without
        rally-openstack's (plugin.sh checks for it where vmct runs).
        """
        self.assertEqual(("rally-vmct", set()), read_settings())

    def test_every_node_of_every_job_has_the_plugins_required(self):
        """Every requirement the settings declare is among each node's plugins.

        On each node of each job (its group-vars included), as the role's PluginGraph needs.
        """
        name, reqs = read_settings()
        config = test_zuul.zuul_job.ZuulConfig([os.path.join(base.ROOT, ".zuul.d")])
        checked = 0
        for job_name in config.jobs:
            job = config.job(job_name)
            if job.nearest("nodeset") is None or "devstack_plugins" not in job.vars:
                continue
            for node in job.nodes():
                plugins = job.node_vars(node).get("devstack_plugins", {})
                if name in plugins:
                    self.assertLessEqual(reqs, set(plugins), (job_name, node))
                    checked += 1
        self.assertGreater(checked, 0)

    def test_names_match_the_enable_plugin_lines(self):
        for path in glob.glob(os.path.join(base.DEVSTACK, "local.conf*.example")):
            with open(path) as f:
                enabled = [line.split()[1] for line in f if line.startswith("enable_plugin ")]
            self.assertIn("rally-vmct", enabled, path)

    def test_sourcing_settings_calls_them(self):
        r = self.run_plugin("override_defaults", prelude=RECORD)
        self.assertRan(r)
        self.assertEqual([["rally-vmct"]], r.named("define_plugin"))
        self.assertEqual([], r.named("plugin_requires"))
