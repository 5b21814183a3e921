"""tools/task_args.py: the one task-args writer (the all-in-one cloud and devstack call it)."""

import glob
import io
import os
import subprocess
import sys
from unittest import mock

import fixtures
from rally import api
from rally import plugins
from rally.task import scenario
import testtools
import yaml

from tests.unit import tools

task_args = tools.load("task_args", os.path.join(tools.TOOLS, "task_args.py"))
SAMPLES = sorted(glob.glob(os.path.join(tools.ROOT, "samples", "tasks", "*.yaml")))
# native.yaml's hosts are no cloud fact (tools/native-target prints them); demo.yaml runs its
# bare-metal baseline only when given one
NATIVE = {"native.yaml": {"native_hosts": [{"host": "127.0.0.1", "port": 22822, "user": "root",
                                            "key_file": "/k"}]}}


class TaskArgsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.useFixture(fixtures.TempDir()).path, "task-args.yaml")

    def write(self, *kinds, virt_type="kvm", capacity=False, access=None, **env):
        argv = ["--out", self.out, "--network-id", "net-1"]
        argv += access if access is not None else [
            "--proxy-command", "/p %h %p", "--access-namespace", "ns1"]
        if virt_type:
            argv += ["--libvirt-virt-type", virt_type]
        if capacity:
            argv += ["--capacity-from-cloud"]
        for kind in kinds:
            argv += ["--kind", kind]
        with mock.patch.dict(os.environ, env), mock.patch("sys.stdout", io.StringIO()):
            task_args.main(argv)
        with open(self.out) as f:
            return f.read()

    def test_known_kinds_take_the_shared_names(self):
        args = yaml.safe_load(self.write("kvm", "docker"))
        self.assertEqual({"image": "vmct-qemu-guest", "flavor": "vmct.tiny",
                          "availability_zone": "qemu"}, args["instance_kinds"]["kvm"])
        self.assertEqual([{"name": "docker", "image": {"name": "vmct-workload-docker"},
                           "flavor": {"name": "vmct.tiny"}, "availability_zone": "docker",
                           "ssh_user": "root"}], args["kinds"][1:])
        self.assertEqual({"nics": [{"net-id": "net-1"}]}, args["boot_args"])
        self.assertEqual(20, args["soft_reboot_fallback_seconds"])
        self.assertEqual(("vmct-net", "/p %h %p", "ns1"),
                         (args["network"], args["proxy_command"], args["access_namespace"]))

    def test_the_libvirt_kind_is_named_for_its_virt_type(self):
        args = yaml.safe_load(self.write("kvm", "docker", virt_type="qemu"))
        self.assertEqual(["qemu-tcg", "docker"], list(args["instance_kinds"]))
        self.assertEqual("qemu-tcg", args["libvirt_kind"])
        self.assertEqual("qemu", args["kinds"][0]["availability_zone"])
        self.assertEqual("kvm", yaml.safe_load(self.write("kvm"))["libvirt_kind"])
        self.assertIsNone(yaml.safe_load(self.write("docker", virt_type=None))["libvirt_kind"])

    def test_the_libvirt_kind_needs_its_virt_type(self):
        err = io.StringIO()
        with mock.patch("sys.stderr", err):
            self.assertRaises(SystemExit, self.write, "kvm", virt_type=None)
        self.assertIn("--libvirt-virt-type kvm|qemu", err.getvalue())
        self.assertFalse(os.path.exists(self.out))

    def test_fields_override_and_about_keeps_commas(self):
        text = self.write("kvm,zone=fast,flavor=m1,about=libvirt, QEMU TCG",
                          "lxc,image=i,flavor=f,zone=z")
        args = yaml.safe_load(text)
        self.assertEqual({"image": "vmct-qemu-guest", "flavor": "m1",
                          "availability_zone": "fast"}, args["instance_kinds"]["kvm"])
        self.assertEqual({"image": "i", "flavor": "f", "availability_zone": "z"},
                         args["instance_kinds"]["lxc"])
        self.assertIn("# kind kvm: libvirt, QEMU TCG\n", text)

    def test_the_fake_kind_is_fake_kind_and_no_other_sample_boots_it(self):
        text = self.write("kvm", "docker", "fake,about=Nova's fake driver")
        args = yaml.safe_load(text)
        self.assertEqual({"name": "fake", "image": {"name": "vmct-fake-image"},
                          "flavor": {"name": "vmct.tiny"}, "availability_zone": "fake"},
                         args["fake_kind"])
        self.assertEqual(["kvm", "docker"], [k["name"] for k in args["kinds"]])
        self.assertEqual(["kvm", "docker"], list(args["instance_kinds"]))
        self.assertIn("# kind fake: Nova's fake driver\n", text)
        self.assertEqual("fz", yaml.safe_load(
            self.write("fake", VMCT_FAKE_AZ="fz"))["fake_kind"]["availability_zone"])
        # neither key without a fake kind or capacity (devstack's file stays as it was)
        args = yaml.safe_load(self.write("kvm"))
        self.assertNotIn("fake_kind", args)
        self.assertNotIn("capacity", args)

    def test_one_fake_kind_at_most(self):
        err = io.StringIO()
        with mock.patch("sys.stderr", err):
            self.assertRaises(SystemExit, self.write, "fake", "fake,zone=other")
        self.assertIn("one fake kind at most", err.getvalue())
        self.assertFalse(os.path.exists(self.out))

    def test_capacity_from_the_cloud(self):
        cloud = FakeCloud()
        with mock.patch.object(task_args, "cloud_getters", return_value=cloud.getters()):
            args = yaml.safe_load(self.write("kvm", "docker", "fake", capacity=True))
        self.assertEqual({"kvm": 32, "docker": 32, "fake": 3123}, args["capacity"])

    def test_capacity_that_cannot_be_read_names_the_flag(self):
        err = io.StringIO()
        with mock.patch.object(task_args, "cloud_getters",
                               side_effect=RuntimeError("connection refused")), \
                mock.patch("sys.stderr", err):
            self.assertRaises(SystemExit, self.write, "kvm", capacity=True)
        self.assertIn("--capacity-from-cloud: cannot read Nova and placement "
                      "(RuntimeError: connection refused)", err.getvalue())
        self.assertFalse(os.path.exists(self.out))

    def test_environment_wins_like_local_conf(self):
        args = yaml.safe_load(self.write("kvm", VMCT_KVM_AZ="az9", VMCT_SSH_USER="debian"))
        self.assertEqual("az9", args["kinds"][0]["availability_zone"])
        self.assertEqual("debian", args["kinds"][0]["ssh_user"])

    def test_bad_kinds_name_the_argument_and_the_fix(self):
        for spec, words in (("lxc", ["--kind 'lxc'", "image, flavor, zone",
                                     "kvm, qemu-tcg, docker, fake"]),
                            ("kvm,imag=x", ["'imag=x'", "image, flavor, zone"]),
                            ("kvm,zone=", ["'zone='"])):
            err = io.StringIO()
            with mock.patch("sys.stderr", err):
                self.assertRaises(SystemExit, self.write, spec)
            for word in words:
                self.assertIn(word, err.getvalue(), spec)
        self.assertFalse(os.path.exists(self.out))

    def test_floating_ips_instead_of_a_proxy(self):
        args = yaml.safe_load(self.write("kvm", "docker",
                                         access=["--floating-network", "vmct-ext"]))
        self.assertEqual(["vmct-ext", "vmct-ext"],
                         [k["floating_network"] for k in args["kinds"]])
        # the task's own network behind a router; nothing reaches the fixed addresses
        self.assertEqual({}, args["contexts"]["network"])
        self.assertIn("users", args["contexts"])
        self.assertEqual((None, None, None), (args["proxy_command"], args["access_namespace"],
                                              args["boot_args"]))

    def test_existing_users_need_no_admin_context(self):
        args = yaml.safe_load(self.write("kvm", access=[
            "--proxy-command", "/p %h %p", "--existing-users"]))
        self.assertEqual({"keypair": {}, "allow_ssh": None}, args["contexts"])
        self.assertIs(False, args["quotas"])

    def test_an_access_mode_is_required(self):
        with mock.patch("sys.stderr", io.StringIO()) as err:
            self.assertRaises(SystemExit, self.write, "kvm", access=[])
        self.assertIn("--proxy-command: say how instances are reached", err.getvalue())

    def test_runs_as_a_script_with_any_python(self):
        out = subprocess.run([sys.executable, os.path.join(tools.TOOLS, "task_args.py"),
                              "--out", self.out, "--network-id", "n", "--proxy-command", "p",
                              "--kind", "docker"], capture_output=True, text=True, check=True)
        self.assertEqual(self.out + "\n", out.stdout)
        self.assertEqual(0o644, os.stat(self.out).st_mode & 0o777)

    def test_every_sample_renders_with_the_written_args(self):
        """What Rally does before validation, with the written file as the arguments.

        Every template argument without a default must be in the file ("Please specify
        template task argument" otherwise).
        """
        args = yaml.safe_load(self.write("kvm", "docker", "fake"))
        args["capacity"] = {"kvm": 32, "docker": 32, "fake": 3123}
        task_api = api._Task(None)
        for sample in SAMPLES:
            with open(sample) as f:
                template = f.read()
            extra = NATIVE.get(os.path.basename(sample), {})
            rendered = task_api.render_template(template, **args, **extra)
            task = yaml.safe_load(rendered)
            self.assertTrue(task["subtasks"], sample)

    def native_workload(self, **extra):
        """demo.yaml's VMCT.native_benchmark workload, rendered with a native host."""
        args = yaml.safe_load(self.write("kvm", "docker"))
        host = dict(NATIVE["native.yaml"]["native_hosts"][0])
        args["native"] = {"kind": "native", "host": host,
                          "netperf_peer": {"host": "127.0.0.1", "ssh": host}}
        with open(os.path.join(tools.ROOT, "samples", "tasks", "demo.yaml")) as f:
            task = yaml.safe_load(api._Task(None).render_template(f.read(), **args, **extra))
        [workload] = [w for sub in task["subtasks"] for w in sub["workloads"]
                      if "VMCT.native_benchmark" in w["scenario"]]
        return workload

    def test_demo_monitors_the_native_sshd(self):
        plugins.load()
        workload = self.native_workload()
        self.assertEqual({"vmct_host_monitor": {"hosts": ["local"], "native_ports": [22822]}},
                         workload["contexts"])
        config = {"args": workload["scenario"]["VMCT.native_benchmark"],
                  "contexts": workload["contexts"]}
        self.assertEqual([], scenario.Scenario.validate(
            name="VMCT.native_benchmark", context=None, config=config, plugin_cfg=None,
            vtype="syntax"))
        self.assertEqual({}, self.native_workload(host_monitor=False)["contexts"])


def inventory(total, ratio=1.0, reserved=0):
    return {"total": total, "reserved": reserved, "allocation_ratio": ratio, "min_unit": 1,
            "max_unit": total, "step_size": 1}


class FakeCloud:
    """Nova's and placement's answers for the AIO's three computes (and a spare host)."""

    def __init__(self):
        self.compute = {
            "/os-availability-zone/detail": {"availabilityZoneInfo": [
                {"zoneName": "internal", "hosts": {"aio": {"nova-scheduler": {}}}},
                {"zoneName": "qemu", "hosts": {"aio": {"nova-compute": {}}}},
                {"zoneName": "docker", "hosts": {"aio-docker": {"nova-compute": {}}}},
                {"zoneName": "fake", "hosts": {"aio-fake": {"nova-compute": {}}}},
                {"zoneName": "nova", "hosts": {"spare": {"nova-compute": {}}}}]},
            "/os-hypervisors/detail": {"hypervisors": [
                self.hypervisor("vm", "aio"), self.hypervisor("aio-docker", "aio-docker"),
                self.hypervisor("aio-fake", "aio-fake"),
                self.hypervisor("spare", "spare", status="disabled")]},
            "/flavors/detail?is_public=None": {"flavors": [
                {"id": "1", "name": "vmct.tiny", "vcpus": 1, "ram": 256, "disk": 1,
                 "OS-FLV-EXT-DATA:ephemeral": 0, "swap": ""},
                {"id": "2", "name": "m1.swap", "vcpus": 1, "ram": 64, "disk": 1,
                 "OS-FLV-EXT-DATA:ephemeral": 1, "swap": 1536}]},
        }
        self.placement = {"/resource_providers": {"resource_providers": [
            {"name": "vm", "uuid": "rp-vm"}, {"name": "aio-docker", "uuid": "rp-docker"},
            {"name": "aio-fake", "uuid": "rp-fake"}, {"name": "spare", "uuid": "rp-spare"}]}}
        self.inventories("rp-vm", inventory(2, 16.0), inventory(11865, reserved=512),
                         inventory(251))
        self.inventories("rp-docker", inventory(2, 16.0), inventory(24105, reserved=512),
                         inventory(251))
        self.inventories("rp-fake", inventory(1000, 4.0), inventory(800000, reserved=512),
                         inventory(600000))
        self.inventories("rp-spare", inventory(64), inventory(65536), inventory(1000))

    @staticmethod
    def hypervisor(name, host, status="enabled"):
        return {"hypervisor_hostname": name, "status": status, "state": "up",
                "service": {"host": host, "id": 1}}

    def inventories(self, uuid, vcpu, memory, disk):
        self.placement["/resource_providers/%s/inventories" % uuid] = {"inventories": {
            "VCPU": vcpu, "MEMORY_MB": memory, "DISK_GB": disk}}

    def getters(self):
        return self.compute.__getitem__, self.placement.__getitem__


def kind(name, zone, flavor="vmct.tiny"):
    return {"name": name, "image": "i", "flavor": flavor, "zone": zone}


class ReadCapacityTestCase(testtools.TestCase):
    """What each kind's hosts hold, by the vmct_capacity validator's arithmetic."""

    def test_per_zone_the_smallest_resource_counts(self):
        cloud = FakeCloud()
        # qemu: VCPU 2 x 16 = 32 (memory (11865 - 512) / 256 = 44, disk 251);
        # fake: memory (800000 - 512) / 256 = 3123 (VCPU 4000, disk 600000)
        self.assertEqual({"qemu-tcg": 32, "docker": 32, "fake": 3123},
                         task_args.read_capacity([kind("qemu-tcg", "qemu"),
                                                  kind("docker", "docker"),
                                                  kind("fake", "fake")], *cloud.getters()))

    def test_what_is_in_use_is_not_subtracted(self):
        cloud = FakeCloud()
        cloud.placement["/resource_providers/rp-vm/usages"] = {"usages": {"VCPU": 30}}
        holds = task_args.read_capacity([kind("k", "qemu")], *cloud.getters())
        self.assertEqual({"k": 32}, holds)

    def test_no_zone_means_every_host_and_a_disabled_one_holds_none(self):
        cloud = FakeCloud()
        self.assertEqual({"any": 32 + 32 + 3123}, task_args.read_capacity(
            [kind("any", None)], *cloud.getters()))
        self.assertEqual({"spare": 0, "nowhere": 0}, task_args.read_capacity(
            [kind("spare", "nova"), kind("nowhere", "mars")], *cloud.getters()))

    def test_the_flavor_by_name_or_id_with_ephemeral_and_swap(self):
        cloud = FakeCloud()
        # m1.swap: 1 + 1 + ceil(1536 / 1024) = 4 GB disk: 251 // 4 = 62; VCPU 32 on qemu
        self.assertEqual({"a": 32, "b": 32}, task_args.read_capacity(
            [kind("a", "qemu", "1"), kind("b", "qemu", "m1.swap")], *cloud.getters()))
        cloud.inventories("rp-vm", inventory(2, 64.0), inventory(11865, reserved=512),
                          inventory(251))
        self.assertEqual({"b": 62}, task_args.read_capacity(
            [kind("b", "qemu", "m1.swap")], *cloud.getters()))
        e = self.assertRaises(ValueError, task_args.read_capacity,
                              [kind("c", "qemu", "m9")], *cloud.getters())
        self.assertEqual("no flavor 'm9' in the cloud", str(e))
