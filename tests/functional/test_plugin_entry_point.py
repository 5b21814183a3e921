"""The installed package is found by Rally through its ``rally_plugins`` entry point."""

import subprocess
import sys
import textwrap

import testtools

from tests.functional import rally_home

# Loads Rally's plugins the way the rally CLI does, with our rally.conf, then reads
# the option through the project's own accessor.
READ_OPTION = textwrap.dedent("""
    import sys
    from oslo_config import cfg
    from rally import plugins
    cfg.CONF([], project="rally", default_config_files=[sys.argv[1]])
    plugins.load()
    from rally_vmct import opts
    print("poll_interval=%r" % opts.get("poll_interval"))
    print("proxy=%r" % opts.get("ssh_proxy_command"))
""")


class EntryPointTestCase(testtools.TestCase):

    def test_vmct_option_in_rally_conf_is_read(self):
        home = self.useFixture(rally_home.RallyHome(
            extra_conf="[vmct]\npoll_interval = 0.05\n"
                       "ssh_proxy_command = ip netns exec vmct-access nc %h %p\n"))
        proc = subprocess.run([sys.executable, "-c", READ_OPTION, home.conf],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stdout)
        self.assertIn("poll_interval=0.05", proc.stdout)
        self.assertIn("proxy='ip netns exec vmct-access nc %h %p'", proc.stdout)

    def test_rally_rejects_invalid_vmct_option(self):
        # Registered through list_opts with min=0.01: a bad value must not pass silently.
        home = self.useFixture(rally_home.RallyHome())
        with open(home.conf, "a") as f:
            f.write("[vmct]\npoll_interval = -1\n")
        proc = subprocess.run([sys.executable, "-c", READ_OPTION, home.conf],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=120)
        self.assertNotEqual(0, proc.returncode, proc.stdout)
        self.assertIn("poll_interval", proc.stdout)

    def test_rally_lists_package_plugins(self):
        home = self.useFixture(rally_home.RallyHome())
        proc = home.rally("plugin", "list", "VMCT")
        self.assertIn("VMCT.native_benchmark", proc.stdout)
        self.assertNotIn("Failed to load plugins", proc.stdout)
        proc = home.rally("plugin", "show", "VMCT.native_benchmark")
        # Rally shows the docstring's first line as the title.
        self.assertIn("Run sysbench and netperf over SSH on existing hosts", proc.stdout)
