"""Smoke test of the AIO, per instance kind, timed with fast polling (0.1 s).

For each kind of task-args.yaml (kvm: the vmct QEMU guest; docker: the workload container):
boot -> ACTIVE -> SSH through the access namespace (proxy command) -> sysbench/netperf present
-> hard reboot -> SSH -> soft reboot (must stay soft: the QEMU guest powers off on ACPI, sshd in
the container stops on SIGTERM) -> SSH -> delete -> gone, and nothing of it left (server, ports,
keypair). Exit 0 when every step passed. Run by tools/aio/smoke (AIO venv python, admin
credentials):  tools/aio/smoke [--kind NAME]...   (default: every kind)
"""

import argparse
import io
import json
import logging
import os
import sys
import time
import uuid

import openstack
import paramiko
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

POLL = 0.1
ARGS = os.path.join(os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio"), "task-args.yaml")


# sysbench fileio as demo.yaml runs it (4K, O_DIRECT) in /var/tmp: the file system type, then
# the read throughput; fails where /var/tmp refuses O_DIRECT (an initramfs)
FILEIO_DIRECT = ("mkdir -p /var/tmp/vmct-smoke && cd /var/tmp/vmct-smoke && "
                 "stat -f -c %T . && o='--file-total-size=8M --file-block-size=4096 "
                 "--file-extra-flags=direct --file-test-mode=rndrd' && "
                 "sysbench fileio $o prepare >/dev/null && "
                 "sysbench fileio $o --time=2 run | grep 'read, MiB/s'; rc=$?; "
                 "sysbench fileio $o cleanup >/dev/null; cd / && rmdir /var/tmp/vmct-smoke; "
                 "exit $rc")


def task_args():
    with open(ARGS) as f:
        return yaml.safe_load(f)


def pid1_age(out):
    """Seconds since PID 1 started, from `cat /proc/uptime /proc/1/stat`.

    The uptime of a VM, the age of a container (whose /proc/uptime is the host's).
    """
    uptime, stat = out.split("\n", 1)
    start_ticks = int(stat.rsplit(")", 1)[1].split()[19])
    return float(uptime.split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK")


class Smoke:
    def __init__(self, kind_name):
        self.conn = openstack.connect(
            auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
            password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
            user_domain_name="Default", project_domain_name="Default", region_name="RegionOne")
        self.args = task_args()
        self.kind_name = kind_name
        self.kind = self.args["instance_kinds"][kind_name]
        self.results = {}
        self.failures = []

    def step(self, name, seconds, note=""):
        self.results[name] = round(seconds, 2)
        print("%-8s %-34s %7.2f s %s" % (self.kind_name, name, seconds, note), flush=True)

    def check(self, ok, what):
        print("%-8s %-34s %s" % (self.kind_name, what, "ok" if ok else "FAILED"), flush=True)
        if not ok:
            self.failures.append(what)

    def wait_status(self, server, want, timeout=300, leave=None):
        """Poll until status == want (and no task_state); if leave, first until status != leave."""
        t0 = time.monotonic()
        left = None
        while time.monotonic() - t0 < timeout:
            s = self.conn.compute.get_server(server)
            if s.status == "ERROR":
                raise RuntimeError("server ERROR: %s" % s.fault)
            if leave and left is None and (s.status != leave or s.task_state):
                left = time.monotonic() - t0
            if s.status == want and not s.task_state and (not leave or left is not None):
                return time.monotonic() - t0, left
            time.sleep(POLL)
        raise RuntimeError("timeout waiting for %s" % want)

    def ssh(self, ip, cmd, timeout=5):
        command = self.args["proxy_command"].replace("%h", ip).replace("%p", "22")
        proxy = paramiko.ProxyCommand(command)
        c = paramiko.SSHClient()
        c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        try:
            c.connect(ip, username=self.args.get("ssh_user", "root"), pkey=self.pkey, sock=proxy,
                      timeout=timeout, banner_timeout=timeout, auth_timeout=timeout,
                      look_for_keys=False, allow_agent=False)
            _, out, err = c.exec_command("LC_ALL=C " + cmd, timeout=30)
            rc = out.channel.recv_exit_status()
            return rc, out.read().decode(), err.read().decode()
        finally:
            c.close()
            proxy.close()

    def wait_ssh(self, ip, timeout=120):
        t0 = time.monotonic()
        last = None
        while time.monotonic() - t0 < timeout:
            try:
                rc, out, _ = self.ssh(ip, "cat /proc/uptime /proc/1/stat", timeout=3)
                if rc == 0:
                    return time.monotonic() - t0, pid1_age(out)
            except Exception as e:  # noqa: BLE001 - not reachable yet
                last = e
            time.sleep(POLL)
        raise RuntimeError("no SSH to %s after %d s: %r" % (ip, timeout, last))

    def console(self, server):
        return self.conn.compute.get_server_console_output(server).get("output", "")

    def run(self):
        c = self.conn.compute
        name = "vmct-smoke-%s-%s" % (self.kind_name, uuid.uuid4().hex[:6])
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
        self.pkey = paramiko.RSAKey.from_private_key(io.StringIO(pem))
        pub = "ssh-rsa " + self.pkey.get_base64() + " vmct-smoke"
        kp = c.create_keypair(name=name, public_key=pub)
        kind = self.kind
        image = self.conn.image.find_image(kind["image"])
        flavor = c.find_flavor(kind["flavor"])
        server = None
        try:
            t0 = time.monotonic()
            server = c.create_server(name=name, image_id=image.id, flavor_id=flavor.id,
                                     key_name=name, availability_zone=kind["availability_zone"],
                                     networks=[{"uuid": self.args["network_id"]}])
            self.step("boot -> ACTIVE", self.wait_status(server, "ACTIVE")[0])
            server = c.get_server(server)
            ip = [a["addr"] for net in server.addresses.values() for a in net][0]
            t_ssh, uptime = self.wait_ssh(ip)
            self.step("ACTIVE -> SSH ok", t_ssh, "(PID 1 age %.1f s, ip %s)" % (uptime, ip))
            self.step("boot -> SSH ok (total)", time.monotonic() - t0)
            self.check(c.get_server(server).compute_host is not None
                       and server.availability_zone == kind["availability_zone"],
                       "scheduled to AZ %s" % kind["availability_zone"])
            rc, out, _ = self.ssh(ip, "sysbench --version")
            self.check(rc == 0 and out.startswith("sysbench 1."),
                       "sysbench --version: " + out.strip())
            rc, out, _ = self.ssh(ip, "netperf -V")
            self.check(rc == 0 and "Netperf version 2." in out, "netperf -V: " + out.strip())
            rc, out, _ = self.ssh(ip, "sysbench cpu --time=2 run | grep 'events per second'")
            self.check(rc == 0, "sysbench cpu 2 s: " + out.strip())
            rc, out, _ = self.ssh(ip, FILEIO_DIRECT, timeout=60)
            self.check(rc == 0 and "read, MiB/s" in out,
                       "fileio O_DIRECT in /var/tmp (%s): %s" % (
                           " ".join(out.split()[:1]) or "?",
                           " ".join(out.strip().splitlines()[-1:]) or "failed"))
            for kind_ in ("HARD", "SOFT"):
                t0 = time.monotonic()
                c.reboot_server(server, kind_)
                t_active, t_left = self.wait_status(server, "ACTIVE", leave="ACTIVE")
                t_ssh, uptime = self.wait_ssh(ip)
                self.step("reboot %s -> ACTIVE" % kind_, t_active,
                          "(left ACTIVE after %.2f s)" % t_left)
                self.step("reboot %s -> SSH ok" % kind_, time.monotonic() - t0,
                          "(PID 1 age %.1f s)" % uptime)
                self.check(uptime < time.monotonic() - t0 + 1,
                           "reboot %s restarted the guest" % kind_)
                if kind_ == "SOFT":
                    # a hard reboot follows only after libvirt's wait_soft_reboot_seconds or
                    # the Docker driver's soft_reboot_timeout (both 20 s)
                    fallback = float(self.args.get("soft_reboot_fallback_seconds", 20))
                    self.check(t_active < fallback,
                               "soft reboot stayed soft (< %g s)" % fallback)
            t0 = time.monotonic()
            c.delete_server(server)
            while c.find_server(server.id):
                time.sleep(POLL)
            self.step("delete -> gone", time.monotonic() - t0)
            ports = [p.id for p in self.conn.network.ports(device_id=server.id)]
            self.check(not ports, "no ports left for the server")
            server = None
        finally:
            if server is not None:
                c.delete_server(server, ignore_missing=True)
            c.delete_keypair(kp, ignore_missing=True)
        self.check(c.find_keypair(name) is None, "keypair deleted")
        left = [s for s in c.servers(all_projects=True) if s.name == name]
        self.check(not left, "no server left")
        print(json.dumps({self.kind_name: self.results}), flush=True)
        return 1 if self.failures else 0


def main(argv):
    kinds = list(task_args()["instance_kinds"])
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--kind", action="append", choices=kinds,
                   help="instance kind to test (repeatable; default: all of %s)" % kinds)
    opts = p.parse_args(argv)
    failed = []
    for kind in opts.kind or kinds:
        try:
            rc = Smoke(kind).run()
        except Exception as e:  # noqa: BLE001 - report, go on with the next kind
            print("%-8s FAILED: %s" % (kind, e), flush=True)
            rc = 1
        if rc:
            failed.append(kind)
    if failed:
        print("smoke FAILED for: %s" % " ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    sys.exit(main(sys.argv[1:]))
