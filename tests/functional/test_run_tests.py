"""The test command's stages report this run's results, on a temporary copy of the tree.

The real stage scripts (tools/test-stages/10-unit, 20-functional, 50-e2e) and the real
summary (tools/subunit_summary.py) run against a copy of the repository whose unit and
functional suites are replaced by a test or two, so each stage takes seconds:
  * a unit test module that fails to import, added after a whole successful run (and with an
    earlier run left in the tree's own .stestr/), fails the unit stage naming the module;
  * VMCT_SKIP_E2E=1 records every e2e test as skipped, with the reason;
  * the e2e tests, run with no artifacts and a cloud whose services are not running, fail
    (none skips), the fault tests naming the service that is not running.
"""

import os
import shutil
import subprocess
import sys

import fixtures
import testtools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PASSING = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n" \
          "        self.assertTrue(True)\n"


def tree_copy(dest):
    """The files git tracks, and this change's untracked ones, copied into ``dest``."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                            "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = os.path.join(ROOT, name)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, name))


class StagesTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = self.useFixture(fixtures.TempDir()).path
        tree_copy(self.tree)
        # small suites instead of the real ones (tests/unit/devstack stays: e2e imports it;
        # the functional stage's first-worker.txt too: its modules then match no test)
        for suite in ("unit", "functional"):
            folder = os.path.join(self.tree, "tests", suite)
            for name in os.listdir(folder):
                if name not in ("__init__.py", "devstack", "first-worker.txt"):
                    path = os.path.join(folder, name)
                    (shutil.rmtree if os.path.isdir(path) else os.unlink)(path)
            self.write("tests/%s/test_small.py" % suite, PASSING)
        self.results = os.path.join(self.tree, "results")
        os.makedirs(self.results)

    def write(self, name, text):
        with open(os.path.join(self.tree, name), "w") as f:
            f.write(text)

    def env(self, **extra):
        return dict(os.environ, VMCT_ROOT=self.tree, VMCT_RESULTS=self.results,
                    VMCT_PY=sys.executable, **extra)

    def stage(self, name, **env):
        proc = subprocess.run([os.path.join(self.tree, "tools", "test-stages", name)],
                              cwd=self.tree, env=self.env(**env), capture_output=True,
                              text=True, timeout=300)
        self.assertEqual(0, proc.returncode, proc.stdout + proc.stderr)

    def summary(self):
        """(exit status, output lines) of tools/subunit_summary.py over the results."""
        proc = subprocess.run([sys.executable, os.path.join(self.tree, "tools",
                                                            "subunit_summary.py"),
                               self.results], capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout.splitlines()

    def e2e_count(self):
        """How many tests tests/e2e has, by unittest's own discovery (not stestr's list)."""
        proc = subprocess.run(
            [sys.executable, "-c", "import unittest; print(unittest.TestLoader().discover("
             "'tests/e2e', top_level_dir='.').countTestCases())"],
            cwd=self.tree, capture_output=True, text=True, check=True, timeout=120)
        return int(proc.stdout)

    def test_a_module_that_fails_to_import_fails_its_stage(self):
        # an earlier run in the tree's own .stestr/, as `stestr run` by hand leaves it
        subprocess.run([sys.executable, "-m", "stestr", "--test-path", "./tests/functional",
                        "run"], cwd=self.tree, capture_output=True, check=True, timeout=120)
        self.stage("10-unit")
        self.stage("20-functional")
        rc, lines = self.summary()
        self.assertEqual((0, "2 passed, 0 failed, 0 skipped"), (rc, lines[-1]))

        self.write("tests/unit/test_broken.py", "import vmct_no_such_module\n")
        self.stage("10-unit")
        rc, lines = self.summary()
        self.assertEqual(1, rc)
        # the stage's run, not the earlier one: its failure (stestr may not run the rest)
        self.assertRegex(lines[-1], r"^[12] passed, 1 failed, 0 skipped$")
        self.assertIn("unit: 0 passed, 1 failed, 0 skipped", lines)
        failed = [line for line in lines if line.startswith("FAILED ")]
        self.assertEqual(["FAILED unit.discovery"], failed)
        text = "\n".join(lines)
        self.assertIn("Failed to import test module: tests.unit.test_broken", text)
        self.assertIn("No module named 'vmct_no_such_module'", text)

    def test_vmct_skip_e2e_lists_the_e2e_tests_as_skipped(self):
        self.stage("50-e2e", VMCT_SKIP_E2E="1")
        rc, lines = self.summary()
        expected = self.e2e_count()
        steps = 13  # the stage's own steps (demo, scale, conformance, the tenant-scoped
        # profile's up and smoke, the other profile's up, smoke and lifecycle,
        # iptables_hybrid, down, ...)
        self.assertGreater(expected, 40)
        self.assertEqual("0 passed, 0 failed, %d skipped" % (expected + steps), lines[-1])
        self.assertIn("e2e: 0 passed, 0 failed, %d skipped" % expected, lines)
        skips = [line for line in lines if line.startswith("skipped tests.e2e.")]
        self.assertEqual(expected, len(skips))
        self.assertTrue(all(line.endswith("VMCT_SKIP_E2E=1: the e2e stage did not run")
                            for line in skips), skips[:3])

    def test_e2e_tests_fail_when_the_cloud_is_not_there(self):
        aio = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(aio, "pids"))
        self.write(os.path.join(aio, "admin-openrc"), "export OS_AUTH_URL=http://127.0.0.1:9/\n")
        ended = subprocess.Popen(["true"])
        ended.wait()   # a pid that no longer runs
        for service in ("keystone", "nova-api"):
            self.write(os.path.join(aio, "pids", service + ".pid"), "%d\n" % ended.pid)
        e2e_dir = os.path.join(self.results, "e2e")
        os.makedirs(e2e_dir)   # the stage's artifacts: none
        subprocess.run([sys.executable, "tools/stage_tests.py", "run", "e2e", "./tests/e2e"],
                       cwd=self.tree, check=True, timeout=600,
                       # the long suite's tests too: each one fails when the cloud is gone
                       env=self.env(VMCT_E2E_DIR=e2e_dir, VMCT_AIO_DIR=aio, VMCT_E2E_FULL="1"))
        rc, lines = self.summary()
        expected = self.e2e_count()
        self.assertEqual(1, rc)
        self.assertEqual("0 passed, %d failed, 0 skipped" % expected, lines[-1])
        text = "\n".join(lines)
        self.assertIn("the all-in-one cloud is not up: not running: keystone (pid %d), "
                      "nova-api (pid %d)" % (ended.pid, ended.pid), text)
        self.assertIn("cannot read the e2e stage's artifacts: FileNotFoundError", text)
