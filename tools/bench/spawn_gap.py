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

For each concurrency level and kind, boots ``count`` servers in waves of that many at once
(image and flavor of task-args.yaml), times create request -> ACTIVE with rally-vmct's waiter
(0.1 s polls), deletes them, and for the Docker kind reads the driver's "Spawned container
... in T s: <step> <s>, ..." log line of each (nova-compute-docker.log): its steps, and T
minus their sum (what the spawn spent outside its steps; network_info, the wait for Nova's
port allocation, was such time before it became a step). Prints per level
the medians (N, min, max) of build per kind and docker minus fake, the Docker steps, and a raw
`docker run` of the workload image to sshd's first answer (host network, 127.0.0.1) for
scale.
"""

import argparse
import concurrent.futures
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

from rally_vmct.common import waiter  # noqa: E402

AIO = os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio")
POLL = 0.1
SPAWNED = re.compile(r"Spawned container nova-(?P<id>[0-9a-f-]{36}) in (?P<total>[\d.]+) s: "
                     r"(?P<steps>.*)$")


def boot_one(conn, kind, network_id, clock):
    """(server id, seconds from create request to ACTIVE); the server is deleted after."""
    compute = conn.compute
    image = conn.image.find_image(kind["image"], ignore_missing=False)
    flavor = compute.find_flavor(kind["flavor"], ignore_missing=False)
    started = clock.monotonic()
    server = compute.create_server(
        name="vmct-gap-%s" % uuid.uuid4().hex[:8], image_id=image.id, flavor_id=flavor.id,
        networks=[{"uuid": network_id}], availability_zone=kind["availability_zone"])
    try:
        found = waiter.ServerWaiter(lambda sid: smoke.nova_view(compute.get_server(sid)),
                                    server.id, pacer=waiter.Pacer(POLL, POLL, 100, clock=clock),
                                    clock=clock)
        active = found.wait_for_status(waiter.ACTIVE, 300, "server to become ACTIVE",
                                       started_at=started)
        return server.id, active.at - started
    finally:
        compute.delete_server(server.id, ignore_missing=True)
        compute.wait_for_delete(server, interval=0.5, wait=300)


def wave(conn, kind, network_id, count, concurrency):
    clock = waiter.Clock()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        return list(pool.map(lambda _: boot_one(conn, kind, network_id, clock),
                             range(count)))


def spawn_lines():
    """{server id: (total, {step: seconds})} of the Docker driver's log."""
    found = {}
    with open(os.path.join(AIO, "logs", "nova-compute-docker.log"), errors="replace") as f:
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
    listens on 127.0.0.1:``port`` only.
    """
    name = "vmct-gap-raw-%s" % uuid.uuid4().hex[:6]
    started = time.monotonic()
    subprocess.run(["docker", "run", "-d", "--rm", "--network", "host", "--name", name, image,
                    "/usr/sbin/sshd", "-D", "-p", str(port), "-o", "ListenAddress=127.0.0.1"],
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=6)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--kinds", nargs="+", default=["docker", "fake"])
    args = parser.parse_args()
    task_args = smoke.task_args()
    kinds = smoke.smoke_kinds(task_args)
    conn = smoke.connect()
    for level in args.concurrency:
        count = max(args.count, level)
        builds = {}
        for name in args.kinds:
            builds[name] = wave(conn, kinds[name], task_args["network_id"], count, level)
            print("  concurrency %d, %s: build %s" % (
                level, name, describe([took for _, took in builds[name]])), flush=True)
        if "docker" in builds and "fake" in builds:
            gap = (statistics.median(t for _, t in builds["docker"])
                   - statistics.median(t for _, t in builds["fake"]))
            print("concurrency %d: docker - fake build medians %+.2f s" % (level, gap))
        lines = spawn_lines()
        spawns = [lines[sid] for sid, _ in builds.get("docker", ()) if sid in lines]
        if spawns:
            steps = sorted({step for _, found in spawns for step in found})
            print("  docker spawn (driver log, N %d): total %s; outside the steps %s" % (
                len(spawns), describe([total for total, _ in spawns]),
                describe([total - sum(found.values()) for total, found in spawns])))
            for step in steps:
                took = [found.get(step, 0.0) for _, found in spawns]
                print("    %-18s %s" % (step, describe(took)))
    print("raw docker run to the SSH banner: %s" % describe(
        [raw_docker_run() for _ in range(3)]))


if __name__ == "__main__":
    main()
