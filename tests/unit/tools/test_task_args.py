"""tools/task_args.py: the one task-args writer (the all-in-one cloud and devstack call it)."""

import glob
import io
import os
import subprocess
import sys
from unittest import mock

import fixtures
from rally import api
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

    def write(self, *kinds, virt_type="kvm", **env):
        argv = ["--out", self.out, "--network-id", "net-1", "--proxy-command", "/p %h %p",
                "--access-namespace", "ns1"]
        if virt_type:
            argv += ["--libvirt-virt-type", virt_type]
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
                          "fake,image=i,flavor=f,zone=z")
        args = yaml.safe_load(text)
        self.assertEqual({"image": "vmct-qemu-guest", "flavor": "m1",
                          "availability_zone": "fast"}, args["instance_kinds"]["kvm"])
        self.assertEqual({"image": "i", "flavor": "f", "availability_zone": "z"},
                         args["instance_kinds"]["fake"])
        self.assertIn("# kind kvm: libvirt, QEMU TCG\n", text)

    def test_environment_wins_like_local_conf(self):
        args = yaml.safe_load(self.write("kvm", VMCT_KVM_AZ="az9", VMCT_SSH_USER="debian"))
        self.assertEqual("az9", args["kinds"][0]["availability_zone"])
        self.assertEqual("debian", args["kinds"][0]["ssh_user"])

    def test_bad_kinds_name_the_argument_and_the_fix(self):
        for spec, words in (("fake", ["--kind 'fake'", "image, flavor, zone",
                                      "kvm, qemu-tcg, docker"]),
                            ("kvm,imag=x", ["'imag=x'", "image, flavor, zone"]),
                            ("kvm,zone=", ["'zone='"])):
            err = io.StringIO()
            with mock.patch("sys.stderr", err):
                self.assertRaises(SystemExit, self.write, spec)
            for word in words:
                self.assertIn(word, err.getvalue(), spec)
        self.assertFalse(os.path.exists(self.out))

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
        args = yaml.safe_load(self.write("kvm", "docker"))
        task_api = api._Task(None)
        for sample in SAMPLES:
            with open(sample) as f:
                template = f.read()
            extra = NATIVE.get(os.path.basename(sample), {})
            rendered = task_api.render_template(template, **args, **extra)
            task = yaml.safe_load(rendered)
            self.assertTrue(task["subtasks"], sample)
