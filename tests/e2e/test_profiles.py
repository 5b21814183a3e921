"""End-to-end: the all-in-one cloud at the oldest release it runs, driven by today's plugins.

After the other e2e tests, tools/test-stages/50-e2e wipes the cloud, brings it up again with
VMCT_AIO_RELEASE=$VMCT_E2E_RELEASE (default 2025.1), runs tools/aio/smoke on every kind and
samples/tasks/lifecycle.yaml (2 iterations at concurrency 2 a kind) with this checkout's Rally
plugins, and leaves in $VMCT_E2E_DIR/release/:
  release                 the release asked for
  versions.json           the versions of the services installed in the cloud's venv
  compute-api.json        `openstack versions show --service compute` (the running Nova API)
  smoke.log               tools/aio/smoke's output (a JSON line per kind that ran through)
  lifecycle.uuid / lifecycle.json / lifecycle-comparison.json   the task and its reports
  inventory-after.json    tools/aio/inventory after the task
"""

import json
import os
import re

import yaml

from tests.e2e import faults
from tests.e2e import test_demo_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVICES = ("nova", "neutron", "keystone", "glance", "openstack-placement")
LIFECYCLE_PHASES = ("vmct.build", "vmct.wait_for_network", "vmct.delete")


def release_file(name):
    return os.path.join("release", name)


def pins(release):
    """{package: version} of the release's pinned set (tools/aio/constraints/<release>.txt)."""
    path = os.path.join(ROOT, "tools", "aio", "constraints", release + ".txt")
    with open(path) as f:
        return dict(re.findall(r"(?m)^([A-Za-z0-9_.-]+)===?(\S+)$", f.read()))


def max_microversion(nova_version):
    """The newest compute API microversion of a Nova release, from its source in the AIO."""
    path = os.path.join(faults.AIO_DIR, "src", "nova-" + nova_version, "nova", "api",
                        "openstack", "api_version_request.py")
    with open(path) as f:
        return re.search(r"""(?m)^_MAX_API_VERSION = ['"]([\d.]+)['"]""", f.read()).group(1)


@test_demo_task.needs_e2e
class ReleaseTest(test_demo_task.ArtifactTest):

    @classmethod
    def load_artifacts(cls):
        cls.release = test_demo_task.load(release_file("release"))
        cls.versions = test_demo_task.load(release_file("versions.json"))
        cls.api = test_demo_task.load(release_file("compute-api.json"))
        cls.smoke = test_demo_task.load(release_file("smoke.log"))
        [cls.report] = test_demo_task.load(release_file("lifecycle.json"))["tasks"]
        cls.comparison = test_demo_task.load(release_file("lifecycle-comparison.json"))
        with open(os.path.join(faults.AIO_DIR, "task-args.yaml")) as f:
            cls.args = yaml.safe_load(f)

    def test_services_are_the_release_pins(self):
        pinned = pins(self.release)
        self.assertEqual({p: pinned[p] for p in SERVICES}, self.versions)

    def test_the_running_compute_api_is_that_release(self):
        [api] = [v for v in self.api if v.get("Status") == "CURRENT"]
        self.assertEqual(max_microversion(self.versions["nova"]), api["Max Microversion"])

    def test_smoke_passed_on_every_kind(self):
        kinds = set(self.args["instance_kinds"]) | {self.args["fake_kind"]["name"]}
        ran = {}
        for line in self.smoke.splitlines():
            if line.startswith("{"):
                ran.update(json.loads(line))
        self.assertEqual(kinds, set(ran))
        self.assertEqual([], [line for line in self.smoke.splitlines() if "FAILED" in line])

    def test_lifecycle_passed_on_every_kind(self):
        self.assertEqual("finished", self.report["status"])
        self.assertTrue(self.report["pass_sla"])
        workloads = test_demo_task.task_workloads(self.report)
        kinds = {test_demo_task.scenario_args(w)["kind"]["name"] for w in workloads}
        self.assertEqual({k["name"] for k in self.args["kinds"]}, kinds)
        for w in workloads:
            self.assertEqual(2, len(w["data"]))
            self.assertEqual([], [it["error"] for it in w["data"] if it["error"]])

    def test_comparison_has_the_lifecycle_phases_of_every_kind(self):
        for kind in self.args["kinds"]:
            for metric in LIFECYCLE_PHASES:
                rows = [g for g in self.comparison["groups"]
                        if g["metric"] == metric and g["kind"] == kind["name"]]
                self.assertTrue(rows, (metric, kind["name"]))
                self.assertTrue(all(r["n"] == 2 and r["mean"] > 0 for r in rows), rows)


class ReleaseNoLeakTest(test_demo_task.NoLeakTest):
    """Nothing the lifecycle task created is left in the cloud at the other release."""

    INVENTORY = release_file("inventory-after.json")
    TASK_UUID = release_file("lifecycle.uuid")
