"""The driver's privsep daemon for real: forked, its capabilities, refusing.

The daemon started through Nova's root helper (sudo, nova-rootwrap, privsep-helper) runs in
the all-in-one cloud, whose Docker computes run as the user nova
(tests/e2e/test_privilege.py).
"""

import os

import fixtures
from oslo_privsep import capabilities
from oslo_privsep import priv_context
import testtools

from nova_docker_vmct import privsep
from nova_docker_vmct.privsep import linux_net


def children_caps():
    """{pid: effective capability mask} of this process's children."""
    found = {}
    me = str(os.getpid())
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/status' % entry) as f:
                fields = dict(line.split(':', 1) for line in f if ':' in line)
        except OSError:
            continue
        if fields.get('PPid', '').strip() == me:
            found[int(entry)] = int(fields['CapEff'].strip(), 16)
    return found


class TestPrivsepDaemon(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if privsep.vif_plug.channel is None:
            privsep.vif_plug.start(priv_context.Method.FORK)

    def test_runs_plugging_commands_with_its_capabilities_only(self):
        out = linux_net.run_plug_command(['ip', '-o', 'link', 'show', 'lo'])
        self.assertIn('lo:', out)
        wanted = sum(1 << cap for cap in (
            capabilities.CAP_NET_ADMIN, capabilities.CAP_SYS_ADMIN,
            capabilities.CAP_SYS_PTRACE, capabilities.CAP_NET_RAW))
        self.assertIn(wanted, children_caps().values())

    def test_daemon_refuses_anything_else(self):
        marker = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'marker')
        e = self.assertRaises(ValueError, linux_net.run_plug_command,
                              ['touch', marker])
        self.assertIn('not a command the Docker driver runs as root',
                      str(e))
        self.assertFalse(os.path.exists(marker))
