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


def iteration(actions=(), charts=(), error=None, duration=None, complete=()):
    if duration is None:
        duration = sum(a["finished_at"] - a["started_at"] for a in actions)
    return {"duration": duration, "idle_duration": 0.0, "timestamp": 1.0,
            "error": list(error or []), "atomic_actions": list(actions),
            "output": {"additive": list(charts), "complete": list(complete)}}


# Instance facts as rally_vmct.task.scenarios.benchmark.report records them, per kind.
KIND_FACTS = {
    "native": {"virtualization": "none (bare metal)", "emulated": "no",
               "virtualization_evidence": "/proc/cpuinfo: no hypervisor flag",
               "nova_hypervisor_type": "", "cpu_model": "Intel(R) Xeon(R) Gold 6230",
               "vcpus": "2", "memory_kb": "24600000", "kernel": "6.1.0-18-amd64",
               "sysbench": "sysbench 1.0.20", "sysbench dialect": "1.0",
               "netperf": "Netperf version 2.7.0",
               "netperf_path": "loopback on the host (127.0.0.1)",
               "fileio_dir": "/var/tmp/vmct-fileio", "fileio_fs": "ext4",
               "fileio_device": "/dev/sda1", "fileio_direct": "on", "runs": "1"},
    "kvm": {"virtualization": "QEMU TCG (emulated)", "emulated": "yes",
            "virtualization_evidence": "dmesg: Hypervisor detected: KVM absent; "
                                       "cpuinfo model QEMU Virtual CPU",
            "nova_hypervisor_type": "QEMU", "nova_hypervisor_version": "7002000",
            "cpu_model": "QEMU Virtual CPU version 2.5+", "vcpus": "1",
            "memory_kb": "1012345", "kernel": "6.1.0-18-cloud-amd64",
            "sysbench": "sysbench 1.0.20", "sysbench dialect": "1.0",
            "netperf": "Netperf version 2.7.0",
            "netperf_path": "instance -> netserver instance, same host (Neutron)",
            "fileio_dir": "/mnt/vmct", "fileio_fs": "ext4", "fileio_device": "/dev/vdb",
            "fileio_direct": "on", "runs": "1"},
    "docker": {"virtualization": "container (docker), host: KVM guest",
               "emulated": "no", "virtualization_evidence": "/.dockerenv",
               "nova_hypervisor_type": "docker", "nova_hypervisor_version": "1",
               "cpu_model": "Intel(R) Xeon(R) Gold 6230", "vcpus": "2",
               "memory_kb": "24600000", "kernel": "6.1.0-18-amd64",
               "sysbench": "sysbench 1.0.20", "sysbench dialect": "1.0",
               "netperf": "Netperf version 2.7.0",
               "netperf_path": "instance -> netserver instance, same host (Neutron)",
               "fileio_dir": "/var/tmp/vmct-fileio", "fileio_fs": "overlay",
               "fileio_device": "overlay2", "fileio_direct": "on", "runs": "1"},
}


def facts_table(kind, facts=None, **changes):
    """The complete Table ``"<kind>: instance facts"`` of one iteration.

    ``facts`` defaults to :data:`KIND_FACTS` of the kind; ``changes`` override or
    (with None) drop keys.
    """
    facts = dict(KIND_FACTS.get(kind, {}) if facts is None else facts)
    for key, value in changes.items():
        key = key.replace("__", " ")       # sysbench__dialect -> "sysbench dialect"
        if value is None:
            facts.pop(key, None)
        else:
            facts[key] = value
    return {"title": output.facts_title(kind), "chart_plugin": "Table",
            "data": {"cols": ["fact", "value"],
                     "rows": [["where", "test"]] + [[k, v] for k, v in facts.items()]}}


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


def _benchmark_charts(kind, s, direct=False):
    """Charts shaped like rally_vmct.task.scenarios.benchmark.report's: one per unit."""
    chart = output.stats_chart
    rndrd = "sysbench fileio rndrd direct" if direct else "sysbench fileio rndrd"
    return [
        chart(kind, "sysbench cpu", "s", [("total_time", 10.0)]),
        chart(kind, "sysbench cpu", "ms", [("latency_avg", 0.8 / s), ("latency_p95", 1.0 / s)]),
        chart(kind, "sysbench cpu", "events/s", [("events_per_second", 1200.0 * s)]),
        chart(kind, "sysbench memory read", "ops/s",
              [("operations_per_second", 5.3e6 * s ** 2)]),
        chart(kind, "sysbench memory read", "MiB/s", [("mib_per_second", 5200.0 * s ** 2)]),
        chart(kind, rndrd, "reads/s", [("reads_per_second", 20480 * s ** 3)]),
        chart(kind, rndrd, "MiB/s",
              [("read_mib_per_second", 80.0 * s ** 3), ("written_mib_per_second", 0.0),
               ("mib_per_second", 80.0 * s ** 3)]),
        chart(kind, "netperf TCP_STREAM", "Mbit/s", [("throughput", 9400.0 * s ** 4)]),
        chart(kind, "netperf TCP_RR", "trans/s", [("throughput", 25000.0 * s ** 4),
                                                  ("transaction_rate", 25000.0 * s ** 4)]),
        chart(kind, "netperf TCP_RR", "us", [("latency_mean", 40.0 / s ** 4)]),
    ]


def demo_tasks(seed=7, times=12, facts=False):
    """Plausible KVM / Docker / native results: lifecycle, reboots, benchmarks.

    Named like rally-vmct's scenarios name them: vmct.build, vmct.wait_for_network,
    vmct.delete; two soft reboots per iteration, each vmct.reboot_soft or
    vmct.reboot_soft_fell_back_to_hard with children; benchmark charts per unit.
    ``facts=True``: results as the scenarios make them now: benchmark iterations
    carry facts tables (:data:`KIND_FACTS`; "kvm" is QEMU TCG, and one of its
    iterations reports other memory), fileio runs with O_DIRECT
    (``sysbench fileio rndrd direct``) and boot iterations add the ``lifecycle``
    chart with ``build_and_network``.
    """
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
                charts = [output.stats_chart(kind, "lifecycle", "s", [
                    ("build", build), ("wait_for_network", net),
                    ("build_and_network", build + net), ("delete", delete),
                    ("total", build + net + delete)])] if facts else []
                its.append(iteration([
                    action("vmct.build", build, 0.0,
                           [action("nova.boot_server", build * 0.95, 0.0)]),
                    action("vmct.wait_for_network", net, build),
                    action("vmct.delete", delete, build + net)], charts))
            workloads.append(workload("VMCT.boot_and_delete_server", kind, its,
                                      concurrency))
            its = []
            for _ in range(times // 2):
                actions = []
                paths = dict.fromkeys(output.REBOOT_PATHS, 0)
                for _ in range(2):
                    fell_back = kind == "kvm" and rng.random() < 0.3
                    path = "soft_fell_back_to_hard" if fell_back else "soft"
                    paths[path] += 1
                    seconds = (125.0 if fell_back else 9.0 if kind == "kvm" else 1.5) \
                        * rng.uniform(0.9, 1.1)
                    name = "vmct.reboot_" + path
                    actions.append(action(name, seconds, 0.0, [
                        action(name + ".active", seconds * 0.7),
                        action(name + ".reachable", seconds * 0.3)]))
                its.append(iteration(actions, [output.stats_chart(
                    kind, output.REBOOT_PATH_GROUP, "count",
                    [(p, paths[p]) for p in output.REBOOT_PATHS])]))
            workloads.append(workload("VMCT.boot_and_reboot_server", kind, its,
                                      concurrency, reboot_type="soft"))
    for kind in ("native", "kvm", "docker"):
        for concurrency in ((1,) if kind == "native" else (1, 4)):
            its = []
            for i in range(times):
                s = speed[kind] * rng.uniform(0.97, 1.03)
                complete = []
                if facts:
                    changes = ({"memory_kb": "2048000"}
                               if kind == "kvm" and i == times - 1 else {})
                    complete.append(facts_table(kind, **changes))
                its.append(iteration([action("vmct.sysbench_cpu", 10.0)],
                                     _benchmark_charts(kind, s, direct=facts),
                                     complete=complete))
            scenario = ("VMCT.native_benchmark" if kind == "native"
                        else "VMCT.boot_and_benchmark")
            w = workload(scenario, None, its, concurrency)
            w["args"]["kind"] = kind if kind == "native" else {"name": kind}
            workloads.append(w)
    return [task(*workloads, uuid="demo-task", title="demo")]


SCALE_LEVELS = (1, 8, 32, 64, 128, 256)


def scale_tasks(seed=11, levels=SCALE_LEVELS, kinds=("kvm", "docker"), minimum=6):
    """Boot and delete per kind at each concurrency level, as samples/tasks/scale.yaml.

    ``max(level, minimum)`` iterations per level, each with vmct.build and
    vmct.delete (no network wait) and the ``"<kind>: lifecycle [s]"`` chart; the
    times grow with the level and have a long tail. At the highest level one kvm
    iteration in 64 fails its build.
    """
    rng = random.Random(seed)
    boot = {"kvm": 14.0, "docker": 3.0}
    workloads = []
    for kind in kinds:
        for level in levels:
            load = 1 + 0.01 * level
            its = []
            for i in range(max(level, minimum)):
                build = boot.get(kind, 5.0) * load * rng.lognormvariate(0, 0.2)
                delete = boot.get(kind, 5.0) / 4 * load * rng.lognormvariate(0, 0.2)
                if kind == "kvm" and level == levels[-1] and i % 64 == 63:
                    its.append(iteration([action("vmct.build", build, failed=True)],
                                         error=["TimeoutException", "build", "tb"]))
                    continue
                its.append(iteration(
                    [action("vmct.build", build), action("vmct.delete", delete, build)],
                    [output.stats_chart(kind, "lifecycle", "s", [
                        ("build", build), ("delete", delete), ("total", build + delete)])]))
            workloads.append(workload("VMCT.boot_and_delete_server", kind, its, level))
    return [task(*workloads, uuid="scale-task", title="scale")]
