"""End-to-end: the all-in-one cloud's other profiles, driven by today's plugins.

After the other e2e tests (on the default profile: ML2/OVN, 2026.2), tools/test-stages/50-e2e
brings the cloud up again, wiped, in each other profile it runs ($VMCT_E2E_DIR/profiles): in CI
one, the oldest release (VMCT_E2E_RELEASE, default 2025.1) on the other Neutron backend (ovs when
the default is ovn) in $VMCT_E2E_DIR/other/; in the long suite (VMCT_E2E_FULL=1) the two apart,
the other backend in $VMCT_E2E_DIR/backend/, then the oldest release on the default backend in
$VMCT_E2E_DIR/release/. In each it runs tools/aio/smoke
on every kind beside samples/tasks/lifecycle.yaml (2 iterations at concurrency 2 a kind) with
this checkout's Rally plugins, and leaves:
  settings                the VMCT_AIO_...=... settings of the profile, one a line
  task-args.yaml          the task args the cloud wrote
  versions.json           the versions of the services installed in the cloud's venv
  compute-api.json        `openstack versions show --service compute` (the running Nova API)
  agents.json             `openstack network agent list` (what wires each host's ports)
  computes.json           `openstack compute service list --service nova-compute`
  smoke.log               tools/aio/smoke's output (a JSON line per kind that ran through)
  lifecycle.uuid / lifecycle.json / lifecycle-comparison.json   the task and its reports
  inventory-after.json    tools/aio/inventory after both the task and the smoke
The default profile's backend is in $VMCT_E2E_DIR/neutron-backend.
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


# the Neutron agents that wire each host's ports, by backend (tools/aio/aio.py HOST_AGENT_TYPES:
# that script imports openstacksdk and tools/, which a module of tests/e2e must not need to load)
HOST_AGENTS = {
    "ovs": {"Open vSwitch agent"},
    "ovn": {"OVN Controller agent", "OVN Controller Gateway agent"},
}


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


class ProfileChecks(object):
    """What one profile's step left in PROFILE/ (mixed into a test case a profile)."""

    PROFILE = None

    @classmethod
    def file(cls, name):
        return os.path.join(cls.PROFILE, name)

    @classmethod
    def load_artifacts(cls):
        settings = test_demo_task.load(cls.file("settings")).splitlines()
        cls.settings = dict(line.split("=", 1) for line in settings)
        cls.versions = test_demo_task.load(cls.file("versions.json"))
        cls.api = test_demo_task.load(cls.file("compute-api.json"))
        cls.agents = test_demo_task.load(cls.file("agents.json"))
        cls.computes = test_demo_task.load(cls.file("computes.json"))
        cls.smoke = test_demo_task.load(cls.file("smoke.log"))
        [cls.report] = test_demo_task.load(cls.file("lifecycle.json"))["tasks"]
        cls.comparison = test_demo_task.load(cls.file("lifecycle-comparison.json"))
        cls.args = yaml.safe_load(test_demo_task.load(cls.file("task-args.yaml")))
        cls.release = cls.settings.get("VMCT_AIO_RELEASE", "2026.2")
        cls.backend = cls.settings.get("VMCT_AIO_NEUTRON",
                                       test_demo_task.load("neutron-backend"))

    def test_services_are_the_release_pins(self):
        pinned = pins(self.release)
        self.assertEqual({p: pinned[p] for p in SERVICES}, self.versions)

    def test_the_running_compute_api_is_that_release(self):
        [api] = [v for v in self.api if v.get("Status") == "CURRENT"]
        self.assertEqual(max_microversion(self.versions["nova"]), api["Max Microversion"])

    def test_every_host_is_wired_by_the_backends_agent(self):
        hosts = {c["Host"] for c in self.computes}
        self.assertTrue(hosts)
        wired = {a["Host"] for a in self.agents
                 if a["Agent Type"] in HOST_AGENTS[self.backend] and a["Alive"]}
        self.assertLessEqual(hosts, wired, self.agents)
        other = set().union(*HOST_AGENTS.values()) - HOST_AGENTS[self.backend]
        self.assertEqual([], [a for a in self.agents if a["Agent Type"] in other])

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


def oldest_release():
    return sorted(f[:-len(".txt")] for f in os.listdir(
        os.path.join(ROOT, "tools", "aio", "constraints")) if f.endswith(".txt"))[0]


class ProfileRun(object):
    """Skips a profile's tests when the stage did not run that profile.

    $VMCT_E2E_DIR/profiles lists those it ran: CI runs "other", the long suite "backend" and
    "release".
    """

    PROFILE = None

    def setUp(self):
        try:
            ran = test_demo_task.load("profiles").split()
        except OSError:
            ran = [self.PROFILE]    # the artifacts' own check then fails, naming the file
        if self.PROFILE not in ran:
            self.skipTest("profile %s not run: the stage ran %s (VMCT_E2E_FULL=1 runs backend "
                          "and release; CI runs other)" % (self.PROFILE, " ".join(ran)))
        super().setUp()


class OtherBackendChecks(object):
    """A profile on the Neutron backend the default profile does not run."""

    def test_the_backend_is_not_the_default_ones(self):
        self.assertIn(self.backend, HOST_AGENTS)
        self.assertNotEqual(test_demo_task.load("neutron-backend"), self.backend)


class OldestReleaseChecks(object):
    """A profile at the oldest release the cloud runs."""

    def test_the_release_is_the_oldest_the_cloud_runs(self):
        self.assertEqual(oldest_release(), self.release)


@test_demo_task.needs_e2e
class OtherProfileTest(ProfileRun, OtherBackendChecks, OldestReleaseChecks, ProfileChecks,
                       test_demo_task.ArtifactTest):
    """CI's one other profile: the oldest release on the other Neutron backend."""

    PROFILE = "other"


@test_demo_task.needs_e2e
class OtherBackendTest(ProfileRun, OtherBackendChecks, ProfileChecks,
                       test_demo_task.ArtifactTest):
    """The Neutron backend the default profile does not run, at the default release."""

    PROFILE = "backend"


@test_demo_task.needs_e2e
class OldestReleaseTest(ProfileRun, OldestReleaseChecks, ProfileChecks,
                        test_demo_task.ArtifactTest):
    """The oldest release the cloud runs, on the default backend."""

    PROFILE = "release"

    def test_the_backend_is_the_default_ones(self):
        self.assertEqual(test_demo_task.load("neutron-backend"), self.backend)


class ProfileNoLeak(ProfileRun):
    """NoLeakTest on what the profile's step left in PROFILE/."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.INVENTORY = os.path.join(cls.PROFILE, "inventory-after.json")
        cls.TASK_UUID = os.path.join(cls.PROFILE, "lifecycle.uuid")


class OtherProfileNoLeakTest(ProfileNoLeak, test_demo_task.NoLeakTest):
    """Nothing the lifecycle task created is left in the cloud of the other profile."""

    PROFILE = "other"


class OtherBackendNoLeakTest(ProfileNoLeak, test_demo_task.NoLeakTest):
    """Nothing the lifecycle task created is left in the cloud of the other backend."""

    PROFILE = "backend"


class OldestReleaseNoLeakTest(ProfileNoLeak, test_demo_task.NoLeakTest):
    """Nothing the lifecycle task created is left in the cloud at the oldest release."""

    PROFILE = "release"
