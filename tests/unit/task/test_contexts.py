"""vmct_netperf_peer and vmct_workload_image with a fake Nova, Glance and SSH.

The prepare path of vmct_workload_image (install with the guest's package
manager, snapshot) is exercised only here: the all-in-one cloud's guests have
no route to package repositories.
"""

from unittest import mock

from oslo_config import cfg
from rally import plugins
import testtools

from rally_vmct.common import waiter
from rally_vmct import opts
from rally_vmct.task.contexts import helper_server
from rally_vmct.task.contexts import netperf_peer
from rally_vmct.task.contexts import workload_image
from rally_vmct.task.scenarios import lifecycle
from tests.unit.common import fakes
from tests.unit.task import benchfakes

KIND = {"name": "kvm", "image": {"name": "guest"}, "flavor": {"name": "tiny"},
        "image_id": "img-1", "flavor_id": "flv-1", "availability_zone": "qemu"}
ALL_THERE = (0, "", "")


def missing(*tools):
    return (0, "".join("vmct-missing=%s\n" % t for t in tools), "")


class ContextTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()
        self.clock = fakes.FakeClock()
        self.glance = benchfakes.FakeGlance()
        self.nova = benchfakes.SnapshotNova(self.clock, self.glance)
        self.commands = []
        self.answers = [("command -v", ALL_THERE), ("netserver -p", (0, "", ""))]
        test = self

        class Helper(lifecycle.PowerActions):
            clock = self.clock

            def _make_probe(self, name):
                return fakes.FakeProbe(test.nova, self.server.id, 1.0)

            def _ssh_client(self):
                return benchfakes.FakeSSH(test.answers, test.commands, self.address)

        self.patch((helper_server.HelperServer, "scenario_class", Helper))
        clients = benchfakes.FakeClients(self.nova, self.glance)
        for cls in (netperf_peer.NetperfPeer, workload_image.WorkloadImage):
            self.patch((cls, "clients_factory", staticmethod(lambda user: clients)))

    def patch(self, args):
        patcher = mock.patch.object(*args)
        patcher.start()
        self.addCleanup(patcher.stop)

    def context(self, name, config, tenants=1, keypair=True):
        users, tenant_map = [], {}
        for i in range(tenants):
            tenant_id = "t%d" % i
            user = {"id": "u%d" % i, "tenant_id": tenant_id,
                    "credential": fakes.Obj(profiler_hmac_key=None, profiler_conn_str=None)}
            if keypair:
                user["keypair"] = {"name": "kp%d" % i, "private": "KEY"}
            users.append(user)
            tenant_map[tenant_id] = {"id": tenant_id, "users": [user],
                                     "networks": [{"id": "net-%d" % i}]}
        return {"task": {"uuid": "task-uuid"}, "owner_id": "owner-uuid", "users": users,
                "tenants": tenant_map, "config": {name: config}}

    def alive(self):
        return benchfakes.live_servers(self.nova)


class NetperfPeerTestCase(ContextTestCase):

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
        self.assertIn("lacks netserver", str(e))
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
        helper_cls = helper_server.HelperServer.scenario_class
        test = self

        class Never(helper_cls):
            def _make_probe(self, name):
                return fakes.FakeProbe(test.nova, self.server.id, 1e9)
        self.patch((helper_server.HelperServer, "scenario_class", Never))
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


class WorkloadImageTestCase(ContextTestCase):

    def test_check_passes_and_deletes_the_probe_server(self):
        ctx = self.context(workload_image.KEY, {"kind": dict(KIND)})
        image = workload_image.WorkloadImage(ctx)
        image.setup()
        self.assertEqual({"kind": "kvm", "image_id": "img-1", "prepared": False,
                          "tools": ["sysbench", "netperf", "netserver"]},
                         ctx[workload_image.KEY])
        [check] = [c for _, c in self.commands]
        self.assertIn("for t in sysbench netperf netserver; do command -v", check)
        self.assertEqual([], self.alive())
        self.assertEqual([], self.nova.snapshots)
        image.cleanup()
        self.assertEqual([], self.glance.deleted)
        self.assertNotIn(workload_image.KEY, ctx)

    def test_missing_tools_without_prepare_fail_clearly(self):
        self.answers[0] = ("command -v", missing("sysbench", "netperf"))
        config = {"kind": dict(KIND), "tools": ["sysbench", "netperf"]}
        ctx = self.context(workload_image.KEY, config)
        image = workload_image.WorkloadImage(ctx)
        e = self.assertRaises(helper_server.HelperError, image.setup)
        message = str(e)
        self.assertIn("image img-1 of kind 'kvm' lacks sysbench, netperf", message)
        self.assertIn("tools/images/docker/README.md", message)
        self.assertIn("prepare: true", message)
        self.assertEqual([], self.alive())
        self.assertNotIn(workload_image.KEY, ctx)

    def prepare_answers(self, install_rc=0):
        state = {"installed": False}

        def check(command):
            if state["installed"]:
                return ALL_THERE
            return missing("sysbench", "netperf", "netserver")

        def install(command):
            state["installed"] = install_rc == 0
            if install_rc:
                return (install_rc, "vmct-package-manager=apt-get\n",
                        "E: Unable to locate package sysbench")
            return (0, "vmct-package-manager=apt-get\nSetting up sysbench\n", "")
        self.answers[:] = [("command -v apt-get", install), ("for t in", check)]
        return state

    def test_prepare_installs_snapshots_shares_and_cleans_up(self):
        self.prepare_answers()
        ctx = self.context(workload_image.KEY, {"kind": dict(KIND), "prepare": True},
                           tenants=2)
        image = workload_image.WorkloadImage(ctx)
        image.setup()
        info = ctx[workload_image.KEY]
        self.assertTrue(info["prepared"])
        self.assertEqual("img-snap-1", info["image_id"])
        installs = [c for _, c in self.commands if "apt-get install" in c]
        self.assertEqual(1, len(installs))
        self.assertIn("sysbench netperf", installs[0])
        # stopped before the snapshot; the probe server is gone afterwards
        self.assertEqual([(self.nova.servers.created[0].id, "SHUTOFF")], self.nova.snapshots)
        self.assertEqual([], self.alive())
        self.assertEqual("shared", self.glance.images_by_id["img-snap-1"]["visibility"])
        self.assertEqual([("img-snap-1", "t1")], self.glance.members)
        image.cleanup()
        self.assertEqual(["img-snap-1"], self.glance.deleted)
        self.assertEqual({}, self.glance.images_by_id)

    def test_failed_install_leaves_no_server_and_no_image(self):
        self.prepare_answers(install_rc=100)
        ctx = self.context(workload_image.KEY, {"kind": dict(KIND), "prepare": True})
        image = workload_image.WorkloadImage(ctx)
        e = self.assertRaises(helper_server.HelperError, image.setup)
        self.assertIn("with apt-get failed (exit 100)", str(e))
        self.assertIn("Unable to locate package sysbench", str(e))
        self.assertEqual([], self.alive())
        self.assertEqual([], self.nova.snapshots)

    def test_snapshot_that_fails_is_deleted(self):
        self.prepare_answers()
        self.glance.final_status = "killed"
        ctx = self.context(workload_image.KEY, {"kind": dict(KIND), "prepare": True})
        image = workload_image.WorkloadImage(ctx)
        e = self.assertRaises(helper_server.HelperError, image.setup)
        self.assertIn("became killed", str(e))
        self.assertEqual(["img-snap-1"], self.glance.deleted)
        self.assertEqual([], self.alive())
        image.cleanup()
        self.assertEqual(["img-snap-1"], self.glance.deleted)

    def test_boot_fault_is_reported_and_cleaned_up(self):
        self.nova.scripts["create"] = [(0.0, "BUILD", "scheduling", 0),
                                       (1.0, "ERROR", None, 0)]
        image = workload_image.WorkloadImage(
            self.context(workload_image.KEY, {"kind": dict(KIND)}))
        e = self.assertRaises(helper_server.HelperError, image.setup)
        self.assertIn("ServerFault", str(e))
        self.assertEqual([self.nova.servers.created[0].id], self.nova.servers.deleted)
        self.assertIsInstance(e.__cause__, waiter.ServerFault)


class ConfigSchemaTestCase(testtools.TestCase):

    def test_schemas_are_valid_draft4_and_check_configs(self):
        import jsonschema

        kind = {"name": "kvm", "image": {"name": "g"}, "flavor": {"name": "f"}}
        for cls in (netperf_peer.NetperfPeer, workload_image.WorkloadImage):
            jsonschema.Draft4Validator.check_schema(cls.CONFIG_SCHEMA)
            jsonschema.validate({"kind": kind, "proxy_command": "nc %h %p",
                                 "boot_args": {"nics": []}, "command_timeout": 30},
                                cls.CONFIG_SCHEMA)
            for bad in ({}, {"kind": dict(kind, imag="x")}, {"kind": kind, "port": 1}):
                self.assertRaises(jsonschema.ValidationError, jsonschema.validate, bad,
                                  cls.CONFIG_SCHEMA)
        self.assertRaises(jsonschema.ValidationError, jsonschema.validate,
                          {"kind": kind, "tools": ["fio"]},
                          workload_image.WorkloadImage.CONFIG_SCHEMA)
