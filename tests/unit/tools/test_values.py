"""tools/vmct-values: readable by bash and Python alike, and what the all-in-one cloud, the
devstack plugin and the task-args writer all read."""

import os
import subprocess

import fixtures
import testtools

from tests.unit import tools

values_mod = tools.load("vmct_values", os.path.join(tools.TOOLS, "vmct_values.py"))
VALUES = values_mod.VALUES


def bash(script, *args):
    return subprocess.run(["bash", "-c", script, "-", *args], capture_output=True, text=True,
                          check=True, env={"PATH": os.environ["PATH"]}).stdout


def bash_values():
    out = bash('set -u; source "$1"; for v in ${!VMCT_*}; do printf "%s=%s\\0" "$v" "${!v}"; '
               'done', VALUES)
    return dict(item.split("=", 1) for item in out.split("\0") if item)


class ValuesTestCase(testtools.TestCase):

    def test_the_file_lives_outside_devstack(self):
        self.assertEqual(os.path.join(tools.TOOLS, "vmct-values"), VALUES)

    def test_bash_and_python_read_the_same(self):
        py = values_mod.read_values(VALUES)
        self.assertEqual(bash_values(), py)
        self.assertEqual("img_hv_type=qemu hw_cdrom_bus=scsi hw_scsi_model=virtio-scsi "
                         "os_type=linux", py["VMCT_QEMU_IMAGE_PROPERTIES"])
        self.assertEqual("docker.DockerDriver", py["VMCT_DOCKER_COMPUTE_DRIVER"])

    def test_the_qemu_guest_skips_the_kernels_timer_check(self):
        # without it a TCG guest starved of CPU panics at boot (IO-APIC + timer check)
        line = values_mod.read_values(VALUES)["VMCT_QEMU_COMMAND_LINE"].split()
        self.assertIn("no_timer_check", line)
        self.assertIn("console=ttyS0", line)

    def test_sh_can_source_it(self):
        proc = subprocess.run(["sh", "-c", '. "$1" && echo "$VMCT_FLAVOR_NAME"', "-", VALUES],
                              capture_output=True, text=True)
        self.assertEqual((0, "vmct.tiny\n"), (proc.returncode, proc.stdout), proc.stderr)

    def test_python_reader_rejects_shell_code(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "v")
        for text, error in (("A=1\nexport B=2\n", ":2: expected NAME=VALUE"),
                            ("A=1\nB=$(date)\n", ":2: no expansions allowed in B"),
                            ("A='x y' # c\nB=`id`\n", ":2: no expansions allowed in B")):
            with open(path, "w") as f:
                f.write(text)
            e = self.assertRaises(ValueError, values_mod.read_values, path)
            self.assertIn(error, str(e))

    def test_no_expansions(self):
        with open(VALUES) as f:
            for line in f:
                if not line.startswith("#"):
                    self.assertNotIn("$", line)
                    self.assertNotIn("`", line)

    def test_environment_overrides_like_local_conf(self):
        v = values_mod.effective_values(environ={"VMCT_KVM_AZ": "fast", "VMCT_NOT_IN_FILE": "x",
                                                 "VMCT_FLAVOR_NAME": ""})
        self.assertEqual("fast", v["VMCT_KVM_AZ"])
        self.assertEqual("vmct.tiny", v["VMCT_FLAVOR_NAME"])  # empty: the file's value
        self.assertNotIn("VMCT_NOT_IN_FILE", v)


class AioReadsTheValuesTestCase(testtools.TestCase):
    """tools/aio takes its names from the shared file (no copies to keep in step)."""

    def aio(self, expression):
        script = ('source "$1/tools/aio/lib/common.sh"; source "$1/tools/aio/lib/services.sh"; '
                  'load_computes; ' + expression)
        return bash(script, tools.ROOT).strip()

    def test_compute_kinds_and_network(self):
        v = values_mod.read_values(VALUES)
        self.assertEqual(v["VMCT_KVM_AZ"], self.aio("compute_var qemu az"))
        self.assertEqual(v["VMCT_QEMU_IMAGE"], self.aio("compute_var qemu image"))
        self.assertEqual(v["VMCT_FLAVOR_NAME"], self.aio("compute_var qemu flavor"))
        self.assertEqual(v["VMCT_DOCKER_AZ"], self.aio("compute_var docker az"))
        self.assertEqual(v["VMCT_DOCKER_IMAGE"], self.aio("compute_var docker image"))
        self.assertEqual(v["VMCT_FAKE_AZ"], self.aio("compute_var fake az"))
        self.assertEqual(v["VMCT_FAKE_IMAGE"], self.aio("compute_var fake image"))
        self.assertEqual(v["VMCT_FLAVOR_NAME"], self.aio("compute_var fake flavor"))
        self.assertEqual("%s %s" % (v["VMCT_NET_NAME"], v["VMCT_NET_CIDR"]),
                         self.aio('echo "$NET_NAME $NET_CIDR"'))

    def test_qemu_compute_options(self):
        conf = self.aio("compute_qemu_overlay")
        v = values_mod.read_values(VALUES)
        self.assertIn("wait_soft_reboot_seconds = %s"
                      % v["VMCT_LIBVIRT_WAIT_SOFT_REBOOT_SECONDS"], conf)
        self.assertIn("force_config_drive = %s" % v["VMCT_FORCE_CONFIG_DRIVE"], conf)

    def test_fake_compute(self):
        v = values_mod.read_values(VALUES)
        self.assertEqual("compute_driver = %s" % v["VMCT_FAKE_COMPUTE_DRIVER"],
                         self.aio("compute_fake_overlay | grep compute_driver"))
        self.assertEqual("docker.floor.FloorDriver", v["VMCT_FAKE_COMPUTE_DRIVER"])
        self.assertEqual("img_hv_type=fake", v["VMCT_FAKE_IMAGE_PROPERTIES"])
        # its own host: its own OVS agent, so Neutron binds its ports
        self.assertNotIn(self.aio("compute_var fake host"), (self.aio('echo "$AIO_HOST"'),
                                                             self.aio("compute_var docker host")))
        self.assertEqual("qemu docker docker2 fake", self.aio("enabled_computes | xargs"))
        self.assertEqual("qemu docker docker2",
                         self.aio("VMCT_AIO_FAKE=0; enabled_computes | xargs"))

    def test_real_computes_hold_the_capacity(self):
        """cpu_allocation_ratio: the smallest whole ratio that holds the capacity.

        AIO_CAPACITY (VMCT_AIO_CAPACITY, default 32) servers of the flavor's VCPUs on the
        online CPUs, never below Nova's 4.0.
        """
        self.assertEqual("32", self.aio('echo "$AIO_CAPACITY"'))
        for cpus, capacity, ratio in ((2, 32, "16.0"), (3, 32, "11.0"), (16, 32, "4.0"),
                                      (1, 32, "32.0"), (2, 64, "32.0")):
            stub = "getconf() { echo %d; }; AIO_CAPACITY=%d; " % (cpus, capacity)
            for compute in ("qemu", "docker"):
                line = self.aio(stub + "compute_%s_overlay | grep '^cpu_allocation_ratio'"
                                % compute)
                self.assertEqual("cpu_allocation_ratio = " + ratio, line,
                                 (cpus, capacity, compute))
        self.assertEqual("", self.aio("compute_fake_overlay | grep allocation_ratio || true"))
