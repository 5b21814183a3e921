"""A private Rally home for functional tests: own rally.conf and SQLite DB.

Rally's default DB (/tmp/rally.sqlite) is shared by every venv on a machine, so tests
never use it. ``RallyHome`` writes a rally.conf pointing at a DB in a temp dir, runs
``rally db ensure`` and offers ``rally(...)`` to call the real CLI of the test venv
with HOME pointing at the temp dir (Rally's ~/.rally/globals is per-user state).
"""

import json
import os
import subprocess
import sys

import fixtures
import testtools

RALLY = os.path.join(os.path.dirname(sys.executable), "rally")


class RallyHome(fixtures.Fixture):
    """Temp dir with rally.conf + DB; ``extra_conf`` is appended to rally.conf."""

    def __init__(self, extra_conf=""):
        super().__init__()
        self.extra_conf = extra_conf

    def _setUp(self):
        self.path = self.useFixture(fixtures.TempDir()).path
        self.conf = os.path.join(self.path, "rally.conf")
        with open(self.conf, "w") as f:
            f.write("[database]\nconnection = sqlite:///%s\n%s\n"
                    % (os.path.join(self.path, "rally.sqlite"), self.extra_conf))
        self.rally("db", "ensure")

    def env(self):
        # HOME too: Rally keeps the current env and task in ~/.rally/globals.
        return dict(os.environ, LC_ALL="C.UTF-8", HOME=self.path)

    def rally(self, *args, check=True, timeout=600):
        """Run ``rally --config-file <ours> ARGS``; returns the CompletedProcess."""
        proc = subprocess.run(
            [RALLY, "--config-file", self.conf] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            timeout=timeout, env=self.env())
        if check and proc.returncode != 0:
            raise AssertionError("rally %s exited %d:\n%s"
                                 % (" ".join(args), proc.returncode, proc.stdout[-4000:]))
        return proc

    def report_json(self, *task_uuids):
        """``rally task report --json`` of the given (default: last) task, as a dict."""
        path = os.path.join(self.path, "report.json")
        uuids = ["--uuid"] + list(task_uuids) if task_uuids else []
        self.rally("task", "report", "--json", "--out", path, *uuids)
        with open(path) as f:
            return json.load(f)

    def workloads(self, *task_uuids):
        """Every workload (with its iterations in ``data``) of a JSON report."""
        return [workload
                for task in self.report_json(*task_uuids)["tasks"]
                for subtask in task["subtasks"]
                for workload in subtask["workloads"]]


class RallyHomeTestCase(testtools.TestCase):
    """A :class:`RallyHome` per test class, ``cls.home``, where ``prepare`` runs once.

    The Rally runs a class's tests read are made once (Rally's start-up is seconds each);
    a failed ``prepare`` leaves no home behind.
    """

    @classmethod
    def prepare(cls, home):
        """Run what the tests read (tasks, exports) in ``home``."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.home = RallyHome()
        cls.home.setUp()
        try:
            cls.prepare(cls.home)
        except BaseException:
            cls.home.cleanUp()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.home.cleanUp()
        super().tearDownClass()
