"""A private Rally home for functional tests: own rally.conf and SQLite DB.

Rally's default DB (/tmp/rally.sqlite) is shared by every venv on a machine, so tests
never use it. ``RallyHome`` writes a rally.conf pointing at a DB in a temp dir, runs
``rally db ensure`` and offers ``rally(...)`` to call the real CLI of the test venv
with HOME pointing at the temp dir (Rally's ~/.rally/globals is per-user state), in a
fork of a process that has loaded Rally once (``rally_forkserver``).
"""

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

import fixtures
import testtools

RALLY = os.path.join(os.path.dirname(sys.executable), "rally")
FORKSERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rally_forkserver.py")


class _ForkServer:
    """One tests/functional/rally_forkserver.py per test process, started on first use."""

    _lock = threading.Lock()
    _instance = None

    @classmethod
    def get(cls):
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="vmct-rally-fork-")
        self.path = os.path.join(self.dir, "socket")
        self.proc = subprocess.Popen([sys.executable, FORKSERVER, self.path],
                                     stdout=subprocess.PIPE, text=True)
        ready = self.proc.stdout.readline().strip()
        if ready != "ready":
            self.proc.kill()
            raise RuntimeError("the Rally fork server did not start (said %r); "
                               "VMCT_TEST_RALLY_FORK=0 runs the console script" % ready)
        atexit.register(self.stop)

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, argv, env, timeout):
        """What ``subprocess.run([rally] + argv)`` returns, output merged."""
        out = os.path.join(self.dir, "out-%d" % threading.get_ident())
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(self.path)
            conn.sendall(json.dumps({"argv": argv, "env": env, "cwd": os.getcwd(),
                                     "out": out}).encode() + b"\n")
            replies = conn.makefile("r")
            pid = json.loads(replies.readline())["pid"]
            try:
                line = replies.readline()
            except socket.timeout:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([RALLY] + argv, timeout)
        with open(out) as f:
            output = f.read()
        os.unlink(out)
        if not line:
            raise AssertionError("rally %s: its fork died without an exit status:\n%s"
                                 % (" ".join(argv), output[-4000:]))
        return subprocess.CompletedProcess([RALLY] + argv, json.loads(line)["exit"], output)


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
        """Run ``rally --config-file <ours> ARGS``; returns the CompletedProcess.

        In a fork of a process that has loaded Rally (rally_forkserver), unless
        VMCT_TEST_RALLY_FORK=0: the same CLI code, without seconds of imports each.
        """
        argv = ["--config-file", self.conf] + list(args)
        if os.environ.get("VMCT_TEST_RALLY_FORK", "1") == "0":
            proc = subprocess.run([RALLY] + argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  timeout=timeout, env=self.env())
        else:
            proc = _ForkServer.get().run(argv, self.env(), timeout)
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
