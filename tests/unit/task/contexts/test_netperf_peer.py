"""vmct_netperf_peer with a fake Nova and SSH: one netserver instance per tenant."""

from oslo_config import cfg

from rally_vmct import opts
from rally_vmct.task.contexts import helper_server
from rally_vmct.task.contexts import netperf_peer
from rally_vmct.task.contexts import workload_image
from tests.unit.timing import fakes
from tests.unit.task.contexts import base

KIND = base.KIND
missing = base.missing


class NetperfPeerTestCase(base.ContextTestCase):

    def test_one_peer_per_tenant_then_all_deleted(self):
        ctx = self.context(netperf_peer.KEY, {"kind": dict(KIND)}, tenants=2)
        peer = netperf_peer.NetperfPeer(ctx)
        peer.setup()
        self.assertEqual(2, len(self.alive()))
        for tenant in ctx["tenants"].values():
            info = tenant[netperf_peer.KEY]
            self.assertEqual({"host": "10.0.0.5", "control_port": 12865, "data_port": 12866,
                              "kind": "kvm"}, {k: v for k, v in info.items()
                                               if k != "server_id"})
        starts = [c for _, c in self.commands if "netserver -p" in c]
        self.assertEqual(["LC_ALL=C netserver -p 12865"] * 2, starts)
        records = self.nova.servers.created
        self.assertEqual(["kp0", "kp1"], [r.kwargs["key_name"] for r in records])
        self.assertEqual([[{"net-id": "net-0"}], [{"net-id": "net-1"}]],
                         [r.kwargs["nics"] for r in records])
        self.assertEqual("qemu", records[0].kwargs["availability_zone"])
        peer.cleanup()
        self.assertEqual([], self.alive())
        self.assertEqual(2, len(self.nova.servers.deleted))
        self.assertNotIn(netperf_peer.KEY, ctx["tenants"]["t0"])

    def test_config_ports_and_boot_args(self):
        config = {"kind": dict(KIND), "control_port": 13000, "data_port": 13001,
                  "boot_args": {"nics": [{"net-id": "shared"}]}, "ssh_user": "debian"}
        ctx = self.context(netperf_peer.KEY, config)
        peer = netperf_peer.NetperfPeer(ctx)
        peer.setup()
        self.addCleanup(peer.cleanup)
        info = ctx["tenants"]["t0"][netperf_peer.KEY]
        self.assertEqual((13000, 13001), (info["control_port"], info["data_port"]))
        self.assertIn("netserver -p 13000", self.commands[-1][1])
        self.assertEqual([{"net-id": "shared"}], self.nova.servers.created[0].kwargs["nics"])
        self.assertEqual("debian", peer._servers[0].kind["ssh_user"])

    def test_missing_netserver_fails_and_leaves_nothing(self):
        self.answers[0] = ("command -v", missing("netserver"))
        ctx = self.context(netperf_peer.KEY, {"kind": dict(KIND)})
        peer = netperf_peer.NetperfPeer(ctx)
        e = self.assertRaises(helper_server.HelperError, peer.setup)
        self.assertIn("netserver is not installed on image img-1", str(e))
        self.assertIn("tools/images", str(e))
        self.assertEqual([], self.alive())
        self.assertEqual([], [c for _, c in self.commands if "netserver -p" in c])
        peer.cleanup()      # Rally calls it after a failed setup too: harmless

    def test_second_tenant_boot_error_deletes_the_first_peer(self):
        ctx = self.context(netperf_peer.KEY, {"kind": dict(KIND)}, tenants=2)
        peer = netperf_peer.NetperfPeer(ctx)
        real_create = self.nova.servers.create

        def create(name, image, flavor, **kwargs):
            if self.nova.servers.created:
                self.nova.scripts["create"] = [(0.0, "BUILD", "scheduling", 0),
                                               (1.0, "ERROR", None, 0)]
            return real_create(name, image, flavor, **kwargs)
        self.nova.servers.create = create
        e = self.assertRaises(helper_server.HelperError, peer.setup)
        self.assertIn("No valid host was found", str(e))
        self.assertEqual(2, len(self.nova.servers.created))
        self.assertEqual([], self.alive())
        self.assertNotIn(netperf_peer.KEY, ctx["tenants"]["t0"])

    def test_ssh_never_answers_times_out_and_deletes(self):
        cfg.CONF.set_override("network_timeout", 5.0, opts.GROUP)
        self.addCleanup(cfg.CONF.clear_override, "network_timeout", opts.GROUP)
        helper_cls = helper_server.HelperServer.session_class
        test = self

        class Never(helper_cls):
            def make_probe(self, name):
                return fakes.FakeProbe(test.nova, self.server.id, 1e9)
        self.patch((helper_server.HelperServer, "session_class", Never))
        peer = netperf_peer.NetperfPeer(self.context(netperf_peer.KEY, {"kind": dict(KIND)}))
        e = self.assertRaises(helper_server.HelperError, peer.setup)
        self.assertIn("WaitTimeout", str(e))
        self.assertEqual([], self.alive())

    def test_needs_a_keypair(self):
        peer = netperf_peer.NetperfPeer(
            self.context(netperf_peer.KEY, {"kind": dict(KIND)}, keypair=False))
        e = self.assertRaises(helper_server.HelperError, peer.setup)
        self.assertIn("add the 'keypair' context", str(e))
        self.assertEqual([], self.nova.servers.created)

    def test_uses_the_prepared_workload_image_of_its_kind(self):
        ctx = self.context(netperf_peer.KEY, {"kind": dict(KIND)})
        ctx[workload_image.KEY] = {"kind": "kvm", "image_id": "img-prepared"}
        peer = netperf_peer.NetperfPeer(ctx)
        peer.setup()
        self.addCleanup(peer.cleanup)
        self.assertEqual("img-prepared", self.nova.servers.created[0].kwargs["image"])
