# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Docker minus fake: where a container's boot goes, on the all-in-one cloud.

    tools/bench/spawn-gap [--count 6] [--concurrency 1 8] [--kinds docker fake]
                          [--json FILE --label NAME] [--no-raw]

For each concurrency level and kind, boots ``count`` servers in waves of that many at once
(image and flavor of task-args.yaml), times create request -> ACTIVE with rally-vmct's waiter
(0.1 s polls; a build ends at the waiter's estimate, the middle between the last poll that saw
BUILD and the first that saw ACTIVE, as the scenarios end it) and, for kinds that can be
reached, create request -> SSH banner through the AIO's proxy command; then deletes them. The
fake kind runs the floor driver (nova-docker/nova_docker_vmct/floor.py: Nova's fake plus port
plugging and the wait for network-vif-plugged). From the computes' logs it reads each spawn's
"Spawned container ... in T s: <step> <s>, ..." (Docker) or "Spawned floor instance in T s:
..." (floor) line: the steps, and T minus their sum. Prints per level the medians (N, min,
max) of build per kind and docker minus fake, each driver's steps side by side, and a raw
`docker run` of the workload image to sshd's first answer (host network, 127.0.0.1), with
the issue's yardstick for boot -> SSH: 3 x raw docker run + the fake kind's build.
``--json FILE`` appends one line per server (label, kind, concurrency, wave, build, SSH
banner): runs of different code or settings, labelled, compared afterwards by their runs
(``tools/bench/ab_compare.py``).
"""

import argparse
import concurrent.futures
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "aio"))

import smoke  # noqa: E402  (tools/aio/smoke.py: the AIO's connection and kinds)

from rally_vmct.access import probes  # noqa: E402
from rally_vmct.timing import waiter  # noqa: E402

AIO = os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio")
POLL = 0.1
SPAWNED = re.compile(r"\[instance: (?P<id>[0-9a-f-]{36})\] Spawned (?:container nova-\S+|floor "
                     r"instance) in (?P<total>[\d.]+) s: (?P<steps>.*)$")
LOGS = {"docker": "nova-compute-docker.log", "fake": "nova-compute-fake.log"}


def ssh_security_group(conn):
    """A security group of this run letting SSH in (the cloud enforces security groups)."""
    group = conn.network.create_security_group(name="vmct-gap-%s" % uuid.uuid4().hex[:8])
    conn.network.create_security_group_rule(
        security_group_id=group.id, direction="ingress", ethertype="IPv4", protocol="tcp",
        port_range_min=22, port_range_max=22)
    return group


def boot_one(conn, kind, task_args, clock, group):
    """(server id, seconds to ACTIVE, seconds to the SSH banner or None); deleted after."""
    compute = conn.compute
    image = conn.image.find_image(kind["image"], ignore_missing=False)
    flavor = compute.find_flavor(kind["flavor"], ignore_missing=False)
    started = clock.monotonic()
    server = compute.create_server(
        name="vmct-gap-%s" % uuid.uuid4().hex[:8], image_id=image.id, flavor_id=flavor.id,
        networks=[{"uuid": task_args["network_id"]}], security_groups=[{"name": group.name}],
        availability_zone=kind["availability_zone"])
    try:
        found = waiter.ServerWaiter(lambda sid: smoke.nova_view(compute.get_server(sid)),
                                    server.id, pacer=waiter.Pacer(POLL, POLL, 100, clock=clock),
                                    clock=clock)
        active = found.wait_for_status(waiter.ACTIVE, 300, "server to become ACTIVE",
                                       started_at=started)
        ssh = None
        if kind["reachable"]:
            ssh = banner(compute.get_server(server.id), task_args, clock, started) - started
        return server.id, active.estimate - started, ssh
    finally:
        compute.delete_server(server.id, ignore_missing=True)
        compute.wait_for_delete(server, interval=0.5, wait=300)


def banner(server, task_args, clock, started):
    """When the server's SSH banner first came through the AIO's proxy command."""
    ip = next(a["addr"] for addrs in server.addresses.values() for a in addrs)
    probe = probes.ProxiedTcpProbe(task_args["proxy_command"], ip)
    try:
        return waiter.wait_until(probe.check, 300, POLL, probe.what, clock=clock,
                                 started_at=started).at
    finally:
        probe.close()


def wave(conn, kind, task_args, count, concurrency, group):
    clock = waiter.Clock()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(lambda _: boot_one(conn, kind, task_args, clock, group),
                             range(count)))


def spawn_lines(kind):
    """{server id: (total, {step: seconds})} of the kind's compute log."""
    found = {}
    with open(os.path.join(AIO, "logs", LOGS[kind]), errors="replace") as f:
        for line in f:
            m = SPAWNED.search(line)
            if m:
                steps = dict((name, float(value)) for name, value in
                             (part.split()[:2] for part in m.group("steps").split(", ")))
                found[m.group("id")] = (float(m.group("total")), steps)
    return found


def raw_docker_run(image="vmct-workload:latest", port=40122):
    """Seconds from `docker run -d` to sshd's banner in the container.

    The AIO's engine has no bridge network: the container shares the host's, its sshd
    listens on 127.0.0.1:``port`` only. Host networking needs the host's user namespace
    (``--userns host``) on an engine that remaps them: the raw container then skips the
    user namespace the driver's instances get, and sees the image's files as the remapped
    root's, so root takes back what sshd checks first (a no-op on an engine that does not remap).
    """
    name = "vmct-gap-raw-%s" % uuid.uuid4().hex[:6]
    started = time.monotonic()
    subprocess.run(["docker", "run", "-d", "--rm", "--network", "host", "--userns", "host",
                    "--name", name, image, "sh", "-c",
                    "chown 0:0 /root /root/.ssh /run/sshd && exec /usr/sbin/sshd -D -p %d "
                    "-o ListenAddress=127.0.0.1" % port],
                   check=True, stdout=subprocess.DEVNULL)
    try:
        while time.monotonic() - started < 60:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH"):
                        return time.monotonic() - started
            except OSError:
                time.sleep(0.02)
        raise SystemExit("no SSH banner from the raw container in 60 s")
    finally:
        subprocess.run(["docker", "rm", "-f", name], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)


def describe(values):
    if not values:
        return "-"
    return "%.2f s (N %d, %.2f-%.2f)" % (statistics.median(values), len(values), min(values),
                                         max(values))


def median_of(runs, index):
    values = [run[index] for run in runs if run[index] is not None]
    return statistics.median(values) if values else None


def print_steps(builds):
    """Each driver's spawn steps (its log lines), side by side."""
    spawns = {}
    for kind in builds:
        lines = spawn_lines(kind) if kind in LOGS else {}
        spawns[kind] = [lines[run[0]] for run in builds[kind] if run[0] in lines]
    spawns = {kind: found for kind, found in spawns.items() if found}
    for kind, found in spawns.items():
        print("  %s spawn (compute log, N %d): total %s; outside the steps %s" % (
            kind, len(found), describe([total for total, _ in found]),
            describe([total - sum(steps.values()) for total, steps in found])))
    names = list(dict.fromkeys(step for found in spawns.values() for _, steps in found
                               for step in steps))
    for step in names:
        print("    %-18s %s" % (step, "   ".join(
            "%s %s" % (kind, describe([steps[step] for _, steps in found if step in steps]))
            for kind, found in spawns.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--kinds", nargs="+", default=["docker", "fake"])
    parser.add_argument("--json", help="append one JSON line per server to this file")
    parser.add_argument("--label", default="", help="the label of this run's lines (--json)")
    parser.add_argument("--no-raw", action="store_true", help="no raw docker run")
    args = parser.parse_args()
    task_args = smoke.task_args()
    kinds = smoke.smoke_kinds(task_args)
    conn = smoke.connect()
    raw = [] if args.no_raw else [raw_docker_run() for _ in range(3)]
    group = ssh_security_group(conn)
    try:
        measure(conn, kinds, task_args, args, group, raw)
    finally:
        conn.network.delete_security_group(group, ignore_missing=True)
    if raw:
        print("raw docker run to the SSH banner: %s" % describe(raw))


def record(path, label, kind, level, runs):
    """One JSON line per server; a wave is ``level`` servers booted at once."""
    with open(path, "a") as f:
        for index, (server, build, ssh) in enumerate(runs):
            f.write(json.dumps({"label": label, "kind": kind, "concurrency": level,
                                "wave": index // level, "server": server, "build": build,
                                "ssh": ssh}) + "\n")


def measure(conn, kinds, task_args, args, group, raw):
    for level in args.concurrency:
        count = max(args.count, level)
        builds = {}
        for name in args.kinds:
            builds[name] = wave(conn, kinds[name], task_args, count, level, group)
            if args.json:
                record(args.json, args.label, name, level, builds[name])
            print("  concurrency %d, %s: build %s; to the SSH banner %s" % (
                level, name, describe([run[1] for run in builds[name]]),
                describe([run[2] for run in builds[name] if run[2] is not None])), flush=True)
        if "docker" in builds and "fake" in builds:
            fake = median_of(builds["fake"], 1)
            print("concurrency %d: docker - fake build medians %+.2f s" % (
                level, median_of(builds["docker"], 1) - fake))
            if raw:
                print("concurrency %d: docker to the SSH banner %.2f s; 3 x raw docker run + "
                      "fake build %.2f s" % (level, median_of(builds["docker"], 2),
                                             3 * statistics.median(raw) + fake))
        print_steps(builds)


if __name__ == "__main__":
    main()
