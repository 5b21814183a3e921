"""sysbench fileio really uses O_DIRECT where the facts say it does (real sysbench).

(a) The runner runs a direct fileio workload in /var/tmp (the host's disk) while this
test reads the open flags of sysbench's test files from /proc/<pid>/fdinfo.
(b) On ramfs, which refuses O_DIRECT with EINVAL, the direct workload fails with an
error naming the fix; a buffered workload on tmpfs passes and records tmpfs. (Since
Linux 6.6 tmpfs accepts O_DIRECT opens and serves them from memory, so ramfs is the
file system that still refuses; the facts call both "memory, no block device".)
"""

import os
import subprocess
import threading
import time
import uuid

import fixtures
import testtools

from rally_vmct.workloads import plan
from rally_vmct.workloads import runner
from tests.functional import test_runner_local

O_DIRECT = 0o40000


def fileio(time_s=2, **params):
    item = {"sysbench": "fileio", "test_mode": "rndrd", "block_size": "4K",
            "total_size": "16M", "num": 2, "time": time_s}
    item.update(params)
    return item


def open_test_file_flags(workdir):
    """``{path: flags}`` of the test_file.* that a sysbench working in ``workdir`` holds."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink("/proc/%s/cwd" % pid) != workdir:
                continue
            for fd in os.listdir("/proc/%s/fd" % pid):
                target = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if os.path.basename(target).startswith("test_file."):
                    with open("/proc/%s/fdinfo/%s" % (pid, fd)) as f:
                        flags = [line for line in f if line.startswith("flags:")][0]
                    found[target] = int(flags.split()[1], 8)
        except OSError:
            continue    # a process that ended meanwhile
    return found


class Mount(fixtures.Fixture):
    """A small memory file system mounted on a fresh directory (needs root)."""

    def __init__(self, fs_type):
        super().__init__()
        self.fs_type = fs_type

    def _setUp(self):
        self.path = self.useFixture(fixtures.TempDir()).path
        subprocess.run(["mount", "-t", self.fs_type, "-o", "size=64m", self.fs_type,
                        self.path], check=True)
        self.addCleanup(subprocess.run, ["umount", self.path], check=True)


class FileioStorageTestCase(testtools.TestCase):

    def run_plan(self, items, fileio_dir):
        return runner.run_plan(test_runner_local.local_execute, plan.parse_plan(items),
                               "this host", timeout=60, fileio_dir=fileio_dir)

    def test_direct_workload_opens_its_files_with_o_direct(self):
        workdir = "/var/tmp/vmct-fileio-test-%s" % uuid.uuid4().hex[:8]
        done = {}
        thread = threading.Thread(target=lambda: done.update(
            out=self.run_plan([fileio(time_s=3, extra_flags="direct")], workdir)))
        thread.start()
        seen = {}
        deadline = time.monotonic() + 15
        while thread.is_alive() and time.monotonic() < deadline and len(seen) < 2:
            seen.update(open_test_file_flags(workdir))
            time.sleep(0.05)
        thread.join(30)
        facts, _, (result,) = done["out"]
        self.assertTrue(result.ok, result.error)
        self.assertEqual(["test_file.0", "test_file.1"],
                         sorted(os.path.basename(p) for p in seen), seen)
        for path, flags in seen.items():
            self.assertTrue(flags & O_DIRECT, "%s flags %o lack O_DIRECT" % (path, flags))
        self.assertEqual("on", facts["fileio_direct"])
        self.assertEqual(workdir, facts["fileio_dir"])
        self.assertNotIn(facts["fileio_fs"], ("tmpfs", "ramfs", "unknown"))
        self.assertTrue(facts["fileio_device"].startswith("/dev/"), facts["fileio_device"])
        self.assertEqual("vmct.sysbench_fileio_rndrd_direct", result.workload.atomic_name)
        self.assertFalse(os.path.exists(workdir))       # made by the run, so removed

    def test_buffered_workload_is_not_direct(self):
        workdir = "/var/tmp/vmct-fileio-test-%s" % uuid.uuid4().hex[:8]
        done = {}
        thread = threading.Thread(target=lambda: done.update(
            out=self.run_plan([fileio(time_s=2)], workdir)))
        thread.start()
        seen = {}
        while thread.is_alive() and len(seen) < 2:
            seen.update(open_test_file_flags(workdir))
            time.sleep(0.05)
        thread.join(30)
        self.assertEqual(2, len(seen))
        self.assertFalse(any(flags & O_DIRECT for flags in seen.values()), seen)
        self.assertEqual("off", done["out"][0]["fileio_direct"])

    def test_memory_file_systems(self):
        if os.geteuid() != 0:
            self.skipTest("mounting ramfs and tmpfs needs root")
        ramfs = self.useFixture(Mount("ramfs")).path
        facts, _, (result,) = self.run_plan([fileio(time_s=1, extra_flags="direct")],
                                            os.path.join(ramfs, "fio"))
        self.assertFalse(result.ok)
        self.assertIn("sysbench fileio rndrd direct prepare exited 1", result.error)
        self.assertIn("errno = 22 (Invalid argument)", result.error)
        self.assertIn("the file system of fileio_dir %s/fio (ramfs) refused O_DIRECT"
                      % ramfs, result.error)
        self.assertIn("set the task argument fileio_dir to a directory on block storage",
                      result.error)
        self.assertIn("or drop extra_flags: direct", result.error)
        self.assertEqual("ramfs (memory, no block device)", facts["fileio_device"])

        tmpfs = self.useFixture(Mount("tmpfs")).path
        facts, _, (result,) = self.run_plan([fileio(time_s=1)], tmpfs)
        self.assertTrue(result.ok, result.error)
        self.assertEqual(("tmpfs", "off", tmpfs), (facts["fileio_fs"], facts["fileio_direct"],
                                                   facts["fileio_mount"]))
        self.assertEqual("tmpfs (memory, no block device)", facts["fileio_device"])
        self.assertTrue(os.path.isdir(tmpfs))           # existed before: kept
