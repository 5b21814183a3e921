"""Floating IPs: created on the server's port once ACTIVE (timed), used, always released."""

from unittest import mock

from rally_vmct.timing import waiter
from rally_vmct.task.contexts import helper_server
from rally_vmct.task.contexts import netperf_peer
from rally_vmct.task import lookup
from rally_vmct.task.scenarios import lifecycle
from rally_vmct.access import floating_ip
from rally_vmct.timing import session as server_session
from tests.unit.timing import fakes
from tests.unit.task.contexts import base
from tests.unit.task.scenarios import test_lifecycle

FLOATING_KIND = dict(test_lifecycle.KIND, floating_network="public",
                     floating_network_id="n-ext")


class NeutronError(Exception):
    """A neutronclient exception look-alike (the class name carries the meaning)."""

    def __init__(self, message, status_code=400):
        super().__init__(message)
        self.status_code = status_code


class ExternalIpAddressExhaustedClient(NeutronError):
    pass


class FakeNeutron:
    """Ports of the fake Nova's servers and floating IPs; creating one takes 0.3 s."""

    def __init__(self, clock, create_error=None, delete_error=None):
        self.clock = clock
        self.create_error = create_error
        self.delete_error = delete_error
        self.floating_ips = {}
        self.created = []
        self.deleted = []
        self.addresses = iter("203.0.113.%d" % i for i in range(10, 250))

    def list_ports(self, device_id=None):
        return {"ports": [{"id": "port-" + device_id, "device_id": device_id,
                           "fixed_ips": [{"ip_address": "fd00::5"},
                                         {"ip_address": "10.0.0.5"}]}]}

    def list_networks(self, **filters):
        return {"networks": [{"id": "n-ext", "name": "public", "router:external": True}]}

    def create_floatingip(self, body):
        self.clock.advance(0.3)
        if self.create_error:
            raise self.create_error
        record = dict(body["floatingip"], id="fip-%d" % (len(self.created) + 1),
                      floating_ip_address=next(self.addresses), status="DOWN")
        self.created.append(record)
        self.floating_ips[record["id"]] = record
        return {"floatingip": record}

    def delete_floatingip(self, floating_ip_id):
        if self.delete_error:
            raise self.delete_error
        if floating_ip_id not in self.floating_ips:
            raise NeutronError("Floating IP %s could not be found" % floating_ip_id, 404)
        self.deleted.append(self.floating_ips.pop(floating_ip_id)["id"])


class Clients(fakes.FakeClients):

    def __init__(self, nova, neutron):
        super().__init__(nova)
        self._neutron = neutron

    def neutron(self, version=None):
        return self._neutron


class LifecycleTestCase(test_lifecycle.ScenarioTestCase):

    def make_floating(self, **neutron_kwargs):
        self.neutron = FakeNeutron(self.clock, **neutron_kwargs)
        s = self.make(lifecycle.BootAndDeleteServer)
        s._clients = Clients(self.nova, self.neutron)
        return s

    def test_floating_ip_phase_address_and_release(self):
        s = self.make_floating()
        s.run(dict(FLOATING_KIND))
        actions = s.atomic_actions()
        self.assertEqual(["vmct.build", "vmct.associate_floating_ip", "vmct.wait_for_network",
                          "vmct.delete"], test_lifecycle.names(actions))
        build, associate, network, _ = actions
        # the association starts where the build ended (ACTIVE, estimated half a poll
        # before the poll that saw it) and ends with Neutron's answer (0.3 s later)
        self.assertEqual(build["finished_at"], associate["started_at"])
        self.assertEqual(associate["finished_at"], network["started_at"])
        self.assertAlmostEqual(0.1 + 0.3, test_lifecycle.duration(associate), places=6)
        [record] = self.neutron.created
        server = self.nova.servers.created[0]
        self.assertEqual({"floating_network_id": "n-ext", "port_id": "port-" + server.id,
                          "fixed_ip_address": "10.0.0.5", "description": server.name},
                         {k: record[k] for k in ("floating_network_id", "port_id",
                                                 "fixed_ip_address", "description")})
        # the description is the server's Rally name: cleanup@openstack (neutron) finds it
        self.assertTrue(server.name.startswith("s_rally_"))
        [session] = self.sessions
        self.assertEqual(("203.0.113.10", "10.0.0.5"),
                         (session.address, session.fixed_address))
        self.assertEqual(["fip-1"], self.neutron.deleted)
        self.assertIsNone(session.floating_ip)
        [chart] = s._output["additive"]
        rows = dict(chart["data"])
        self.assertEqual(["build", "associate_floating_ip", "wait_for_network",
                          "build_and_network", "delete", "total"],
                         [r[0] for r in chart["data"]])
        self.assertAlmostEqual(rows["build"] + rows["associate_floating_ip"]
                               + rows["wait_for_network"], rows["build_and_network"], places=6)
        self.assertIn("neutron", lifecycle.BootAndDeleteServer.get_default_context()[
            "cleanup@openstack"])

    def test_released_after_a_failed_iteration(self):
        self.reachable_delay = 10000.0          # never reachable: the network wait fails
        self.override(network_timeout=5)
        self.addCleanup(self.override, network_timeout=300)
        s = self.make_floating()
        self.assertRaises(waiter.WaitTimeout, s.run, dict(FLOATING_KIND))
        self.assertEqual(["fip-1"], self.neutron.deleted)
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)

    def test_no_free_address_names_the_network_and_the_fix(self):
        s = self.make_floating(create_error=ExternalIpAddressExhaustedClient(
            "Unable to find any IP address on external network n-ext."))
        e = self.assertRaises(floating_ip.FloatingIPError, s.run, dict(FLOATING_KIND))
        self.assertIn("kind.floating_network 'public': no floating IP for server srv-1: the "
                      "network has no free address left", str(e))
        self.assertIn("release unused floating IPs", str(e))
        self.assertEqual(["srv-1"], self.nova.servers.deleted)
        self.assertEqual([], self.neutron.deleted)
        [associate] = [a for a in s.atomic_actions()
                       if a["name"] == "vmct.associate_floating_ip"]
        self.assertTrue(associate["failed"])

    def test_a_release_that_fails_is_a_warning(self):
        s = self.make_floating(delete_error=NeutronError("boom", 500))
        with mock.patch.object(server_session.LOG, "warning") as warning:
            s.run(dict(FLOATING_KIND))
        self.assertIn("Could not release floating IP 203.0.113.10 (fip-1)",
                      warning.call_args[0][0])
        self.assertIn("cleanup@openstack (neutron) will", warning.call_args[0][0])

    def test_the_network_is_looked_up_when_the_kind_has_no_id(self):
        s = self.make_floating()
        kind = {k: v for k, v in FLOATING_KIND.items() if k != "floating_network_id"}
        with mock.patch.object(lookup, "clients_of", return_value=s._clients):
            s.run(kind)
        self.assertEqual("n-ext", self.neutron.created[0]["floating_network_id"])

    def test_without_a_floating_network_nothing_changes(self):
        s = self.make_floating()
        s.run(dict(test_lifecycle.KIND))
        self.assertEqual([], self.neutron.created)
        self.assertEqual("10.0.0.5", self.sessions[0].address)
        self.assertIsNone(self.sessions[0].fixed_address)


class ExplainTestCase(test_lifecycle.testtools.TestCase):

    def explain(self, error):
        return floating_ip.explain(error, "ext", "srv-9")

    def test_each_refusal_says_its_fix(self):
        self.assertIn("router with its gateway on 'ext'", self.explain(NeutronError(
            "External network n-ext is not reachable from subnet s-1.", 404)))
        self.assertIn("quota", self.explain(NeutronError("Quota exceeded for resources: "
                                                         "['floatingip'].", 409)))
        self.assertIn("no free address left", self.explain(NeutronError(
            "No more IP addresses available on network n-ext.", 409)))
        self.assertEqual("kind.floating_network 'ext': no floating IP for server srv-9: "
                         "NeutronError: odd", self.explain(NeutronError("odd")))

    def test_a_server_without_an_ipv4_port_is_refused(self):
        neutron = mock.Mock()
        neutron.list_ports.return_value = {"ports": [{"id": "p", "fixed_ips": [
            {"ip_address": "fd00::1"}]}]}
        e = self.assertRaises(floating_ip.FloatingIPError, floating_ip.create, neutron,
                              "n", "ext", "srv-1", "d")
        self.assertIn("server srv-1 has no port with an IPv4 address (1 ports)", str(e))
        neutron.create_floatingip.assert_not_called()


class HelperTestCase(base.ContextTestCase):

    def test_the_peer_is_reached_at_its_floating_ip_and_measured_at_its_fixed_one(self):
        neutron = FakeNeutron(self.clock)
        self.nova.neutron = neutron
        clients = Clients(self.nova, neutron)
        clients.glance = lambda version=None: self.glance
        self.patch((netperf_peer.NetperfPeer, "clients_factory",
                    staticmethod(lambda user: clients)))
        kind = dict(base.KIND, floating_network="public", floating_network_id="n-ext")
        ctx = self.context(netperf_peer.KEY, {"kind": kind})
        peer = netperf_peer.NetperfPeer(ctx)
        peer.setup()
        info = ctx["tenants"]["t0"][netperf_peer.KEY]
        self.assertEqual("10.0.0.5", info["host"])         # netperf: the tenant network
        [server] = peer._servers
        self.assertEqual("203.0.113.10", server.address)   # SSH: the floating IP
        self.assertEqual([], neutron.deleted)
        peer.cleanup()
        self.assertEqual(["fip-1"], neutron.deleted)
        self.assertEqual([], self.alive())

    def test_close_releases_also_when_the_delete_fails(self):
        neutron = FakeNeutron(self.clock)
        clients = Clients(self.nova, neutron)
        user = {"id": "u", "tenant_id": "t", "keypair": {"name": "kp", "private": "K"},
                "credential": None}
        server = helper_server.HelperServer(
            {"task": {"uuid": "t"}}, user, {"networks": [{"id": "net"}]},
            dict(base.KIND, floating_network="public", floating_network_id="n-ext"),
            clients=clients)
        server.boot()
        with mock.patch.object(server.session, "delete", side_effect=RuntimeError("x")), \
                mock.patch.object(server.session, "cleanup") as cleanup:
            server.close()
        cleanup.assert_called_once_with(again=True)
        self.assertEqual(["fip-1"], neutron.deleted)
