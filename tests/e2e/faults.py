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
"""The all-in-one cloud as tests/e2e/test_faults.py drives it: Rally tasks run in the
background, what the task's instances are on the host, faults, and leak checks.

Everything goes through the AIO's own tools (tools/aio/rally-env's wrapper, tools/aio/inventory,
tools/aio/compute) and the host's (docker, virsh, ip, ps); nothing here imports OpenStack.
"""

import concurrent.futures
import json
import os
import re
import runpy
import shlex
import signal
import subprocess
import tempfile
import time

from tests.e2e import test_demo_task

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
AIO_DIR = os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio")
LIBVIRT_URI = "qemu:///system"
# state dirs of tools/docker/ensure-dockerd: the AIO's (tools/aio/computes.d/20-docker.sh), then
# the script's default, where an earlier test stage (functional, nova-docker) started the engine
DOCKER_STATES = (os.path.join(AIO_DIR, "docker"),
                 os.environ.get("VMCT_DOCKER_STATE", "/var/tmp/vmct-docker"))
VALUES = runpy.run_path(os.path.join(ROOT, "tools", "vmct_values.py"))["read_values"]()
# KEY=VALUE pairs of a shell env file, as the secrets scan reads them
ENV_VALUES = runpy.run_path(os.path.join(ROOT, "tools", "secrets_scan.py"))["env_values"]
STARTED = re.compile(r"Task\b.*?([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}): started")
# host ends and container ends of instance interfaces: tap/vns + the port id's first 11 chars
INSTANCE_LINK = re.compile(r"^(?:tap|vns)([0-9a-f-]{11})$")


def run(*argv, timeout=120, env=None):
    """stdout of a command that must succeed."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise AssertionError("%s exited %d: %s" % (
            " ".join(argv), proc.returncode, (proc.stderr or proc.stdout)[-2000:]))
    return proc.stdout


def together(*calls):
    """Call each at once (a thread each); their results; the first one's exception re-raised.

    Faults on different computes share only the control plane: injected together, they cost
    the time of one.
    """
    with concurrent.futures.ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(c) for c in calls]
    return [f.result() for f in futures]


def until(predicate, timeout, what, interval=0.2):
    """The first true value of ``predicate()``; AssertionError naming ``what`` after ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("no %s after %d s" % (what, timeout))
        time.sleep(interval)


def pid_alive(pid):
    """True for a running process; false for a zombie, as tools/aio's pid_alive."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def aio_down_reason():
    """None when the all-in-one cloud runs; else what is missing, for a test's failure."""
    if not os.path.exists(os.path.join(AIO_DIR, "admin-openrc")):
        return "%s/admin-openrc is missing: tools/aio/up never ran there" % AIO_DIR
    pids = os.path.join(AIO_DIR, "pids")
    dead = []
    for name in sorted(os.listdir(pids)) if os.path.isdir(pids) else []:
        if not name.endswith(".pid"):
            continue    # NAME.hash: the configuration a service was started with
        with open(os.path.join(pids, name)) as f:
            text = f.read().strip()
        if not (text.isdigit() and pid_alive(int(text))):
            dead.append("%s (pid %s)" % (name[:-len(".pid")], text or "none"))
    if not os.path.exists(os.path.join(pids, "nova-api.pid")):
        return "no %s/nova-api.pid: the all-in-one cloud is not up" % pids
    if dead:
        return "the all-in-one cloud is not up: not running: %s" % ", ".join(dead)
    return None


def admin_env():
    """The environment with the AIO's admin credentials (its admin-openrc's exports)."""
    return dict(os.environ, OS_CLOUD="",
                **dict(ENV_VALUES(os.path.join(AIO_DIR, "admin-openrc"))))


def rally_wrapper(e2e_dir=None):
    """The AIO's Rally (tools/aio/rally-env's wrapper), as the e2e stage left it or anew."""
    saved = os.path.join(e2e_dir or "", "rally")
    if e2e_dir and os.path.exists(saved):
        with open(saved) as f:
            return f.read().strip()
    return run(os.path.join(ROOT, "tools", "aio", "rally-env"), timeout=600).split()[-1]


def compute(command, name):
    """tools/aio/compute kill|start NAME (start waits until the service reports up)."""
    return run(os.path.join(ROOT, "tools", "aio", "compute"), command, name, timeout=360)


def restart_engine():
    """Stop the dockerd our scripts started, start it again (containers stop: no live-restore).

    The engine may be the AIO's or one an earlier test stage started (tools/docker/ensure-dockerd
    left it running, the AIO found it up and used it). It starts again as tools/aio/up starts
    it: the Docker compute's prepare step (tools/aio/compute start docker; nova-compute-docker
    itself runs on), which makes it the AIO's engine, stopped by tools/aio/down.
    """
    state = engine_state()
    run(os.path.join(ROOT, "tools", "docker", "ensure-dockerd"), "--stop",
        env=dict(os.environ, VMCT_DOCKER_STATE=state))
    compute("start", "docker")


def is_dockerd(pid):
    """Whether ``pid`` is a live dockerd (a stale pidfile's pid may belong to anything now)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            # "PID (COMM) STATE ...": a zombie (Z) has exited already
            comm, state = re.match(r"\d+ \((.*)\) (\S)", f.read()).groups()
    except (OSError, AttributeError):
        return False
    return comm == "dockerd" and state != "Z"


def engine_state():
    """The ensure-dockerd state dir of the running dockerd; never another's engine."""
    for state in DOCKER_STATES:
        try:
            with open(os.path.join(state, "dockerd.pid")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if is_dockerd(pid):
            return state
    raise AssertionError("no running dockerd started by tools/docker/ensure-dockerd (pidfile "
                         "dockerd.pid in %s): not restarting another's engine"
                         % " or ".join(DOCKER_STATES))


# The workload image's command, but sshd runs under a shell that ignores SIGTERM: `docker stop`
# (the Docker driver's soft reboot) waits out its timeout, then kills, as libvirt hard-reboots
# a guest that ignores ACPI. (A namespace's init gets no signal it has no handler for anyway.)
IGNORES_SIGTERM = "/bin/sh -c " + shlex.quote(
    'trap "" TERM; mkdir -p /run/sshd; /usr/sbin/sshd -D -e & wait')


def sigterm_ignoring_image(name):
    """Glance image ``name``: the Docker workload image, ignoring SIGTERM.

    The AIO's image uploaded again (tools/aio/aio.py docker-image, as tools/aio/up uploads
    it) with :data:`IGNORES_SIGTERM` as its os_command_line.
    """
    tag = VALUES["VMCT_DOCKER_IMAGE_TAG"]
    local_id = run("docker", "image", "inspect", "-f", "{{.Id}}", tag).strip()
    with tempfile.TemporaryDirectory() as tmp:
        tar = os.path.join(tmp, "image.tar")
        run("docker", "save", "-o", tar, tag)
        run(os.path.join(AIO_DIR, "venv", "bin", "python"),
            os.path.join(ROOT, "tools", "aio", "aio.py"), "docker-image", name, local_id, tar,
            "container_format=" + VALUES["VMCT_DOCKER_CONTAINER_FORMAT"],
            "disk_format=" + VALUES["VMCT_DOCKER_DISK_FORMAT"],
            *shlex.split(VALUES["VMCT_DOCKER_IMAGE_PROPERTIES"]),
            "os_command_line=" + IGNORES_SIGTERM, env=admin_env(), timeout=300)


def delete_docker_image(name):
    """Glance image ``name`` and the Docker driver's copy of it (its [docker] image cache)."""
    image_id = openstack("image", "show", name, "-f", "value", "-c", "id").strip()
    openstack("image", "delete", image_id)
    # nova.virt.docker.images.cache_ref, [docker] image_repository as the AIO leaves it; a
    # container still using it keeps it (and the next run of this test removes it)
    subprocess.run(["docker", "rmi", "glance/%s:latest" % image_id], capture_output=True)


def openstack(*argv):
    """The AIO's openstack CLI as admin: its stdout."""
    return run(os.path.join(AIO_DIR, "venv", "bin", "openstack"), *argv, env=admin_env())


class Server:
    """A server of the admin project, outside any Rally task, through the openstack CLI.

    :param kind: a kind of task-args.yaml (image, flavor, availability zone)
    """

    def __init__(self, name, kind, network_id, security_groups=()):
        groups = [arg for group in security_groups for arg in ("--security-group", group)]
        self.id = openstack(
            "server", "create", "--image", kind["image"]["name"],
            "--flavor", kind["flavor"]["name"], "--availability-zone",
            kind["availability_zone"], "--nic", "net-id=" + network_id, *groups, "--wait",
            "-f", "value", "-c", "id", name).strip()

    def address(self):
        """The server's first fixed address."""
        addresses = json.loads(openstack("server", "show", self.id, "-f", "json",
                                         "-c", "addresses"))["addresses"]
        if isinstance(addresses, str):   # older clients: "net=10.0.0.3, 10.0.0.4"
            return addresses.split("=", 1)[1].split(",")[0].strip()
        return [a for net in sorted(addresses) for a in addresses[net]][0]

    def status(self):
        return openstack("server", "show", self.id, "-f", "value", "-c", "status").strip()

    def wait_status(self, status, timeout):
        until(lambda: self.status() == status, timeout, "server %s %s" % (self.id, status), 1)

    def start(self):
        openstack("server", "start", self.id)

    def delete(self):
        openstack("server", "delete", "--wait", self.id)

    @property
    def container(self):
        return "nova-" + self.id

    def container_running(self):
        return run("docker", "inspect", "-f", "{{.State.Running}}", self.container).strip()

    def plugged(self):
        """``(OVS interfaces with the server's vm-uuid, host links of its Neutron ports)``."""
        ovs = run("ovs-vsctl", "--timeout=5", "--bare", "--columns=name", "find", "Interface",
                  "external_ids:vm-uuid=" + self.id).split()
        ports = openstack("port", "list", "--device-id", self.id, "-f", "value",
                          "-c", "ID").split()
        return sorted(ovs), sorted(n for n in instance_links() if any(
            p.startswith(INSTANCE_LINK.match(n).group(1)) for p in ports))


class Task:
    """One Rally task started in the background; its files in ``directory``.

    :param workloads: the task's workloads (format v2)
    :param vmct: [vmct] options for this task only (a config file after the wrapper's)
    """

    def __init__(self, rally, directory, title, workloads, vmct):
        self.rally = rally
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.file = os.path.join(directory, "task.json")
        with open(self.file, "w") as f:
            json.dump({"version": 2, "title": title,
                       "subtasks": [{"title": title, "workloads": workloads}]}, f, indent=1)
        self.conf = os.path.join(directory, "vmct.conf")
        with open(self.conf, "w") as f:
            f.write("[vmct]\n" + "".join("%s = %s\n" % kv for kv in sorted(vmct.items())))
        self.log = os.path.join(directory, "task.log")
        self.proc = None
        self.uuid = None

    def start(self):
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [self.rally, "--config-file", self.conf, "task", "start", self.file],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.uuid = until(self._started, 120, "'Task ...: started' in %s" % self.log)
        return self

    def _started(self):
        with open(self.log) as f:
            found = STARTED.search(f.read())
        if found is None and self.proc.poll() is not None:
            raise AssertionError("rally task start exited %s: %s"
                                 % (self.proc.returncode, self.tail()))
        return found and found.group(1)

    def tail(self, lines=15):
        with open(self.log, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    @property
    def marker(self):
        """What Rally puts in the names of what this task creates."""
        return "rally_" + self.uuid.replace("-", "")[:8]

    def abort(self):
        return run(self.rally, "task", "abort", self.uuid, timeout=300)

    def wait(self, timeout):
        """Wait for ``rally task start`` to end; abort the task when it takes too long."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.abort()
            self.proc.wait(120)
            raise AssertionError("task %s still running after %d s: aborted; %s"
                                 % (self.uuid, timeout, self.tail()))

    def report(self):
        """``(status, workloads)`` of `rally task report --json`."""
        out = os.path.join(self.dir, "report.json")
        run(self.rally, "task", "report", self.uuid, "--json", "--out", out)
        with open(out) as f:
            [task] = json.load(f)["tasks"]
        return task["status"], test_demo_task.task_workloads(task)


def errors(workload):
    """``[(iteration, "Type: message")]`` of the workload's failed iterations, in order."""
    return [(i, "%s: %s" % tuple(it["error"][:2]))
            for i, it in enumerate(workload["data"]) if it.get("error")]


def outputs(workload, title_part):
    """The complete outputs of the workload's iterations whose title has ``title_part``."""
    return [chart for it in workload["data"] for chart in it["output"]["complete"]
            if title_part in chart["title"]]


def atomic_names(workload):
    """Names of the workload's top-level atomic actions, every iteration's."""
    return {a["name"] for it in workload["data"] for a in it["atomic_actions"]}


# -- what the task's instances are on the host ---------------------------------------------

def containers():
    """Names of the instance containers (nova-<server id>), running or not."""
    return set(run("docker", "ps", "-a", "--filter", "name=^nova-",
                   "--format", "{{.Names}}").split())


def domains():
    """UUIDs (= server ids) of the libvirt domains."""
    return set(run("virsh", "-c", LIBVIRT_URI, "list", "--all", "--uuid").split())


def processes_in(container):
    """``[(pid, command)]`` of the container's processes but its init (host PIDs)."""
    init = int(run("docker", "inspect", "-f", "{{.State.Pid}}", container))
    children, names = {}, {}
    for line in run("ps", "-e", "-o", "pid=,ppid=,comm=").splitlines():
        pid, ppid, comm = line.split(None, 2)
        children.setdefault(int(ppid), []).append(int(pid))
        names[int(pid)] = comm.strip()
    found, todo = [], list(children.get(init, []))
    while todo:
        pid = todo.pop()
        found.append((pid, names[pid]))
        todo.extend(children.get(pid, []))
    return found


def running(container, command):
    return any(name == command for _, name in processes_in(container))


def kill_ssh_sessions(container):
    """SIGKILL every sshd serving a connection in the container (its listener, PID 1, lives)."""
    pids = [pid for pid, name in processes_in(container) if name == "sshd"]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    return pids


def instance_links():
    """Names of the host's tap/vns interfaces (instance ports' veth ends, TAP devices)."""
    names = [line.split(": ")[1].split("@")[0]
             for line in run("ip", "-o", "link", "show").splitlines()]
    return {n for n in names if INSTANCE_LINK.match(n)}


# -- leaks ----------------------------------------------------------------------------------

class Leaks:
    """What a task may leave behind, by the task's name marker and the ids of its servers.

    :param links_before: :func:`instance_links` before the task (others' are not ours)
    """

    def __init__(self, marker, links_before):
        self.marker = marker
        self.links_before = links_before

    def server_ids(self, env):
        """Every server of the task, deleted ones too (admin: --deleted)."""
        ids = set()
        for deleted in ([], ["--deleted"]):
            ids.update(run(os.path.join(AIO_DIR, "venv", "bin", "openstack"), "server", "list",
                           "--all-projects", *deleted, "--name", "^" + self.marker,
                           "-f", "value", "-c", "ID", env=env).split())
        return ids

    def find(self):
        """``{resource: [leftovers]}``, only resources with leftovers."""
        env = admin_env()
        ids = self.server_ids(env)
        inv = json.loads(run(os.path.join(ROOT, "tools", "aio", "inventory"), env=env))
        live = {s["id"] for s in inv["servers"]}
        port_ids = [p["id"] for p in inv["ports"]]
        ours = lambda name: self.marker in (name or "")   # noqa: E731
        found = {
            "servers": [s["id"] for s in inv["servers"] if s["id"] in ids or ours(s["name"])],
            "ports": [p["id"] for p in inv["ports"] if p["device_id"] in ids],
            "keypairs": [k for k in inv["keypair_rows"] if ours(k)],
            "security_groups": [g["name"] for g in inv["security_groups"] if ours(g["name"])],
            "projects": [p["name"] for p in inv["projects"] if ours(p["name"])],
            "users": [u for u in inv["users"] if ours(u)],
            "containers": [c for c in inv["containers"] if c[len("nova-"):] in ids],
            "ovs_ports": [v["name"] for v in inv["vif_ports"] if v["vm_uuid"] in ids],
            "links": sorted(n for n in instance_links() - self.links_before
                            if not any(p.startswith(INSTANCE_LINK.match(n).group(1))
                                       for p in port_ids)),
            "domains": sorted(ids & domains() - live),
        }
        return {k: v for k, v in found.items() if v}

    def wait_none(self, timeout):
        """Seconds until nothing is left; AssertionError with the leftovers after ``timeout``."""
        start = time.monotonic()
        left = {}
        while time.monotonic() - start < timeout:
            left = self.find()
            if not left:
                return time.monotonic() - start
            time.sleep(2)
        raise AssertionError("left after %d s: %s" % (timeout, left))
