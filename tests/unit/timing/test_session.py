"""ServerSession's pure parts: create arguments, access, cleanup retry."""

import os
import types
from unittest import mock

from oslo_config import cfg
import testtools

from rally_vmct.timing import watcher
from rally_vmct import opts
from rally_vmct.timing import diagnostics
from rally_vmct.timing import session as server_session
from tests.unit.timing import fakes

KIND = {"name": "kvm", "image": {"name": "g"}, "flavor": {"name": "f"},
        "availability_zone": "az-kvm", "scheduler_hints": {"group": "g1"}}
USER = {"keypair": {"name": "kp", "private": "KEY"}, "secgroup": {"name": "sg-rally"}}


class FakeNeutron:
    def __init__(self, *networks):
        self.networks = [{"id": "id-" + name, "name": name} for name in networks]
        self.asked = []

    def list_networks(self, name=None):
        self.asked.append(name)
        return {"networks": [n for n in self.networks if name in (None, n["name"])]}


class CreateKwargsTestCase(testtools.TestCase):

    def kwargs(self, boot_args=None, user=USER, nics=None, neutron=None):
        neutron = neutron or FakeNeutron("private")
        return server_session.create_kwargs(
            KIND, boot_args, user, nics,
            lambda name: server_session.network_id(neutron, name))

    def test_kind_and_user_give_zone_hints_key_group_and_network(self):
        got = self.kwargs(nics=[{"net-id": "n1"}])
        self.assertEqual({"availability_zone": "az-kvm", "scheduler_hints": {"group": "g1"},
                          "key_name": "kp", "security_groups": ["sg-rally"],
                          "nics": [{"net-id": "n1"}]}, got)

    def test_boot_args_win_and_groups_are_merged(self):
        got = self.kwargs({"key_name": "mine", "security_groups": ["web"],
                           "nics": [{"net-id": "n9"}], "config_drive": True},
                          nics=[{"net-id": "n1"}])
        self.assertEqual("mine", got["key_name"])
        self.assertEqual(["web", "sg-rally"], got["security_groups"])
        self.assertEqual([{"net-id": "n9"}], got["nics"])
        self.assertTrue(got["config_drive"])

    def test_net_name_becomes_net_id(self):
        neutron = FakeNeutron("private", "public")
        got = self.kwargs({"nics": [{"net-name": "public"}]}, neutron=neutron)
        self.assertEqual([{"net-id": "id-public"}], got["nics"])
        self.assertEqual(["public"], neutron.asked)

    def test_unknown_net_name_names_boot_args(self):
        e = self.assertRaises(server_session.BootArgsError, self.kwargs,
                              {"nics": [{"net-name": "nope"}]})
        self.assertIn("Argument 'boot_args'", str(e))
        self.assertIn("'nope'", str(e))

    def test_without_user_key_or_network_nothing_is_added(self):
        got = server_session.create_kwargs({"name": "k"}, None, {}, None, None)
        self.assertEqual({}, got)

    def test_tenant_nics_balance_iterations_over_networks(self):
        tenant = {"networks": [{"id": "a"}, {"id": "b"}]}
        self.assertEqual([[{"net-id": "b"}], [{"net-id": "a"}], [{"net-id": "b"}]],
                         [server_session.tenant_nics(tenant, i) for i in (1, 2, 3)])
        self.assertIsNone(server_session.tenant_nics({}, 1))
        self.assertIsNone(server_session.tenant_nics(None, 1))


class AccessTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        opts.register()
        self.addCleanup(cfg.CONF.clear_override, "ssh_proxy_command", opts.GROUP)

    def test_proxy_default_from_config_and_empty_means_none(self):
        cfg.CONF.set_override("ssh_proxy_command", "nc %h %p", opts.GROUP)
        self.assertEqual("nc %h %p", server_session.Access.of(KIND).proxy_command)
        self.assertIsNone(server_session.Access.of(KIND, proxy_command="").proxy_command)
        self.assertEqual("ssh -W %h:%p b", server_session.Access.of(
            KIND, proxy_command="ssh -W %h:%p b").proxy_command)

    def test_key_file_of_the_kind_wins_over_the_keypair(self):
        access = server_session.Access.of(dict(KIND, ssh_key_file="~/k"),
                                          keypair=USER["keypair"])
        self.assertEqual((None, os.path.expanduser("~/k")),
                         (access.pkey, access.key_filename))
        access = server_session.Access.of(KIND, keypair=USER["keypair"])
        self.assertEqual(("KEY", None), (access.pkey, access.key_filename))
        self.assertFalse(server_session.Access.of(KIND).has_key)

    def test_ssh_probe_is_already_the_ssh_wait(self):
        access = server_session.Access.of(KIND, probe="ssh", wait_for_ssh=True)
        self.assertFalse(access.wait_for_ssh)
        self.assertTrue(access.can_ssh)
        self.assertFalse(server_session.Access.of(KIND, probe="tcp").can_ssh)
        self.assertTrue(server_session.Access.of(KIND, wait_for_ssh=True).can_ssh)

    def test_probe_none_reaches_nothing_and_refuses_ssh(self):
        access = server_session.Access.of(KIND, probe="none")
        self.assertFalse(access.reachable)
        self.assertFalse(access.can_ssh)
        self.assertTrue(server_session.Access.of(KIND).reachable)
        e = self.assertRaises(ValueError, server_session.Access.of, KIND, probe="none",
                              wait_for_ssh=True)
        self.assertIn("'probe: none' and 'wait_for_ssh: true'", str(e))


class CleanupTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        opts.register()
        self.clock = fakes.FakeClock()
        self.nova = fakes.FakeNova(self.clock)

    def session(self):
        clients = fakes.FakeClients(self.nova)
        return server_session.ServerSession(
            lambda name, version=None: getattr(clients, name)(version), KIND,
            server_session.Access.of(KIND), [], clock=self.clock)

    def test_cleanup_deletes_once_unless_asked_again(self):
        s = self.session()
        s.cleanup()                                 # nothing booted: nothing to do
        self.assertEqual([], self.nova.servers.deleted)
        s.server = self.nova.servers.create("n", "img", "flv")
        s.deleted = True                            # a delete was requested already
        s.cleanup()
        self.assertEqual([], self.nova.servers.deleted)
        s.cleanup(again=True)
        self.assertEqual([s.server.id], self.nova.servers.deleted)

    def test_cleanup_failure_is_a_warning(self):
        s = self.session()
        s.server = types.SimpleNamespace(id="srv-x")
        with mock.patch.object(self.nova.servers, "delete",
                               side_effect=fakes.APIError(500)), \
                mock.patch.object(server_session.LOG, "warning") as warning:
            s.cleanup()
        self.assertIn("srv-x", warning.call_args[0][0])


class PollModeTestCase(testtools.TestCase):
    """Build and delete through a session, per server and batched: same phases, the cost."""

    def setUp(self):
        super().setUp()
        opts.register()
        self.addCleanup(cfg.CONF.clear_override, "poll_mode", opts.GROUP)

    def run_session(self, mode, argument=None):
        cfg.CONF.set_override("poll_mode", mode, opts.GROUP)
        clock = fakes.FakeClock()
        self.nova = fakes.FakeNova(clock)
        clients = fakes.FakeClients(self.nova)
        actions = []
        s = server_session.ServerSession(
            lambda name, version=None: getattr(clients, name)(version), KIND,
            server_session.Access.of(KIND, probe="none"), actions, clock=clock,
            poll_mode=argument)
        s.boot("n", "img", "flv", {})
        s.delete()
        s.finish()
        return s, [(a["name"], round(a["finished_at"] - a["started_at"], 6)) for a in actions]

    def test_the_argument_wins_over_the_option(self):
        batched, _ = self.run_session("per_server", argument="batched")
        self.assertIsInstance(batched.waiter.watcher, watcher.Watcher)
        per_server, _ = self.run_session("batched", argument="per_server")
        self.assertIsNone(per_server.waiter.watcher)

    def test_same_phases_and_transitions_and_the_cost_in_the_table(self):
        per_server, expected = self.run_session("per_server")
        gets = len([r for r in self.nova.requests if r[1] == "GET /servers/id"])
        batched, got = self.run_session("batched")
        self.assertEqual(expected, got)
        self.assertEqual([("vmct.build", 1.9), ("vmct.delete", 0.9)], got)  # (1.8, 2.0], (0.8, 1.0]
        self.assertEqual([(t.field, t.old, t.new) for t in per_server.waiter.transitions],
                         [(t.field, t.old, t.new) for t in batched.waiter.transitions])
        self.assertIsInstance(batched.waiter.watcher, watcher.Watcher)
        self.assertIsNone(per_server.waiter.watcher)
        self.assertEqual([], [r for r in self.nova.requests if r[1] == "GET /servers/id"])

        cost = per_server.record.polling
        self.assertEqual(("per_server", gets), (cost.mode, cost.requests))
        self.assertAlmostEqual(3.0, cost.seconds, places=6)   # 2 s build + 1 s delete
        table = diagnostics.transitions_table(per_server)
        self.assertIn("(polled every 0.2 s, %.2g requests/s for this server)" % cost.rate,
                      table["title"])
        self.assertIn("a GET of this server per poll", table["description"])

        cost = batched.record.polling
        self.assertEqual("batched", cost.mode)
        self.assertEqual(len([r for r in self.nova.requests if r[1] == "GET /servers/detail"]),
                         cost.requests)
        table = diagnostics.transitions_table(batched)
        self.assertIn("requests/s for this server", table["title"])
        self.assertIn("batched, one list of the servers changed", table["description"])
