"""Where fileio's files live: the probe script, its parser and O_DIRECT helpers.

Probe outputs in tests/fixtures/facts were captured for real (see README.md there).
"""

import os
import subprocess

import fixtures
import testtools

from rally_vmct.workloads import storage

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "facts")
WORKDIR = "/var/tmp/vmct-fileio"


def probe_fixture(name):
    with open(os.path.join(FIXTURES, name + ".probe")) as f:
        return f.read()


class StorageFactsTestCase(testtools.TestCase):

    def test_qemu_guest_virtio_disk_on_var_tmp(self):
        facts, existed = storage.storage_facts(WORKDIR, probe_fixture("qemu-tcg-guest-var-tmp"))
        self.assertEqual({"fileio_dir": WORKDIR, "fileio_fs": "ext2",
                          "fileio_device": "/dev/vda (virtio_blk)",
                          "fileio_mount": "/var/tmp"}, facts)
        self.assertFalse(existed)

    def test_this_host_root_disk(self):
        facts, _ = storage.storage_facts(WORKDIR, probe_fixture("firecracker-kvm-host-var-tmp"))
        # ext4 from /proc/mounts, not stat -f's "ext2/ext3"
        self.assertEqual("ext4", facts["fileio_fs"])
        self.assertEqual("/dev/vda (virtio_blk)", facts["fileio_device"])
        self.assertEqual("/", facts["fileio_mount"])

    def test_docker_container_overlay2_layer(self):
        facts, _ = storage.storage_facts(WORKDIR, probe_fixture("docker-container-var-tmp"))
        self.assertEqual("overlay", facts["fileio_fs"])
        self.assertEqual("overlay (Docker overlay2 writable layer; host disk not visible)",
                         facts["fileio_device"])

    def test_memory_file_systems_say_so(self):
        output = ("existed=yes\nreal=/mnt/t\nstatfs=tmpfs\nvmct-mounts-begin\n"
                  "/dev/sda1 / ext4 rw 0 0\ntmpfs /mnt/t tmpfs rw,size=8m 0 0\n"
                  "vmct-mounts-end\n")
        facts, existed = storage.storage_facts("/mnt/t", output)
        self.assertEqual("tmpfs (memory, no block device)", facts["fileio_device"])
        self.assertTrue(existed)

    def test_symlinked_dir_names_the_real_place(self):
        output = ("existed=no\nreal=/data/fio\nblock=sdb1\ndriver=sd\nvmct-mounts-begin\n"
                  "/dev/sda1 / ext4 rw 0 0\n/dev/sdb1 /data xfs rw 0 0\nvmct-mounts-end\n")
        facts, _ = storage.storage_facts("/var/tmp/fio", output)
        self.assertEqual("/var/tmp/fio (-> /data/fio)", facts["fileio_dir"])
        self.assertEqual(("xfs", "/dev/sdb1 (sd)", "/data"),
                         (facts["fileio_fs"], facts["fileio_device"], facts["fileio_mount"]))

    def test_longest_prefix_top_mount_and_escapes(self):
        mounts = storage.parse_mounts(
            "/dev/vda / ext4 rw 0 0\n"
            "/dev/vdb /var ext4 rw 0 0\n"
            "/dev/vdc /var/tmp ext4 rw 0 0\n"
            "tmpfs /var/tmp tmpfs rw 0 0\n"
            "/dev/vdd /var/tmpx ext4 rw 0 0\n"
            "/dev/vde /mnt/my\\040disk xfs rw 0 0\n")
        self.assertEqual("tmpfs", storage.mount_of("/var/tmp/a", mounts)[0])
        self.assertEqual("/dev/vdb", storage.mount_of("/var/lib", mounts)[0])
        self.assertEqual("/dev/vda", storage.mount_of("/varnish", mounts)[0])
        self.assertEqual("/dev/vde", storage.mount_of("/mnt/my disk/x", mounts)[0])
        self.assertIsNone(storage.mount_of("/x", []))


class ProbeCommandTestCase(testtools.TestCase):

    def test_runs_for_real_with_a_hostile_directory_name(self):
        base = self.useFixture(fixtures.TempDir()).path
        workdir = os.path.join(base, "it's a $(dir) `x`")
        proc = subprocess.run(["sh", "-c", storage.probe_command(workdir)],
                              capture_output=True, text=True, timeout=30, check=True)
        self.assertTrue(os.path.isdir(workdir))
        self.assertFalse(os.path.exists(os.path.join(base, "x")))
        facts, existed = storage.storage_facts(workdir, proc.stdout)
        self.assertFalse(existed)
        self.assertEqual(workdir, facts["fileio_dir"])
        self.assertNotIn("unknown", facts["fileio_fs"])
        again = subprocess.run(["sh", "-c", storage.probe_command(workdir)],
                               capture_output=True, text=True, timeout=30, check=True)
        self.assertTrue(storage.storage_facts(workdir, again.stdout)[1])

    def test_uncreatable_directory_fails(self):
        base = self.useFixture(fixtures.TempDir()).path
        blocker = os.path.join(base, "file")
        open(blocker, "w").close()
        proc = subprocess.run(["sh", "-c", storage.probe_command(blocker + "/sub")],
                              capture_output=True, text=True, timeout=30)
        self.assertNotEqual(0, proc.returncode)


class ArgumentTestCase(testtools.TestCase):

    def test_fileio_dir_must_be_absolute_and_not_root(self):
        self.assertEqual("/data/fio", storage.check_fileio_dir("/data//fio/"))
        self.assertEqual("/a", storage.check_fileio_dir("//a"))
        for bad, message in (("data", "must be an absolute directory path"),
                             (None, "must be an absolute directory path"),
                             ("/", "must not be the root directory"),
                             ("/a/..", "must not be the root directory"),
                             ("/a\nb", "control characters")):
            error = self.assertRaises(storage.StorageError, storage.check_fileio_dir, bad)
            self.assertIn("Argument 'fileio_dir'", str(error))
            self.assertIn(message, str(error))

    def test_direct_mode(self):
        direct, listed, buffered = ({"extra_flags": "direct"},
                                    {"extra_flags": ["dsync", "direct"]}, {})
        self.assertEqual("on", storage.direct_mode([direct, listed]))
        self.assertEqual("off", storage.direct_mode([buffered, {"extra_flags": "sync"}]))
        self.assertEqual("mixed", storage.direct_mode([direct, buffered]))

    def test_refused_direct_is_recognised_and_explained(self):
        # sysbench 1.0.20 on ramfs (captured), and 0.4's wording
        self.assertTrue(storage.direct_refused(
            "FATAL: Can't open file errno = 22 (Invalid argument)"))
        self.assertTrue(storage.direct_refused("FATAL: Failed to open file #0, errno = 22"))
        self.assertFalse(storage.direct_refused("FATAL: No space left on device"))
        hint = storage.direct_refused_hint("/mnt/r", "ramfs")
        self.assertIn("fileio_dir /mnt/r (ramfs) refused O_DIRECT", hint)
        self.assertIn("set the task argument fileio_dir to a directory on block storage", hint)
        self.assertIn("drop extra_flags: direct", hint)
