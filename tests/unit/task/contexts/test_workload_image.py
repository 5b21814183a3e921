"""vmct_workload_image with a fake Nova, Glance and SSH.

The prepare path (install with the guest's package manager, snapshot) is
exercised only here: the all-in-one cloud's guests have no route to package
repositories.
"""

from rally_vmct.timing import waiter
from rally_vmct.task.contexts import helper_server
from rally_vmct.task.contexts import workload_image
from tests.unit.task.contexts import base

KIND = base.KIND
missing = base.missing
ALL_THERE = base.ALL_THERE


class WorkloadImageTestCase(base.ContextTestCase):

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
        self.assertIn("sysbench and netperf are not installed on image img-1 of kind 'kvm'",
                      message)
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
