"""tools/stage_tests.py: what one stage's stream says, read in one pass."""

import importlib.util
import io
import os
import sys

import subunit
import testtools

TOOLS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools")
sys.path.insert(0, TOOLS)   # its own import of subunit_result
spec = importlib.util.spec_from_file_location("stage_tests",
                                              os.path.join(TOOLS, "stage_tests.py"))
stage_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stage_tests)


class ReadTestCase(testtools.TestCase):

    def test_results_text_outside_tests_and_a_copy(self):
        raw = io.BytesIO()
        out = subunit.StreamResultToBytes(raw)
        out.status(test_id="t.a", test_status="inprogress")
        out.status(test_id="t.a", test_status="success")
        # text a worker wrote outside any test (subunit hands it over as a memoryview)
        out.status(file_name="stdout", file_bytes=b"Failed to import test module: t.b\n",
                   eof=True)
        out.status(test_id="t.c", test_status="fail")
        copy, log = io.BytesIO(), io.BytesIO()
        raw.seek(0)
        found = stage_tests.read(stage_tests.Tee(raw, copy), log)
        self.assertEqual({"t.a", "t.c"}, found.ids)
        self.assertEqual("Failed to import test module: t.b\n", "".join(found.text))
        self.assertEqual(raw.getvalue(), copy.getvalue())
        self.assertEqual(b"success t.a\nfail t.c\n", log.getvalue())


class RunFilterTestCase(testtools.TestCase):

    def test_filter_runs_only_the_matching_tests(self):
        import subprocess
        import fixtures
        tmp = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(tmp, "suite"))
        open(os.path.join(tmp, "suite", "__init__.py"), "w").close()
        with open(os.path.join(tmp, "suite", "test_two.py"), "w") as f:
            f.write("import unittest\n\n\nclass A(unittest.TestCase):\n"
                    "    def test_kept(self):\n        pass\n\n"
                    "    def test_other(self):\n        pass\n")
        with open(os.path.join(tmp, ".stestr.conf"), "w") as f:
            f.write("[DEFAULT]\ntest_path=./suite\ntop_dir=./\n")
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        subprocess.run([sys.executable, os.path.join(TOOLS, "stage_tests.py"), "run", "s",
                        "./suite", "--filter", r"\.test_kept$"], cwd=tmp, check=True,
                       env=dict(os.environ, VMCT_RESULTS=results), capture_output=True)
        with open(os.path.join(results, "s.subunit"), "rb") as stream:
            found = stage_tests.read(stream)
        self.assertEqual({"suite.test_two.A.test_kept"}, found.ids)


class FirstWorkerTestCase(testtools.TestCase):
    """--first-worker: the listed modules on one worker, every other module on the other."""

    IDS = ["s.test_slow.A.test_1", "s.test_slow.A.test_2", "s.test_slow_too.B.test_1",
           "s.test_fast.C.test_1", "s.test_slowly.D.test_1"]

    def test_each_test_on_exactly_one_worker(self):
        import re
        first, second = stage_tests.worker_groups(["s.test_slow", "s.test_fast"])
        on = {i: [n for n, w in enumerate((first, second))
                  if any(re.search(r, i) for r in w["worker"])] for i in self.IDS}
        # a module name is matched whole: test_slow does not take test_slow_too or test_slowly
        self.assertEqual({"s.test_slow.A.test_1": [0], "s.test_slow.A.test_2": [0],
                          "s.test_slow_too.B.test_1": [1], "s.test_fast.C.test_1": [0],
                          "s.test_slowly.D.test_1": [1]}, on)

    def test_modules_file_without_comments_and_blanks(self):
        import fixtures
        path = os.path.join(self.useFixture(fixtures.TempDir()).path, "first.txt")
        with open(path, "w") as f:
            f.write("# why\ns.test_slow\n\n s.test_fast  # note\n")
        self.assertEqual(["s.test_slow", "s.test_fast"], stage_tests.read_modules(path))

    def test_stestr_runs_the_listed_module_on_the_first_worker(self):
        import subprocess
        import fixtures
        tmp = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(tmp, "suite"))
        open(os.path.join(tmp, "suite", "__init__.py"), "w").close()
        for module in ("test_a", "test_b", "test_c"):
            with open(os.path.join(tmp, "suite", module + ".py"), "w") as f:
                f.write("import unittest\n\n\nclass T(unittest.TestCase):\n"
                        "    def test_one(self):\n        pass\n")
        with open(os.path.join(tmp, ".stestr.conf"), "w") as f:
            f.write("[DEFAULT]\ntest_path=./suite\ntop_dir=./\n")
        with open(os.path.join(tmp, "first.txt"), "w") as f:
            f.write("suite.test_b\n")
        results = os.path.join(tmp, "results")
        os.makedirs(results)
        subprocess.run([sys.executable, os.path.join(TOOLS, "stage_tests.py"), "run", "s",
                        "./suite", "--concurrency", "2", "--first-worker", "first.txt"],
                       cwd=tmp, check=True, env=dict(os.environ, VMCT_RESULTS=results),
                       capture_output=True)
        workers = {}

        class Tags(testtools.StreamResult):
            def status(self, test_id=None, test_status=None, test_tags=None, **kwargs):
                if test_id and test_status == "success":
                    workers[test_id] = sorted(t for t in test_tags or () if "worker" in t)

        with open(os.path.join(results, "s.subunit"), "rb") as stream:
            subunit.ByteStreamToStreamResult(stream).run(Tags())
        self.assertEqual({"suite.test_b.T.test_one": ["worker-0"],
                          "suite.test_a.T.test_one": ["worker-1"],
                          "suite.test_c.T.test_one": ["worker-1"]}, workers)
