"""The driver's privsep daemon for real: it runs plugging commands and refuses the rest.

The refusal happens in the daemon (the entrypoint's body never runs in this process). The
daemon started through Nova's root helper (sudo, nova-rootwrap, privsep-helper), its uid and
its capabilities are checked in the all-in-one cloud, whose Docker computes run as the user
nova (tests/e2e/test_privilege.py).
"""

import os

import fixtures
import testtools

from nova_docker_vmct.privsep import linux_net

from tests.functional import base


class TestPrivsepDaemon(testtools.TestCase):

    def setUp(self):
        super().setUp()
        base.start_privsep_daemon()

    def test_runs_plugging_commands(self):
        out = linux_net.run_plug_command(['ip', '-o', 'link', 'show', 'lo'])
        self.assertIn('lo:', out)

    def test_daemon_refuses_anything_else(self):
        marker = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'marker')
        e = self.assertRaises(ValueError, linux_net.run_plug_command,
                              ['touch', marker])
        self.assertIn('not a command the Docker driver runs as root',
                      str(e))
        self.assertFalse(os.path.exists(marker))
