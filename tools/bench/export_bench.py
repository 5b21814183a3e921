"""Benchmark of the vmct-comparison exporter on synthetic task results.

Builds N iterations (default 100,000) spread over kinds x concurrency levels x
scenarios, shaped like rally-vmct's scenarios report them (nested vmct.* atomic
actions, per-unit StatsTable charts, reboot path charts, a few failures), then
times the grouping/statistics, each rendering and the whole exporter plugin.
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from rally.task import exporter  # noqa: E402

from rally_vmct.task.exporters.comparison import plugin  # noqa: E402
from rally_vmct.task.exporters.comparison import analyse  # noqa: E402
from rally_vmct.task.exporters.comparison import render  # noqa: E402
from rally_vmct.task import output  # noqa: E402

KINDS = {"kvm": (14.0, 6.0, 3.0, 0.93), "docker": (3.0, 0.8, 1.2, 0.99),
         "native": (None, None, None, 1.0)}
CONCURRENCY = (1, 2, 4, 8, 16, 32)


def _action(name, start, seconds, children=()):
    return {"name": name, "started_at": start, "finished_at": start + seconds,
            "children": list(children)}


def _lifecycle(rng, kind, c):
    build, net, delete, _ = KINDS[kind]
    load = 1 + 0.1 * c
    b = build * load * rng.uniform(0.9, 1.1)
    n = net * rng.uniform(0.8, 1.2)
    d = delete * load * rng.uniform(0.9, 1.1)
    actions = [_action("vmct.build", 0.0, b, [_action("nova.boot_server", 0.0, b * 0.9)]),
               _action("vmct.wait_for_network", b, n), _action("vmct.delete", b + n, d)]
    charts = [output.stats_chart(kind, "lifecycle", "s", [
        ("build", b), ("wait_for_network", n), ("delete", d), ("total", b + n + d)])]
    return actions, charts, b + n + d


def _reboot(rng, kind, c):
    fell = kind == "kvm" and rng.random() < 0.1
    path = "soft_fell_back_to_hard" if fell else "soft"
    seconds = (125.0 if fell else KINDS[kind][0] * 0.6) * rng.uniform(0.9, 1.1)
    name = "vmct.reboot_" + path
    actions = [_action(name, 0.0, seconds, [
        _action(name + ".left_active", 0.0, seconds * 0.2),
        _action(name + ".active", 0.0, seconds * 0.6),
        _action(name + ".reachable", 0.0, seconds * 0.2)])]
    charts = [output.stats_chart(kind, output.REBOOT_PATH_GROUP, "count", [
        ("soft", int(not fell)), ("soft_fell_back_to_hard", int(fell)), ("hard", 0)])]
    return actions, charts, seconds


def _benchmark(rng, kind, c):
    s = KINDS[kind][3] * rng.uniform(0.97, 1.03)
    chart = output.stats_chart
    charts = [
        chart(kind, "sysbench cpu", "s", [("total_time", 10.0)]),
        chart(kind, "sysbench cpu", "ms", [("latency_avg", 0.8 / s), ("latency_p95", 1.0 / s)]),
        chart(kind, "sysbench cpu", "events/s", [("events_per_second", 1200.0 * s)]),
        chart(kind, "sysbench memory read", "MiB/s", [("mib_per_second", 5200.0 * s)]),
        chart(kind, "sysbench fileio rndrd", "MiB/s", [("mib_per_second", 80.0 * s)]),
        chart(kind, "netperf TCP_STREAM", "Mbit/s", [("throughput", 9400.0 * s)]),
        chart(kind, "netperf TCP_RR", "trans/s", [("throughput", 25000.0 * s)]),
        chart(kind, "netperf TCP_RR", "us", [("latency_mean", 40.0 / s)]),
    ]
    actions = [_action("vmct.sysbench_cpu", 0.0, 10.0), _action("vmct.netperf", 10.0, 20.0)]
    return actions, charts, 30.0


def build_tasks(iterations, seed=1):
    rng = random.Random(seed)
    plan = []
    for kind in KINDS:
        for c in CONCURRENCY:
            if kind == "native":
                if c == 1:
                    plan.append(("VMCT.native_benchmark", kind, c, _benchmark))
                continue
            plan.append(("VMCT.boot_and_delete_server", kind, c, _lifecycle))
            plan.append(("VMCT.boot_and_reboot_server", kind, c, _reboot))
            plan.append(("VMCT.boot_and_benchmark", kind, c, _benchmark))
    per = iterations // len(plan)
    workloads = []
    for index, (scenario, kind, c, make) in enumerate(plan):
        count = per + (1 if index < iterations - per * len(plan) else 0)
        data = []
        for _ in range(count):
            actions, charts, duration = make(rng, kind, c)
            error = ["Timeout", "synthetic failure", "tb"] if rng.random() < 0.01 else []
            data.append({"duration": duration, "idle_duration": 0.0, "timestamp": 0.0,
                         "error": error, "atomic_actions": actions,
                         "output": {"additive": charts, "complete": []}})
        args = {"kind": kind if kind == "native" else {"name": kind}}
        if "reboot" in scenario:
            args["reboot_type"] = "soft"
        workloads.append({"name": scenario, "args": args, "runner_type": "constant",
                          "runner": {"times": count, "concurrency": c}, "data": data})
    return [{"uuid": "bench-task", "title": "synthetic", "subtasks": [
        {"title": "bench", "workloads": workloads}]}]


def _timed(label, func, *args):
    start = time.perf_counter()
    result = func(*args)
    print("%-44s %7.3f s" % (label, time.perf_counter() - start))
    return result


def _cli(tasks, out):
    """rally task export on a Rally JSON report of the same results."""
    from rally.plugins.task.exporters import json_exporter
    report_file = os.path.join(out, "bench-results.json")
    for workload in tasks[0]["subtasks"][0]["workloads"]:
        workload.update({
            "uuid": "w", "description": "", "hooks": [], "min_duration": 0,
            "max_duration": 0, "start_time": 0, "load_duration": 0, "full_duration": 0,
            "statistics": {}, "failed_iteration_count": 0, "created_at": "",
            "updated_at": "", "contexts": {}, "contexts_results": [], "position": 0,
            "pass_sla": True, "sla_results": {"sla": []}, "sla": {},
            "total_iteration_count": len(workload["data"])})
    tasks[0].update({"description": "", "status": "finished", "tags": [],
                     "created_at": "", "updated_at": "", "pass_sla": True})
    tasks[0]["subtasks"][0].update({"uuid": "s", "description": "", "status": "finished",
                                    "created_at": "", "updated_at": "", "sla": {}})
    report = json_exporter.JSONExporter(tasks, report_file).generate()
    with open(report_file, "w") as f:
        f.write(report["files"][report_file])
    rally = os.path.join(os.path.dirname(sys.executable), "rally")
    conf = os.path.join(out, "rally.conf")
    with open(conf, "w") as f:
        f.write("[database]\nconnection = sqlite:///%s/rally.sqlite\n" % out)
    env = dict(os.environ, HOME=out)
    subprocess.run([rally, "--config-file", conf, "db", "ensure"], env=env, check=True,
                   capture_output=True)
    start = time.perf_counter()
    subprocess.run([rally, "--config-file", conf, "task", "export", report_file,
                    "--type", "vmct-comparison", "--to", os.path.join(out, "cli.html")],
                   env=env, check=True, capture_output=True)
    print("%-44s %7.3f s" % ("rally task export FILE (CLI, incl. load)",
                             time.perf_counter() - start))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100000)
    parser.add_argument("--out", help="directory for the exported files (temp dir)")
    parser.add_argument("--cli", action="store_true",
                        help="also time `rally task export` of a saved JSON report")
    args = parser.parse_args()
    if args.iterations < 1:
        parser.error("--iterations must be >= 1")
    out = args.out or tempfile.mkdtemp(prefix="vmct-bench-")
    os.makedirs(out, exist_ok=True)

    start = time.perf_counter()
    tasks = build_tasks(args.iterations)
    count = sum(len(w["data"]) for w in tasks[0]["subtasks"][0]["workloads"])
    print("built %d synthetic iterations in %.1f s" % (count, time.perf_counter() - start))

    data = _timed("group + statistics (compare)", analyse.compare, tasks)
    _timed("render HTML", render.render_html, data)
    _timed("render CSV", render.render_csv, data)
    _timed("render JSON", render.render_json, data)
    dest = os.path.join(out, "cmp.html")
    start = time.perf_counter()
    report = exporter.TaskExporter.make(plugin.ComparisonExporter, tasks, dest)
    for path, text in report["files"].items():
        with open(path, "w") as f:
            f.write(text)
    total = time.perf_counter() - start
    print("%-44s %7.3f s" % ("vmct-comparison export, files written", total))
    print("groups: %d, metrics: %d; files in %s" % (len(data["groups"]),
                                                    len(data["metrics"]), out))
    print("RESULT export of %d iterations: %.2f s (goal < 5 s)" % (count, total))
    if args.cli:
        _cli(tasks, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
