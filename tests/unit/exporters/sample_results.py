"""Builders of Rally task result dicts (the shape ``api.task.get(detailed=True)``
hands exporters) for the comparison exporter's tests."""

import random

from rally_vmct.task import output


def action(name, duration, start=0.0, children=(), failed=False):
    """One atomic action entry as Rally stores it."""
    entry = {"name": name, "started_at": start, "finished_at": start + duration,
             "children": list(children)}
    if failed:
        entry["failed"] = True
    return entry


def iteration(actions=(), charts=(), error=None, duration=None):
    if duration is None:
        duration = sum(a["finished_at"] - a["started_at"] for a in actions)
    return {"duration": duration, "idle_duration": 0.0, "timestamp": 1.0,
            "error": list(error or []), "atomic_actions": list(actions),
            "output": {"additive": list(charts), "complete": []}}


def workload(scenario, kind, iterations, concurrency=None, runner_type="constant",
             **args):
    if kind is not None:
        args["kind"] = {"name": kind, "image": "img-%s" % kind}
    runner = {"times": len(iterations)}
    if concurrency is not None:
        runner["concurrency"] = concurrency
    return {"name": scenario, "args": args, "runner": runner,
            "runner_type": runner_type, "data": list(iterations)}


def task(*workloads, uuid="task-1", title="t"):
    return {"uuid": uuid, "title": title,
            "subtasks": [{"title": "s", "workloads": list(workloads)}]}


def demo_tasks(seed=7, times=12):
    """Plausible KVM / Docker / native results: lifecycle, reboots, benchmarks."""
    rng = random.Random(seed)
    speed = {"native": 1.0, "kvm": 0.93, "docker": 0.99}
    boot = {"kvm": 14.0, "docker": 3.0}
    workloads = []
    for kind in ("kvm", "docker"):
        for concurrency in (1, 4):
            load = 1 + 0.15 * (concurrency - 1)
            its = []
            for _ in range(times):
                build = boot[kind] * load * rng.uniform(0.9, 1.1)
                net = (6.0 if kind == "kvm" else 0.8) * rng.uniform(0.8, 1.2)
                delete = (3.0 if kind == "kvm" else 1.2) * load * rng.uniform(0.9, 1.1)
                its.append(iteration([
                    action("vmct.build", build, 0.0,
                           [action("nova.boot_server", build * 0.95, 0.0)]),
                    action("vmct.wait_for_network", net, build),
                    action("vmct.delete", delete, build + net)]))
            workloads.append(workload("VMCT.boot_and_delete_server", kind, its,
                                      concurrency))
            its = []
            for _ in range(times // 2):
                fell_back = kind == "kvm" and rng.random() < 0.3
                reboot = (125.0 if fell_back else 9.0 if kind == "kvm" else 1.5) \
                    * rng.uniform(0.9, 1.1)
                its.append(iteration(
                    [action("vmct.reboot", reboot)],
                    [output.stats_chart(kind, output.REBOOT_PATH_GROUP, "count", [
                        ("soft", 0 if fell_back else 1),
                        ("soft_fell_back_to_hard", 1 if fell_back else 0),
                        ("hard", 0)])]))
            workloads.append(workload("VMCT.boot_and_reboot_server", kind, its,
                                      concurrency, reboot_type="soft"))
    for kind in ("native", "kvm", "docker"):
        for concurrency in ((1,) if kind == "native" else (1, 4)):
            its = []
            for _ in range(times):
                s = speed[kind] * rng.uniform(0.97, 1.03)
                its.append(iteration(
                    [action("vmct.sysbench_cpu", 10.0)],
                    [output.stats_chart(kind, "sysbench cpu", "events/s",
                                        [("events_per_second", 1200.0 * s)]),
                     output.stats_chart(kind, "sysbench memory", "MiB/s",
                                        [("transferred", 5200.0 * s ** 2)]),
                     output.stats_chart(kind, "sysbench fileio rndrd", "MiB/s",
                                        [("read", 80.0 * s ** 3)]),
                     output.stats_chart(kind, "netperf TCP_STREAM", "Mbit/s",
                                        [("throughput", 9400.0 * s ** 4)]),
                     output.stats_chart(kind, "netperf TCP_RR", "us",
                                        [("latency_mean", 40.0 / s ** 4)])]))
            scenario = ("VMCT.native_benchmark" if kind == "native"
                        else "VMCT.boot_and_benchmark")
            workloads.append(workload(scenario, None if kind == "native" else kind, its,
                                      concurrency))
    return [task(*workloads, uuid="demo-task", title="demo")]
