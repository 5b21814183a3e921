"""Smoke test of the AIO, per instance kind, timed with fast polling (0.1 s).

For each kind of task-args.yaml (kvm: the vmct QEMU guest; docker: the workload container):
boot -> ACTIVE -> SSH through the access namespace (proxy command) -> sysbench/netperf present,
sysbench cpu and fileio O_DIRECT run -> hard reboot -> SSH -> soft reboot (must stay soft: the
QEMU guest powers off on ACPI, sshd in the container stops on SIGTERM) -> SSH -> delete -> gone,
and nothing of it left (server, ports, keypair, security group: the cloud enforces security
groups, so each server gets a group of its own letting SSH and ICMP in). Each reboot must start
a new life of the guest (boot id or PID 1 changed). The fake kind (task-args.yaml's fake_kind:
Nova's fake driver, no guest to reach): boot -> ACTIVE with its ports bound to its host
(binding:vif_type neither binding_failed nor unbound) -> hard and soft reboot -> ACTIVE ->
delete -> gone, nothing left. Every kind's ports are checked bound to its host, and under
ML2/OVN claimed by that host's own chassis. The kinds run at once, each on a connection of its
own; every line starts with its kind. Exit 0 when every step passed.

Polling, SSH through the proxy command, the restart check and the workloads are rally-vmct's own
(rally_vmct.timing.waiter, .probes, .ssh; rally_vmct.workloads.runner), so tools/aio/smoke runs
this with the AIO's Rally venv, which has this checkout installed (tools/aio/rally-env), and
the admin credentials:  tools/aio/smoke [--kind NAME]...   (default: every kind)
"""

import argparse
from concurrent import futures
import io
import json
import logging
import os
import subprocess
import sys
import types
import uuid

import openstack
import paramiko
import yaml

from rally_vmct.access import probes
from rally_vmct.access import ssh as vmct_ssh
from rally_vmct.timing import waiter
from rally_vmct.workloads import guest_tools
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import runner

POLL = 0.1
BUILD_TIMEOUT = REBOOT_TIMEOUT = DELETE_TIMEOUT = 300
SSH_TIMEOUT = 120
SSH_CONNECT_TIMEOUT = 3
COMMAND_TIMEOUT = 60
ARGS = os.path.join(os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio"), "task-args.yaml")

# sysbench cpu for 2 s, then fileio as demo.yaml runs it (4K, O_DIRECT) in /var/tmp: it fails
# where /var/tmp refuses O_DIRECT (an initramfs). The runner makes and removes the directory.
FILEIO_DIR = "/var/tmp/vmct-smoke"
WORKLOADS = ({"sysbench": "cpu", "time": 2},
             {"sysbench": "fileio", "test_mode": "rndrd", "block_size": "4K",
              "extra_flags": "direct", "total_size": "8M", "time": 2})


# binding:vif_type of a port Neutron did not bind
UNBOUND = ("binding_failed", "unbound", None, "")
# the OVN southbound database when the cloud runs ML2/OVN (tools/aio/smoke sets it)
OVN_SB_DB = os.environ.get("VMCT_OVN_SB_DB")


def ovn_sbctl(*args):
    return subprocess.run(("ovn-sbctl", "--db=" + OVN_SB_DB, "--timeout=10", "--bare") + args,
                          check=True, capture_output=True, text=True).stdout.strip()


def ovn_chassis_of(port_id):
    """The hostname of the chassis that claimed the logical port ``port_id``, or "(none)"."""
    chassis = ovn_sbctl("--columns=chassis", "find", "Port_Binding",
                        "logical_port=" + port_id)
    return ovn_sbctl("get", "Chassis", chassis, "hostname") if chassis else "(none)"


def task_args():
    with open(ARGS) as f:
        return yaml.safe_load(f)


def smoke_kinds(args):
    """{kind name: {image, flavor, availability_zone, reachable}} of a task-args file.

    The instance kinds, then fake_kind (not reachable) when the file has one.
    """
    kinds = {name: dict(kind, reachable=True)
             for name, kind in (args.get("instance_kinds") or {}).items()}
    fake = args.get("fake_kind")
    if fake:
        kinds[fake["name"]] = {"image": fake["image"]["name"], "flavor": fake["flavor"]["name"],
                               "availability_zone": fake["availability_zone"],
                               "reachable": False}
    return kinds


def connect():
    """openstacksdk connection with the admin credentials of the environment."""
    return openstack.connect(
        auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
        password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
        user_domain_name="Default", project_domain_name="Default", region_name="RegionOne")


def nova_view(server):
    """An openstacksdk server under the novaclient names :class:`waiter.ServerState` reads."""
    return types.SimpleNamespace(status=server.status, fault=server.fault, **{
        "OS-EXT-STS:task_state": server.task_state, "OS-EXT-STS:vm_state": server.vm_state,
        "OS-EXT-STS:power_state": server.power_state})


def _outcome(result, metric):
    if not result.ok:
        return result.error
    return "%.2f %s" % (result.metrics[metric].value, result.metrics[metric].unit)


def workload_checks(facts, results):
    """``(ok, what)`` of the tools the instance's facts show and of the :data:`WORKLOADS`."""
    absent = guest_tools.missing(guest_tools.TOOLS, facts)
    cpu, fileio = results
    return [
        (not absent, guest_tools.missing_message(absent, "the instance", False) if absent
         else "%s installed" % ", ".join(guest_tools.TOOLS)),
        (facts["sysbench"].startswith("sysbench 1."), "sysbench --version: " + facts["sysbench"]),
        ("Netperf version 2." in facts["netperf"], "netperf -V: " + facts["netperf"]),
        (cpu.ok, "sysbench cpu 2 s: " + _outcome(cpu, "events_per_second")),
        (fileio.ok, "fileio O_DIRECT in /var/tmp (%s): %s"
         % (facts["fileio_fs"], _outcome(fileio, "read_mib_per_second"))),
    ]


def restarted(before, after):
    """Whether two :func:`vmct_ssh.incarnation` answers show a new life of the guest."""
    return None not in (before, after) and before != after


class Smoke:
    """One kind: boot, check, hard and soft reboot, delete; every step printed and kept."""

    def __init__(self, kind_name, args, conn, clock=None):
        self.args = args
        self.conn = conn
        self.compute = conn.compute
        self.clock = clock or waiter.Clock()
        self.kind_name = kind_name
        self.kind = smoke_kinds(args)[kind_name]
        self.reachable = self.kind["reachable"]
        self.name = "vmct-smoke-%s-%s" % (kind_name, uuid.uuid4().hex[:6])
        self.results = {}
        self.failures = []
        self.pkey = self.keypair = self.server = self.waiter = self.client = self.ip = None
        self.secgroup = None
        self.deleted = False

    def step(self, name, seconds, note=""):
        self.results[name] = round(seconds, 2)
        print("%-8s %-34s %7.2f s %s" % (self.kind_name, name, seconds, note), flush=True)

    def check(self, ok, what):
        print("%-8s %-34s %s" % (self.kind_name, what, "ok" if ok else "FAILED"), flush=True)
        if not ok:
            self.failures.append(what)

    def run(self):
        """0 when every step passed, else 1."""
        self.create_keypair()
        try:
            self.create_secgroup()
            self.boot()
            if self.reachable:
                self.check_workloads()
            for how in ("HARD", "SOFT"):
                self.reboot(how)
            self.delete()
        finally:
            self.clean_up()
        self.check_nothing_left()
        print(json.dumps({self.kind_name: self.results}), flush=True)
        return 1 if self.failures else 0

    def create_keypair(self):
        """A new RSA key (``self.pkey``: its private PEM) as a Nova keypair."""
        key = paramiko.RSAKey.generate(2048)
        pem = io.StringIO()
        key.write_private_key(pem)
        self.pkey = pem.getvalue()
        self.keypair = self.compute.create_keypair(
            name=self.name, public_key="ssh-rsa %s vmct-smoke" % key.get_base64())

    def create_secgroup(self):
        """A security group of its own letting SSH and ICMP in: the cloud enforces them."""
        net = self.conn.network
        self.secgroup = net.create_security_group(name=self.name)
        for rule in ({"protocol": "tcp", "port_range_min": 22, "port_range_max": 22},
                     {"protocol": "icmp"}):
            net.create_security_group_rule(security_group_id=self.secgroup.id,
                                           direction="ingress", ethertype="IPv4", **rule)

    def boot(self):
        """Create -> ACTIVE -> SSH answers (or, not reachable, ports bound), in its zone."""
        zone = self.kind["availability_zone"]
        image = self.conn.image.find_image(self.kind["image"], ignore_missing=False)
        flavor = self.compute.find_flavor(self.kind["flavor"], ignore_missing=False)
        t0 = self.clock.monotonic()
        self.server = self.compute.create_server(
            name=self.name, image_id=image.id, flavor_id=flavor.id, key_name=self.name,
            availability_zone=zone, networks=[{"uuid": self.args["network_id"]}],
            security_groups=[{"name": self.name}])
        self.waiter = waiter.ServerWaiter(
            lambda server_id: nova_view(self.compute.get_server(server_id)), self.server.id,
            pacer=waiter.Pacer(POLL, max_requests_per_second=1 / POLL, clock=self.clock))
        active = self.waiter.wait_for_status(waiter.ACTIVE, BUILD_TIMEOUT, started_at=t0)
        self.step("boot -> ACTIVE", active.at - t0)
        server = self.compute.get_server(self.server)
        self.check(server.compute_host is not None and server.availability_zone == zone,
                   "scheduled to AZ %s" % zone)
        self.check_binding(server)
        if not self.reachable:
            return
        self.ip = [a["addr"] for net in server.addresses.values() for a in net][0]
        reachable = self.wait_ssh(active.at)
        self.step("ACTIVE -> SSH ok", reachable.at - active.at, "(ip %s)" % self.ip)
        self.step("boot -> SSH ok (total)", reachable.at - t0)

    def check_binding(self, server):
        """Neutron bound every port of the server to its compute host.

        Under ML2/OVN each port must also be claimed by the host's own chassis: its
        ovn-controller saw the plugged interface on that chassis' bridge.
        """
        ports = list(self.conn.network.ports(device_id=server.id))
        vif_types = sorted({str(p.binding_vif_type) for p in ports})
        bound = [p for p in ports if p.binding_host_id == server.compute_host
                 and p.binding_vif_type not in UNBOUND]
        self.check(bool(ports) and len(bound) == len(ports),
                   "%d port(s) bound to %s (vif_type %s)"
                   % (len(ports), server.compute_host, ", ".join(vif_types) or "-"))
        if OVN_SB_DB:
            chassis = sorted({ovn_chassis_of(p.id) for p in ports})
            self.check(chassis == [server.compute_host],
                       "port(s) claimed by OVN chassis %s" % ", ".join(chassis))

    def wait_ssh(self, since):
        """Until an SSH command succeeds through the proxy command; keeps that client."""
        if self.client is not None:
            self.client.close()
        probe = probes.SSHCommandProbe(self.ip, self.args.get("ssh_user", "root"),
                                       pkey=self.pkey, proxy_command=self.args["proxy_command"],
                                       connect_timeout=SSH_CONNECT_TIMEOUT)
        try:
            reachable = waiter.wait_until(probe.check, SSH_TIMEOUT, POLL, probe.what,
                                          clock=self.clock, started_at=since)
        except waiter.WaitTimeout as e:
            probe.close()
            raise waiter.WaitTimeout("%s; failed attempts: %s" % (e, probe.summary())) from None
        self.client = probe.client
        return reachable

    def check_workloads(self):
        """The tools, sysbench cpu and fileio O_DIRECT, run by the package's runner."""
        where = "instance %s (kind %s, %s)" % (self.server.id, self.kind_name, self.ip)
        facts, _dialect, results = runner.run_plan(
            vmct_ssh.executor(self.client), plan_lib.parse_plan(list(WORKLOADS)), where,
            timeout=COMMAND_TIMEOUT, fileio_dir=FILEIO_DIR)
        for ok, what in workload_checks(facts, results):
            self.check(ok, what)

    def reboot(self, how):
        """Reboot ``how`` (HARD or SOFT): leaves ACTIVE, comes back, SSH, a new guest life.

        Where the kind is not reachable: leaves ACTIVE and comes back.
        """
        before = vmct_ssh.incarnation(self.client) if self.reachable else None
        self.waiter.pacer.before_action()
        t0 = self.clock.monotonic()
        self.compute.reboot_server(self.server, how)
        self.waiter.pacer.sent()
        left = self.waiter.wait_for(lambda s: s.status != waiter.ACTIVE or not s.settled,
                                    REBOOT_TIMEOUT, "server to leave ACTIVE", started_at=t0)
        active = self.waiter.wait_for_status(waiter.ACTIVE, REBOOT_TIMEOUT, started_at=t0)
        self.step("reboot %s -> ACTIVE" % how, active.at - t0,
                  "(left ACTIVE after %.2f s)" % (left.at - t0))
        if self.reachable:
            reachable = self.wait_ssh(active.at)
            after = vmct_ssh.incarnation(self.client)
            self.step("reboot %s -> SSH ok" % how, reachable.at - t0)
            self.check(restarted(before, after), "reboot %s restarted the guest" % how)
        if how == "SOFT":
            # a hard reboot follows only after libvirt's wait_soft_reboot_seconds or the
            # Docker driver's soft_reboot_timeout (both 20 s)
            fallback = float(self.args.get("soft_reboot_fallback_seconds", 20))
            self.check(active.at - t0 < fallback, "soft reboot stayed soft (< %g s)" % fallback)

    def delete(self):
        """Delete -> 404, and Neutron has no port of the server left."""
        if self.client is not None:
            self.client.close()
        self.waiter.pacer.before_action()
        t0 = self.clock.monotonic()
        self.compute.delete_server(self.server)
        self.waiter.pacer.sent()
        self.deleted = True
        gone = self.waiter.wait_gone(DELETE_TIMEOUT, started_at=t0)
        self.step("delete -> gone", gone.at - t0)
        ports = [p.id for p in self.conn.network.ports(device_id=self.server.id)]
        self.check(not ports, "no ports left for the server")

    def clean_up(self):
        """What a failed step left: the SSH client, the server, the keypair."""
        if self.client is not None:
            self.client.close()
        if self.server is not None and not self.deleted:
            self.compute.delete_server(self.server, ignore_missing=True)
        if self.keypair is not None:
            self.compute.delete_keypair(self.keypair, ignore_missing=True)
        if self.secgroup is not None:
            if self.server is not None and not self.deleted:
                # a group in use by a port cannot go: wait for the server's delete
                self.compute.wait_for_delete(self.server, wait=DELETE_TIMEOUT)
            self.conn.network.delete_security_group(self.secgroup, ignore_missing=True)

    def check_nothing_left(self):
        self.check(self.compute.find_keypair(self.name) is None, "keypair deleted")
        self.check(self.conn.network.find_security_group(self.name) is None,
                   "security group deleted")
        # Nova 31 still lists a server for a moment after its GET answers 404, as DELETED (its
        # vm_state set, its row not yet soft-deleted): gone, as Nova 34 lists it
        left = [s for s in self.compute.servers(all_projects=True)
                if s.name == self.name and s.status != "DELETED"]
        self.check(not left, "no server left")


def smoke_kind(kind, args):
    """One kind's smoke on a connection of its own (openstacksdk's is not thread-safe)."""
    try:
        return Smoke(kind, args, connect()).run()
    except Exception as e:  # noqa: BLE001 - report it; the other kinds go on
        print("%-8s FAILED: %s" % (kind, e), flush=True)
        return 1


def main(argv):
    args = task_args()
    kinds = list(smoke_kinds(args))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kind", action="append", choices=kinds,
                   help="instance kind to test (repeatable; default: all of %s)" % kinds)
    opts = p.parse_args(argv)
    chosen = opts.kind or kinds
    # the kinds at once (each line names its kind): they share nothing but the control
    # plane, and the smoke then lasts as long as its slowest kind (QEMU TCG), not their sum
    with futures.ThreadPoolExecutor(len(chosen)) as pool:
        codes = dict(zip(chosen, pool.map(lambda kind: smoke_kind(kind, args), chosen)))
    failed = [kind for kind in chosen if codes[kind]]
    if failed:
        print("smoke FAILED for: %s" % " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    sys.exit(main(sys.argv[1:]))
