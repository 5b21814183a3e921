"""From a machine whose apt sources list only ``main``, every package path ends installable.

A fresh Debian 12 has netperf only as another package's dependency (no install candidate: it
lives in non-free), so ``apt-cache show netperf`` succeeds while nothing can install it. These
tests give apt a configuration of their own (``APT_CONFIG``: the machine's Debian sources with
non-free taken out, an empty package status, lists and cache in a temporary directory), so the
machine's own apt state, warm or not, changes nothing, and run the real tools against it:
tools/vmct-apt (the one apt helper) and the QEMU guest builder's package resolution. The Docker
image builder resolves with debootstrap's own lists (main and non-free), checked too.
"""

import glob
import os
import re
import subprocess

import fixtures
import testtools

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VMCT_APT = os.path.join(ROOT, "tools", "vmct-apt")


def strip_non_free(text):
    """The sources with main only: ``non-free`` out of every Components / deb line."""
    return re.sub(r" non-free(?=\s|$)", "", text, flags=re.M)


class FreshApt(fixtures.Fixture):
    """An APT configuration that starts where a fresh machine does.

    ``status``: the dpkg status file apt reads (default: an empty one, nothing installed).
    """

    def __init__(self, status=None):
        super().__init__()
        self.status = status

    def _setUp(self):
        self.dir = self.useFixture(fixtures.TempDir()).path
        etc = os.path.join(self.dir, "etc")
        parts = os.path.join(etc, "sources.list.d")
        for d in (parts, os.path.join(etc, "apt.conf.d"), os.path.join(etc, "preferences.d"),
                  os.path.join(self.dir, "lists", "partial"),
                  os.path.join(self.dir, "cache", "archives", "partial")):
            os.makedirs(d)
        for src in glob.glob("/etc/apt/sources.list.d/*.sources") + ["/etc/apt/sources.list"]:
            if os.path.isfile(src):
                with open(src) as f:
                    text = strip_non_free(f.read())
                dst = os.path.join(etc if src.endswith(".list") else parts, os.path.basename(src))
                with open(dst, "w") as f:
                    f.write(text)
        if self.status is None:
            self.status = os.path.join(self.dir, "status")
            open(self.status, "w").close()
        self.config = os.path.join(self.dir, "apt.conf")
        with open(self.config, "w") as f:
            f.write('Dir::Etc "%s/";\nDir::State::Lists "%s/lists/";\n'
                    'Dir::State::status "%s";\nDir::Cache "%s/cache/";\n'
                    'APT::Sandbox::User "root";\n' % (etc, self.dir, self.status, self.dir))
        self.env = dict(os.environ, APT_CONFIG=self.config, LC_ALL="C")
        self.env.pop("VMCT_APT_UPDATED", None)

    def run(self, *argv, check=True):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, check=check,
                              timeout=300)

    def candidate(self, package):
        out = self.run("apt-cache", "policy", package).stdout
        match = re.search(r"^\s+Candidate: (\S+)", out, re.M)
        return match.group(1) if match and match.group(1) != "(none)" else None

    def sources(self):
        text = ""
        for path in glob.glob(os.path.join(self.dir, "etc", "**", "*.*"), recursive=True):
            if path.endswith((".sources", ".list")):
                with open(path) as f:
                    text += f.read()
        return text


class FreshAptTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            self.skipTest("apt-get update needs root")
        self.apt = self.useFixture(FreshApt())

    def test_the_starting_point_is_a_fresh_machine(self):
        self.assertNotIn("non-free", self.apt.sources().replace("non-free-firmware", ""))
        self.apt.run("apt-get", "update", "-qq")
        self.assertIsNone(self.apt.candidate("netperf"))      # what broke the demo
        self.assertIsNotNone(self.apt.candidate("sysbench"))  # main works
        self.assertEqual(0, self.apt.run("apt-cache", "show", "netperf", check=False).returncode)

    def test_the_apt_helper_makes_netperf_installable(self):
        proc = self.apt.run(VMCT_APT, "resolve", "netperf", "sysbench")
        self.assertIn("enabled Debian non-free", proc.stderr)
        self.assertEqual(2, proc.stderr.count("apt-get update"), proc.stderr)
        self.assertIsNotNone(self.apt.candidate("netperf"))
        self.assertRegex(self.apt.sources(), r"Components:.* non-free|deb .* non-free")
        # a second run finds everything installable: no update, no change
        proc = self.apt.run(VMCT_APT, "resolve", "netperf")
        self.assertEqual("", proc.stderr)

    def test_an_installed_copy_is_not_a_source(self):
        """An installed netperf with non-free off still needs non-free.

        apt-cache policy shows the installed version as candidate (the native baseline
        installed it), yet nothing could download it again for the QEMU guest.
        """
        if not os.path.exists("/usr/bin/netperf"):
            self.skipTest("netperf is not installed on this machine (tools/install-deps)")
        apt = self.useFixture(FreshApt(status="/var/lib/dpkg/status"))
        apt.run("apt-get", "update", "-qq")
        self.assertIsNotNone(apt.candidate("netperf"))
        proc = apt.run(VMCT_APT, "resolve", "netperf")
        self.assertIn("enabled Debian non-free", proc.stderr)
        self.assertIn("non-free", apt.run("apt-cache", "madison", "netperf").stdout)

    def test_the_apt_helper_names_what_no_source_has(self):
        proc = self.apt.run(VMCT_APT, "resolve", "netperf", "vmct-no-such-package",
                            check=False)
        self.assertEqual(1, proc.returncode)
        self.assertIn("no install candidate for vmct-no-such-package, even with non-free",
                      proc.stderr)

    def test_the_qemu_guest_builder_resolves_netperf(self):
        proc = self.apt.run("python3", os.path.join(ROOT, "tools", "images", "qemu_guest.py"),
                            "--packages")
        packages = proc.stdout.split()
        for name in ("netperf", "sysbench", "busybox-static", "dropbear-bin"):
            self.assertIn(name, packages)
        self.assertTrue([p for p in packages if p.startswith("linux-image-")], packages)
        self.assertIn("enabled Debian non-free", proc.stderr)


class DockerImagePackagesTestCase(testtools.TestCase):
    """tools/images/docker/build resolves with debootstrap's own lists.

    They carry main and non-free, whatever the machine's own sources say.
    """

    def test_the_docker_image_gets_netperf(self):
        if os.geteuid() != 0:
            self.skipTest("debootstrap needs root")
        cache = self.useFixture(fixtures.TempDir()).path
        proc = subprocess.run([os.path.join(ROOT, "tools", "images", "docker", "build"),
                               "--packages", "--cache-dir", cache], capture_output=True,
                              text=True, timeout=300, check=True)
        packages = proc.stdout.split()
        for name in ("netperf", "sysbench", "openssh-server"):
            self.assertIn(name, packages)
        self.assertEqual([], os.listdir(cache))  # nothing left behind
