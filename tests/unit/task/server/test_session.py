"""ServerSession's pure parts: create arguments, access, cleanup retry."""

import os
import types
from unittest import mock

from oslo_config import cfg
import testtools

from rally_vmct import opts
from rally_vmct.task.server import session as server_session
from tests.unit.common import fakes

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
