"""tools/aio/lib: what the daemons tools/aio starts inherit; which pids are alive; Nova's
deleted rows archived on up; the Neutron backend a state runs."""

import os
import signal
import subprocess
import time

import fixtures
import testtools

from tests.unit import tools


class CloseInheritedFdsTestCase(testtools.TestCase):
    """A daemon started under `flock LOCK tools/aio/up` must not keep LOCK taken."""

    @staticmethod
    def settled_fds(pid, timeout=5.0):
        """The fds of ``pid`` once they are only 0, 1 and 2, or as they are at ``timeout``.

        While setsid and then sleep are exec'd, the dynamic loader holds libc open as fd 3 for
        a moment; an fd inherited from the caller stays.
        """
        deadline = time.monotonic() + timeout
        while True:
            fds = sorted(os.listdir("/proc/%d/fd" % pid))
            if fds == ["0", "1", "2"] or time.monotonic() > deadline:
                return fds
            time.sleep(0.05)

    def test_a_daemon_started_under_flock_leaves_the_lock_free(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        lock = os.path.join(tmp, "cloud.lock")
        script = ('source "$1/tools/aio/lib/common.sh"; close_inherited_fds; '
                  'setsid sleep 60 >/dev/null 2>&1 </dev/null & echo $!')
        out = subprocess.run(
            ["flock", lock, "bash", "-c", script, "-", tools.ROOT], capture_output=True,
            text=True, check=True, env=dict(os.environ, VMCT_AIO_DIR=tmp)).stdout
        daemon = int(out.split()[-1])
        self.addCleanup(os.kill, daemon, signal.SIGTERM)
        os.kill(daemon, 0)      # still running
        self.assertEqual(["0", "1", "2"], self.settled_fds(daemon))
        free = subprocess.run(["flock", "-n", lock, "true"])
        self.assertEqual(0, free.returncode)


class PidAliveTestCase(testtools.TestCase):
    """pid_alive: a zombie (exited, not reaped) is not alive; a running process is."""

    def pid_alive(self, pid):
        script = 'source "$1/tools/aio/lib/common.sh"; pid_alive "$2"'
        return subprocess.run(["bash", "-c", script, "-", tools.ROOT, str(pid)],
                              env=dict(os.environ, VMCT_AIO_DIR="/nonexistent")).returncode

    def test_running_zombie_and_gone(self):
        child = subprocess.Popen(["sleep", "60"])
        self.addCleanup(child.wait)
        self.addCleanup(child.kill)
        self.assertEqual(0, self.pid_alive(child.pid))
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)   # exited, still a zombie
        os.kill(child.pid, 0)       # what kill -0 alone would call alive
        self.assertEqual(1, self.pid_alive(child.pid))
        child.wait()
        self.assertEqual(1, self.pid_alive(child.pid))
        self.assertEqual(1, self.pid_alive(""))


class ForgetDeadPidfilesTestCase(testtools.TestCase):
    """forget_dead_pidfiles: a state whose processes are gone is asked as a new one."""

    def test_only_the_dead_are_forgotten(self):
        state = self.useFixture(fixtures.TempDir()).path
        pids = os.path.join(state, "pids")
        os.mkdir(pids)
        alive = subprocess.Popen(["sleep", "60"])
        self.addCleanup(alive.wait)
        self.addCleanup(alive.kill)
        gone = subprocess.Popen(["true"])
        gone.wait()
        for name, pid in (("keystone", alive.pid), ("epmd", gone.pid), ("dockerd", "")):
            with open(os.path.join(pids, name + ".pid"), "w") as f:
                f.write("%s\n" % pid)
            with open(os.path.join(pids, name + ".hash"), "w") as f:
                f.write("0123\n")
        script = 'source "$1/tools/aio/lib/common.sh"; forget_dead_pidfiles'
        proc = subprocess.run(["bash", "-c", script, "-", tools.ROOT], capture_output=True,
                              text=True, env=dict(os.environ, VMCT_AIO_DIR=state))
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual(["keystone.hash", "keystone.pid"], sorted(os.listdir(pids)))
        said = proc.stdout + proc.stderr
        self.assertIn("epmd (pid %d) is not running" % gone.pid, said)
        self.assertIn("dockerd (pid none) is not running", said)


ARCHIVED = """\
.complete
+--------------------------+-------------------------+
| Table                    | Number of Rows Archived |
+--------------------------+-------------------------+
| API_DB.instance_mappings | 5                       |
| API_DB.request_specs     | 5                       |
| cell0.instances          | 1                       |
| cell1.instance_actions   | 10                      |
| cell1.instances          | 4                       |
+--------------------------+-------------------------+
Rows were archived, running purge...
"""


# a service that writes "ready PID TIME" once it handles SIGTERM, "term PID TIME" on SIGTERM
# and "exit PID TIME" a second later
SLOW_TO_STOP = """\
import os, signal, sys, time
log = sys.argv[1]
def note(what):
    with open(log, "a") as f:
        f.write("%s %d %.3f\\n" % (what, os.getpid(), time.time()))
def term(*_):
    note("term"); time.sleep(1); note("exit"); sys.exit(0)
signal.signal(signal.SIGTERM, term)
note("ready")
while True:
    time.sleep(0.1)
"""


class StartSvcRestartTestCase(testtools.TestCase):
    """start_svc restarts a service whose configuration changed.

    With SVC_RESTART_BG=1 the restarts of several services overlap (each stop waits for its
    process to exit).
    """

    def run_lib(self, tmp, script):
        subprocess.run(["bash", "-c", 'set -e; source "$1/tools/aio/lib/common.sh"; ' + script,
                        "-", tools.ROOT, tmp], check=True, capture_output=True, text=True,
                       env=dict(os.environ, VMCT_AIO_DIR=tmp))

    def events(self, log):
        with open(log) as f:
            return [(w, int(p), float(t)) for w, p, t in (line.split() for line in f)]

    def restart_two(self, background):
        tmp = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(tmp, "pids"))
        os.makedirs(os.path.join(tmp, "logs"))
        svc = os.path.join(tmp, "svc.py")
        with open(svc, "w") as f:
            f.write(SLOW_TO_STOP)
        log = os.path.join(tmp, "events")
        start = ('for n in a b; do echo "$n v$V" > "$2/$n.conf"; '
                 'start_svc "$n" "$2/$n.conf" python3 "$2/svc.py" "$2/events"; done; '
                 'wait_restarts')
        self.run_lib(tmp, "V=1; " + start)
        first = self.pids(tmp)
        self.addCleanup(lambda: [os.kill(p, signal.SIGKILL) for p in self.pids(tmp)])
        self.wait_ready(log, first)
        self.run_lib(tmp, "V=2 SVC_RESTART_BG=%d; %s" % (background, start))
        second = self.pids(tmp)
        self.assertNotEqual(sorted(first), sorted(second))
        for pid in second:
            os.kill(pid, 0)     # the new processes run
        return first, [e for e in self.events(log) if e[0] != "ready"]

    def wait_ready(self, log, pids):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if os.path.exists(log) and set(pids) <= {
                    p for w, p, _ in self.events(log) if w == "ready"}:
                return
            time.sleep(0.05)
        self.fail("the services did not start")

    def pids(self, tmp):
        return [int(open(os.path.join(tmp, "pids", n + ".pid")).read()) for n in "ab"]

    def test_in_the_background_both_stop_at_once(self):
        (a, b), events = self.restart_two(background=1)
        term = {p: t for w, p, t in events if w == "term"}
        exited = {p: t for w, p, t in events if w == "exit"}
        self.assertEqual({a, b}, set(term))
        self.assertLess(max(term.values()), min(exited.values()))   # b asked before a left

    def test_by_default_one_after_the_other(self):
        (a, b), events = self.restart_two(background=0)
        self.assertEqual(["term", "exit", "term", "exit"], [w for w, _, _ in events])
        self.assertEqual([a, a, b, b], [p for _, p, _ in events])


class ArchiveNovaDeletedRowsTestCase(testtools.TestCase):
    """archive_nova_deleted_rows (infra.sh): archive and purge on up, never stop up."""

    def archive(self, rc, output):
        state = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(state, "bin"))
        os.makedirs(os.path.join(state, "logs"))
        fake = os.path.join(state, "bin", "nova-manage")    # $S/bin comes first on PATH
        with open(fake, "w") as f:
            f.write('#!/bin/sh\necho "$@" > "%s/args"\ncat "%s/out"\nexit %d\n'
                    % (state, state, rc))
        os.chmod(fake, 0o755)
        with open(os.path.join(state, "out"), "w") as f:
            f.write(output)
        script = ('set -euo pipefail; source "$1/tools/aio/lib/common.sh"; '
                  'source "$1/tools/aio/lib/infra.sh"; archive_nova_deleted_rows; echo up-goes-on')
        done = subprocess.run(["bash", "-c", script, "-", tools.ROOT], capture_output=True,
                              text=True, env=dict(os.environ, VMCT_AIO_DIR=state))
        with open(os.path.join(state, "args")) as f:
            args = f.read().split()
        with open(os.path.join(state, "logs", "dbinit.log")) as f:
            logged = f.read()
        return done, args, logged

    def test_rows_archived_are_counted_and_purged(self):
        done, args, logged = self.archive(1, ARCHIVED)
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn("archived and purged Nova's deleted rows: 5 instances, 25 rows",
                      done.stdout)
        self.assertIn("up-goes-on", done.stdout)
        for flag in ("archive_deleted_rows", "--all-cells", "--until-complete", "--purge"):
            self.assertIn(flag, args)
        self.assertIn("cell1.instance_actions", logged)

    def test_nothing_to_archive_is_quiet(self):
        done, _, _ = self.archive(0, "Nothing was archived.\n")
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertEqual("up-goes-on\n", done.stdout)

    def test_a_failure_is_a_warning_and_up_goes_on(self):
        done, _, logged = self.archive(3, "no connection to the API database\n")
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn("warning: nova-manage db archive_deleted_rows exited 3", done.stdout)
        self.assertIn("up-goes-on", done.stdout)
        self.assertIn("no connection to the API database", logged)


SYNC_COMMANDS = ("keystone-manage", "placement-manage", "glance-manage", "nova-manage",
                 "neutron-db-manage")
# A fake *-manage: records its call, then waits (at most 5 s) until every service's first
# command has started; one run one after another times out and says so.
FAKE_MANAGE = """#!/bin/sh
S=%(state)s
echo "$0 $*" >> "$S/calls"
touch "$S/started-$(basename "$0")"
i=0
while [ "$(ls "$S" | grep -c '^started-')" -lt 5 ]; do
    i=$((i + 1)); [ $i -gt 100 ] && { echo "$(basename "$0")" >> "$S/timed-out"; exit 3; }
    sleep 0.05
done
case " $* " in *" %(fail)s "*) echo "%(fail)s failed" >&2; exit 1 ;; esac
exit 0
"""


class SyncSchemasTestCase(testtools.TestCase):
    """sync_schemas (infra.sh): the services' schemas at once, each stopping at a failure."""

    def sync(self, fail="-"):
        state = self.useFixture(fixtures.TempDir()).path
        for d in ("bin", "logs"):
            os.makedirs(os.path.join(state, d))
        for name in SYNC_COMMANDS:
            path = os.path.join(state, "bin", name)     # $S/bin comes first on PATH
            with open(path, "w") as f:
                f.write(FAKE_MANAGE % {"state": state, "fail": fail})
            os.chmod(path, 0o755)
        script = ('set -euo pipefail; source "$1/tools/aio/lib/common.sh"; '
                  'source "$1/tools/aio/lib/infra.sh"; ADMIN_PASS=x NEUTRON_CFGS=n.conf; '
                  'sync_schemas; echo synced')
        done = subprocess.run(["bash", "-c", script, "-", tools.ROOT], capture_output=True,
                              text=True, env=dict(os.environ, VMCT_AIO_DIR=state), timeout=60)
        with open(os.path.join(state, "calls")) as f:
            calls = [line.split()[3] for line in f]     # $0 --config-file FILE COMMAND
        timed_out = os.path.exists(os.path.join(state, "timed-out"))
        return done, calls, timed_out

    def test_every_service_syncs_at_once(self):
        done, calls, timed_out = self.sync()
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn("synced", done.stdout)
        self.assertFalse(timed_out, "the services' syncs ran one after another")
        # each service's last command ran (placement's and nova's last: "db sync")
        for last in ("bootstrap", "db_sync", "upgrade", "db"):
            self.assertIn(last, calls)

    def test_a_failure_stops_its_service_and_up_names_it(self):
        done, calls, _ = self.sync(fail="db_sync")    # keystone's and glance's first command
        self.assertEqual(1, done.returncode)
        self.assertNotIn("synced", done.stdout)
        self.assertIn("database init failed: keystone (", done.stderr)
        self.assertIn("glance (", done.stderr)
        self.assertNotIn("nova (", done.stderr)
        self.assertIn("dbinit-keystone.log", done.stderr)
        # set -e held in keystone's subshell: nothing after its failed db_sync ran
        self.assertNotIn("bootstrap", calls)
        self.assertIn("upgrade", calls)


class NeutronBackendTestCase(testtools.TestCase):
    """VMCT_AIO_NEUTRON (common.sh) and check_backend (install.sh): a state keeps its backend."""

    def backend(self, env=None, recorded=None, initialized=False):
        state = self.useFixture(fixtures.TempDir()).path
        os.makedirs(os.path.join(state, "data"))
        if recorded:
            with open(os.path.join(state, "data", ".neutron_backend"), "w") as f:
                f.write(recorded + "\n")
        if initialized:
            open(os.path.join(state, "data", ".db_initialized"), "w").close()
        script = ('set -euo pipefail; source "$1/tools/aio/lib/common.sh"; '
                  'source "$1/tools/aio/lib/install.sh"; check_backend; echo "$AIO_NEUTRON"')
        environ = {k: v for k, v in os.environ.items() if not k.startswith("VMCT_AIO_")}
        environ.update(env or {}, VMCT_AIO_DIR=state)
        return subprocess.run(["bash", "-c", script, "-", tools.ROOT], capture_output=True,
                              text=True, env=environ)

    def test_a_new_cloud_runs_ovn_unless_asked(self):
        self.assertEqual("ovn\n", self.backend().stdout)
        self.assertEqual("ovs\n", self.backend({"VMCT_AIO_NEUTRON": "ovs"}).stdout)

    def test_a_state_keeps_its_backend(self):
        done = self.backend(recorded="ovs", initialized=True)
        self.assertEqual(("ovs\n", 0), (done.stdout, done.returncode))
        # a state from before the backend was recorded ran ML2/OVS
        self.assertEqual("ovs\n", self.backend(initialized=True).stdout)

    def test_another_backend_than_the_states_is_refused(self):
        done = self.backend({"VMCT_AIO_NEUTRON": "ovn"}, recorded="ovs", initialized=True)
        self.assertEqual(1, done.returncode)
        self.assertIn("runs Neutron with ML2/ovs, not VMCT_AIO_NEUTRON=ovn", done.stderr)
        self.assertIn("down --wipe", done.stderr)

    def test_bad_values_name_the_setting(self):
        done = self.backend({"VMCT_AIO_NEUTRON": "linuxbridge"})
        self.assertEqual(2, done.returncode)
        self.assertIn("VMCT_AIO_NEUTRON=linuxbridge: use ovs (ML2/OVS) or ovn", done.stderr)
        done = self.backend({"VMCT_AIO_FIREWALL": "iptables_hybrid"})
        self.assertEqual(2, done.returncode)
        self.assertIn("VMCT_AIO_FIREWALL applies to ML2/OVS only", done.stderr)
        done = self.backend({"VMCT_AIO_NEUTRON": "ovs", "VMCT_AIO_FIREWALL": "iptables_hybrid"})
        self.assertEqual(("ovs\n", 0), (done.stdout, done.returncode))


# A fake rally for tools/aio/rally-env --rally: envs are files; creating one takes a moment
# and fails when it exists, as `rally env create` does for a name in use.
FAKE_RALLY = """#!/bin/bash
envs=%(state)s/envs; mkdir -p "$envs"
shift 2    # --config-file FILE
case "$1 $2" in
    "env show") [ -e "$envs/$3" ] ;;
    "env create") sleep 0.5; [ -e "$envs/$4" ] && { echo "Env $4 already exists"; exit 1; }
                  touch "$envs/$4" ;;
    "db ensure") touch %(state)s/rally/rally.sqlite ;;
    *) exit 0 ;;
esac
"""


class RallyEnvTestCase(testtools.TestCase):
    """tools/aio/rally-env: callers side by side get one env, none fails."""

    def test_two_at_once_both_succeed(self):
        state = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(state, "secrets.env"), "w") as f:
            f.write("MEMBER_PASS=m\nADMIN_PASS=a\n")
        with open(os.path.join(state, "admin-openrc"), "w") as f:
            f.write("export OS_AUTH_URL=http://127.0.0.1:5000/v3 OS_REGION_NAME=RegionOne "
                    "OS_USERNAME=admin OS_PASSWORD=a OS_PROJECT_NAME=admin\n")
        rally = os.path.join(state, "fake-rally")
        with open(rally, "w") as f:
            f.write(FAKE_RALLY % {"state": state})
        os.chmod(rally, 0o755)
        cmd = [os.path.join(tools.ROOT, "tools", "aio", "rally-env"), "--rally", rally]
        env = dict(os.environ, VMCT_AIO_DIR=state)
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        outs = [p.communicate(timeout=60) for p in procs]
        self.assertEqual([0, 0], [p.returncode for p in procs], outs)
        for out, _ in outs:
            self.assertEqual(os.path.join(state, "rally", "rally"), out.splitlines()[-1])
        self.assertEqual(["vmct-aio", "vmct-member"],
                         sorted(os.listdir(os.path.join(state, "envs"))))
