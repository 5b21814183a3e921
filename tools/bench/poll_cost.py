"""Nova API requests per polled server per second: [vmct] poll_mode per_server vs batched.

    tools/bench/poll_cost.py [--servers 32 256] [--aio] [--times 64] [--concurrency 32]
    tools/bench/poll_cost.py --sweep 1 8 32 64 128 256 [--times 32] [--mode per_server]

Against the unit tests' fake Nova (no cloud): N ServerSessions (probe none) in threads,
all at once in real time, each boots a server (scripted: ACTIVE after 2.0 s plus a
random 0-0.2 s, so that phases do not end on the poll grid) and deletes it (gone
after 1.0 s plus as much); for each mode and N it prints the polling requests Nova
saw divided by the seconds the servers were polled, and the build and delete medians
with the median error against the script (measured minus true duration).

--aio: the same on the all-in-one cloud's fake compute kind (`fake_kind` of
$VMCT_AIO_DIR/task-args.yaml): `rally task start samples/tasks/scale.yaml` (only the
fake kind, one concurrency level) once per mode, with [vmct] poll_mode set through an
extra --config-file; nova-api's requests (GET .../servers/<id> and .../servers/detail
request-log lines of $VMCT_AIO_DIR/logs/nova-api* between the first iteration's
start and the last one's end) divided by the servers' polled seconds (from each iteration's
transitions table), next to what the harness counted itself, and the build and delete
medians of both runs.

--sweep: only the AIO, scale.yaml on the fake kind at every given level in one task
(``times`` per level, never fewer than the level); per level the iterations, errors, wall
time, build and delete p50/p95/p99, nova-api's polling requests per polled server per
second and boots per second; the harness's CPU per iteration over the whole task.

CPU s/it: the harness's own CPU time (user + system) per iteration: on the fake Nova this
process's (the sessions' threads and the fake alike: an upper bound), on the AIO `rally
task start`'s and its workers' (os rusage of the children), contexts and report included.
"""

import argparse
import datetime
import glob
import json
import os
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, ROOT)

from oslo_config import cfg  # noqa: E402

from rally_vmct import opts  # noqa: E402
from rally_vmct.timing import session as server_session  # noqa: E402
from tests.unit.timing import fakes  # noqa: E402

MODES = ("per_server", "batched")
KIND = {"name": "fake", "image": {"name": "img"}, "flavor": {"name": "flv"}}
SCRIPTED = {"vmct.build": fakes.BUILD[-1][0], "vmct.delete": fakes.DELETE[-1][0]}
POLLS = ("GET /servers/id", "GET /servers/detail")
PHASES = {"create": "vmct.build", "delete": "vmct.delete"}     # Nova action -> phase


class Run:
    """What one mode's run gave: polling requests, polled seconds, phase durations."""

    def __init__(self, mode, servers, requests, seconds, phases, harness, errors=None,
                 cpu=float("nan")):
        self.mode, self.servers = mode, servers
        self.requests, self.seconds, self.phases = requests, seconds, phases
        self.harness = harness          # what the sessions counted themselves
        self.errors = errors or {}      # phase -> measured minus true durations (the fake)
        self.cpu = cpu                  # the harness's CPU seconds (user + system)

    @property
    def cpu_per_iteration(self):
        return self.cpu / self.servers if self.servers else float("nan")

    @property
    def rate(self):
        return self.requests / self.seconds if self.seconds else float("nan")

    def median(self, phase, of=None):
        values = (self.phases if of is None else of).get(phase) or [float("nan")]
        return statistics.median(values)


def fake_run(mode, count):
    """``count`` sessions at once against one fake Nova, polling in ``mode``."""
    opts.register()
    cfg.CONF.set_override("poll_mode", mode, opts.GROUP)
    clock = fakes.RealClock()
    nova = fakes.FakeNova(clock)
    nova.jitter = lambda rng=random.Random(count): rng.uniform(0, 0.2)
    clients = fakes.FakeClients(nova)
    access = server_session.Access.of(KIND, probe="none")
    sessions, errors = [], []

    def lifecycle():
        actions = []
        session = server_session.ServerSession(
            lambda name, version=None: getattr(clients, name)(version), KIND, access,
            actions, clock=clock)
        try:
            session.boot("bench", "img", "flv", {})
            session.delete()
            session.finish()
            sessions.append((session, actions))
        except Exception as e:
            errors.append(e)
    threads = [threading.Thread(target=lifecycle) for _ in range(count)]
    cpu = cpu_seconds(resource.RUSAGE_SELF)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cpu = cpu_seconds(resource.RUSAGE_SELF) - cpu   # sessions and fake Nova alike
    cfg.CONF.clear_override("poll_mode", opts.GROUP)
    if errors:
        raise errors[0]
    phases, errors = {}, {}
    for session, actions in sessions:
        truth = {PHASES[action["action"]]: action["events"][0]["finish"] - action["start"]
                 for action in nova.servers.records[session.server.id].actions}
        for action in actions:
            took = action["finished_at"] - action["started_at"]
            phases.setdefault(action["name"], []).append(took)
            errors.setdefault(action["name"], []).append(took - truth[action["name"]])
    costs = [session.record.polling for session, _ in sessions]
    requests = len([1 for _, what in nova.requests if what in POLLS])
    return Run(mode, count, requests, sum(c.seconds for c in costs), phases,
               sum(c.requests for c in costs), errors, cpu)


def cpu_seconds(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def print_runs(title, runs):
    print(title)
    print("  %-10s %7s %9s %9s %14s %9s %10s %16s %16s" % (
        "mode", "servers", "requests", "polled s", "req/s/server", "(harness)", "CPU s/it",
        "build median", "delete median"))
    for run in runs:
        print("  %-10s %7d %9d %9.1f %14.3f %9.0f %10.3f %16s %16s" % (
            run.mode, run.servers, run.requests, run.seconds, run.rate, run.harness,
            run.cpu_per_iteration, phase_text(run, "vmct.build"), phase_text(run, "vmct.delete")))


def phase_text(run, phase):
    if phase in run.errors:
        return "%.3f (%+.3f)" % (run.median(phase), run.median(phase, run.errors))
    return "%.3f" % run.median(phase)


# -- the all-in-one cloud ---------------------------------------------------------------

AIO = os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio")
# A polling request in nova-api's request log, its time and request id:
# 2026-11-24 04:35:19.519 20769 INFO nova.api.openstack.requestlog [None req-ID ...]
#   127.0.0.1 "GET /v2.1/servers/detail?changes-since=..." status: 200 ...
POLL_REQUEST = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) .*requestlog '
                          r'\[\S+ (req-[0-9a-f-]+) '
                          r'.*"GET \S*/servers/(detail\S*|[0-9a-f-]{36})[ "?]')
SCALE_CONF = os.path.join(ROOT, "samples", "tasks", "scale.conf")
COST_TEXT = re.compile(r"([\d.e+-]+) Nova API requests for this server over ([\d.]+) s")


def aio_run(mode, rally, args_file, task_args, workdir):
    """One scale.yaml run in ``mode``; (task uuid, its JSON report).

    Rally's configuration: the AIO's, then samples/tasks/scale.conf (timeouts for the high
    levels), then ``mode`` as [vmct] poll_mode.
    """
    conf = os.path.join(workdir, "poll-%s.conf" % mode)
    with open(conf, "w") as f:
        f.write("[vmct]\npoll_mode = %s\n" % mode)
    log = os.path.join(workdir, "task-%s.log" % mode)
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN)
    with open(log, "w") as out:
        subprocess.run([rally, "--config-file", SCALE_CONF, "--config-file", conf,
                        "task", "start",
                        os.path.join(ROOT, "samples/tasks/scale.yaml"),
                        "--task-args-file", args_file, "--task-args", json.dumps(task_args)],
                       stdout=out, stderr=subprocess.STDOUT, check=False)
    cpu = cpu_seconds(resource.RUSAGE_CHILDREN) - cpu   # rally task start and its workers
    with open(log) as f:
        found = re.search(r"^Task +([0-9a-f-]{36}): started", f.read(), re.M)
    if not found:
        raise SystemExit("rally task start failed in mode %s, see %s" % (mode, log))
    report = os.path.join(workdir, "report-%s.json" % mode)
    subprocess.run([rally, "task", "report", found.group(1), "--json", "--out", report],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(report) as f:
        return found.group(1), json.load(f), cpu


def iterations(report):
    for task in report["tasks"]:
        for subtask in task["subtasks"]:
            for workload in subtask["workloads"]:
                yield from workload["data"]


def log_requests(start, end):
    """nova-api's polling requests logged in [start, end] (epoch seconds, this host's time)."""
    seen = set()
    for path in glob.glob(os.path.join(AIO, "logs", "nova-api*")):
        with open(path, errors="replace") as f:
            for line in f:
                found = POLL_REQUEST.match(line)
                if not found:
                    continue
                when = datetime.datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S.%f")
                if start <= when.timestamp() <= end:
                    seen.add(found.group(2))        # once, were it in two files
    return len(seen)


def aio_summary(mode, report, cpu):
    data = list(iterations(report))
    failed = [it for it in data if it.get("error")]
    if failed:
        print("  %s: %d of %d iterations failed, e.g. %s" % (
            mode, len(failed), len(data), failed[0]["error"][:2]))
    start = min(it["timestamp"] for it in data)
    end = max(it["timestamp"] + it["duration"] for it in data)
    phases, harness, seconds = {}, 0.0, 0.0
    for it in data:
        for action in it.get("atomic_actions", []):
            phases.setdefault(action["name"], []).append(
                action["finished_at"] - action["started_at"])
        for table in it.get("output", {}).get("complete", []):
            cost = COST_TEXT.search(table.get("description", ""))
            if cost:
                harness += float(cost.group(1))
                seconds += float(cost.group(2))
    return Run(mode, len(data), log_requests(start, end), seconds, phases, harness, cpu=cpu)


def workloads(report):
    for task in report["tasks"]:
        for subtask in task["subtasks"]:
            yield from subtask["workloads"]


def quantiles(values):
    """p50, p95, p99 (statistics.quantiles, inclusive); a single value is all three."""
    if len(values) < 2:
        return values * 3 or [float("nan")] * 3
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return [cuts[49], cuts[94], cuts[98]]


def sweep(levels, times, mode):
    """scale.yaml on the fake kind at every level in one task; per level: quantiles, cost."""
    rally = subprocess.run([os.path.join(ROOT, "tools/aio/rally-env")], check=True,
                           stdout=subprocess.PIPE, text=True).stdout.split()[-1]
    task_args = {"only": ["fake"], "concurrency": levels, "times": times}
    with tempfile.TemporaryDirectory(prefix="vmct-sweep-") as workdir:
        started = time.time()
        uuid, report, cpu = aio_run(mode, rally, os.path.join(AIO, "task-args.yaml"),
                                    task_args, workdir)
    print("scale.yaml on the AIO's fake kind, poll_mode %s, task %s, %.0f s; harness CPU "
          "(rally task start and its workers) %.1f s" % (mode, uuid, time.time() - started, cpu))
    print("  %5s %4s %6s %8s %-24s %-24s %12s %9s" % (
        "level", "N", "errors", "wall s", "build p50/p95/p99 s", "delete p50/p95/p99 s",
        "req/s/server", "boots/s"))
    total = 0
    for workload in workloads(report):
        if not workload["data"]:        # an aborted task's last level
            continue
        run = aio_summary(mode, {"tasks": [{"subtasks": [{"workloads": [workload]}]}]}, 0.0)
        data = workload["data"]
        total += len(data)
        wall = max(it["timestamp"] + it["duration"] for it in data) - min(
            it["timestamp"] for it in data)
        print("  %5d %4d %6d %8.1f %-24s %-24s %12.3f %9.2f" % (
            workload["runner"]["constant"]["concurrency"], len(data),
            sum(1 for it in data if it.get("error")), wall,
            "/".join("%.2f" % q for q in quantiles(run.phases.get("vmct.build", []))),
            "/".join("%.2f" % q for q in quantiles(run.phases.get("vmct.delete", []))),
            run.rate, len(data) / wall), flush=True)
    print("  harness CPU per iteration: %.3f s (%d iterations)" % (cpu / total, total))


def aio(times, concurrency):
    rally = subprocess.run([os.path.join(ROOT, "tools/aio/rally-env")], check=True,
                           stdout=subprocess.PIPE, text=True).stdout.split()[-1]
    args_file = os.path.join(AIO, "task-args.yaml")
    task_args = {"only": ["fake"], "concurrency": [concurrency], "times": times}
    runs = []
    with tempfile.TemporaryDirectory(prefix="vmct-poll-cost-") as workdir:
        for mode in MODES:
            started = time.time()
            uuid, report, cpu = aio_run(mode, rally, args_file, task_args, workdir)
            print("  %s: task %s, %.0f s" % (mode, uuid, time.time() - started), flush=True)
            runs.append(aio_summary(mode, report, cpu))
    print_runs("AIO fake compute (scale.yaml, concurrency %d, %d iterations; requests from "
               "nova-api's log):" % (concurrency, times), runs)
    worse = [(run.mode, phase) for phase in ("vmct.build", "vmct.delete") for run in runs[1:]
             if run.median(phase) > runs[0].median(phase) + opts.get("poll_interval")]
    if worse:
        print("  batched medians worse than per_server's by more than the poll interval: %s"
              % worse)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--aio", action="store_true", help="also on the all-in-one cloud")
    parser.add_argument("--times", type=int, default=64, help="--aio: iterations")
    parser.add_argument("--concurrency", type=int, default=32, help="--aio: level")
    parser.add_argument("--sweep", type=int, nargs="+", metavar="LEVEL",
                        help="only the AIO: scale.yaml on the fake kind at these levels in one "
                             "task (--times iterations per level, never fewer than the level; "
                             "--mode), per level p50/p95/p99 and the API requests")
    parser.add_argument("--mode", choices=MODES, default=MODES[0], help="--sweep: poll_mode")
    args = parser.parse_args()
    if args.sweep:
        return sweep(args.sweep, args.times, args.mode)
    runs = [fake_run(mode, count) for count in args.servers for mode in MODES]
    print_runs("fake Nova (real time; build %.1f s, delete %.1f s, each + 0-0.2 s; "
               "poll_interval %.2g s; in brackets the median error):"
               % (SCRIPTED["vmct.build"], SCRIPTED["vmct.delete"], opts.get("poll_interval")),
               runs)
    if args.aio:
        aio(args.times, args.concurrency)


if __name__ == "__main__":
    main()
