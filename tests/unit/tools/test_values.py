"""devstack/lib/vmct-values: readable by bash and Python alike, and the same values the
all-in-one cloud (tools/aio) uses."""

import ast
import os
import re
import subprocess

import testtools

from tests.unit.devstack import base
from tests.unit.devstack import test_aggregates

VALUES = os.path.join(base.DEVSTACK, "lib", "vmct-values")
AIO = os.path.join(base.ROOT, "tools", "aio")


def bash_values():
    out = subprocess.run(
        ["bash", "-c", 'set -u; source "$1"; for v in ${!VMCT_*}; do printf "%s=%s\\0" '
         '"$v" "${!v}"; done', "-", VALUES],
        capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]}).stdout
    return dict(item.split("=", 1) for item in out.split("\0") if item)


def literal(node):
    """ast.literal_eval that also takes dict(key=value, ...)."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "dict" and not node.args):
        return {k.arg: literal(k.value) for k in node.keywords}
    if isinstance(node, ast.Dict):
        return {literal(k): literal(v) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


class ValuesTestCase(testtools.TestCase):

    def test_bash_and_python_read_the_same(self):
        py = test_aggregates.agg.read_values(VALUES)
        self.assertEqual(bash_values(), py)
        self.assertEqual("img_hv_type=qemu hw_cdrom_bus=scsi hw_scsi_model=virtio-scsi "
                         "os_type=linux", py["VMCT_QEMU_IMAGE_PROPERTIES"])
        self.assertEqual("docker.DockerDriver", py["VMCT_DOCKER_COMPUTE_DRIVER"])

    def test_sh_can_source_it(self):
        subprocess.run(["sh", "-c", '. "$1" && [ "$VMCT_FLAVOR_NAME" = vmct.tiny ]', "-",
                        VALUES], check=True)

    def test_python_reader_rejects_shell_code(self):
        path = os.path.join(self.useFixture(__import__("fixtures").TempDir()).path, "v")
        for text, error in (("A=1\nexport B=2\n", ":2: expected NAME=VALUE"),
                            ("A=1\nB=$(date)\n", ":2: no expansions allowed in B"),
                            ("A='x y' # c\nB=`id`\n", ":2: no expansions allowed in B")):
            with open(path, "w") as f:
                f.write(text)
            e = self.assertRaises(ValueError, test_aggregates.agg.read_values, path)
            self.assertIn(error, str(e))

    def test_no_expansions(self):
        with open(VALUES) as f:
            for line in f:
                if not line.startswith("#"):
                    self.assertNotIn("$", line)
                    self.assertNotIn("`", line)


class SameAsAioTestCase(testtools.TestCase):
    """Until tools/aio reads lib/vmct-values, its copies must agree with it."""

    def setUp(self):
        super().setUp()
        self.values = test_aggregates.agg.read_values(VALUES)

    def aio_source(self, name):
        with open(os.path.join(AIO, name)) as f:
            return f.read()

    def test_flavor_and_network(self):
        src = self.aio_source("aio.py")
        if "vmct-values" in src:
            return  # reads the shared file itself
        names = ("NET_NAME", "NET_CIDR", "POOL", "FLAVORS")
        consts = {t.id: literal(node.value) for node in ast.parse(src).body
                  if isinstance(node, ast.Assign) for t in node.targets
                  if isinstance(t, ast.Name) and t.id in names}
        v = self.values
        self.assertEqual(v["VMCT_NET_NAME"], consts["NET_NAME"])
        self.assertEqual(v["VMCT_NET_CIDR"], consts["NET_CIDR"])
        self.assertEqual((v["VMCT_NET_POOL_START"], v["VMCT_NET_POOL_END"]), consts["POOL"])
        self.assertEqual({v["VMCT_FLAVOR_NAME"]: dict(
            ram=int(v["VMCT_FLAVOR_RAM"]), vcpus=int(v["VMCT_FLAVOR_VCPUS"]),
            disk=int(v["VMCT_FLAVOR_DISK"]))}, consts["FLAVORS"])

    def test_qemu_compute(self):
        src = self.aio_source(os.path.join("computes.d", "10-qemu.sh"))
        if "vmct-values" in src:
            return
        self.assertIn("compute_qemu_az=%s\n" % self.values["VMCT_KVM_AZ"], src)
        self.assertEqual(self.values["VMCT_LIBVIRT_WAIT_SOFT_REBOOT_SECONDS"],
                         re.search(r"wait_soft_reboot_seconds = (\d+)", src).group(1))
        self.assertIn("force_config_drive = %s" % self.values["VMCT_FORCE_CONFIG_DRIVE"].lower(),
                      src)
