"""End-to-end: the Docker computes run as nova; their root work on ports goes through privsep.

tools/aio runs each Docker compute's nova-compute as the user nova (tools/aio/lib/users.sh):
not root, started with no sudo shim on its PATH, but in the docker group (the engine's socket,
root-equivalent) and in the OVSDB socket's group (os-vif). Plugging a port runs in the
driver's two privsep daemons (nova_docker_vmct.privsep.vif_plug and .netns_plug), which Nova's
root helper started: sudo, nova-rootwrap with the driver's filters
(nova-docker/etc/nova/rootwrap.d), then privsep-helper with that compute's config files. The
demo, conformance and the fault tests ran their Docker instances through these processes
before this test looks at them. OVSDB answers on its unix socket only.
"""

import grp
import os
import pwd

from tests.e2e import faults
from tests.e2e import test_demo_task

DOCKER_COMPUTES = ("docker", "docker2")
# each privsep context of a Docker compute and the capabilities its daemon keeps (effective,
# permitted): the driver's two, and os-vif's, started at the first plug (its declared
# CAP_NET_ADMIN: nova.conf sets it, os-vif's own default is its test context's, which shares
# the config section and adds CAP_DAC_OVERRIDE; tools/aio/lib/configs.sh)
CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_ADMIN = 12, 13, 21
CONTEXTS = {"nova_docker_vmct.privsep.vif_plug": {CAP_NET_ADMIN},
            "nova_docker_vmct.privsep.netns_plug": {CAP_NET_ADMIN, CAP_NET_RAW, CAP_SYS_ADMIN},
            "vif_plug_ovs.privsep.vif_plug": {CAP_NET_ADMIN}}
# the driver's own: started by init_host, so running whatever the demo plugged
DRIVER_CONTEXTS = tuple(CONTEXTS)[:2]


def capabilities(pid):
    """{'CapEff': {bits}, ...} of /proc/PID/status."""
    found = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.startswith("Cap"):
                mask = int(value, 16)
                found[key] = {bit for bit in range(64) if mask >> bit & 1}
    return found


def status(pid):
    """{'Uid': [...], 'Gid': [...], 'Groups': [...]} of /proc/PID/status, as ints."""
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Uid", "Gid", "Groups"):
                fields[key] = [int(v) for v in value.split()]
    return fields


def argv_of(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return [a.decode() for a in f.read().split(b"\0") if a]


def compute_pid(name):
    with open(os.path.join(faults.AIO_DIR, "pids", "nova-compute-%s.pid" % name)) as f:
        return int(f.read().strip())


def privsep_daemons(conf, context):
    """(pid, argv) of the daemons of ``context`` started with config file ``conf``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = argv_of(int(entry))
        except OSError:
            continue
        if context in argv and conf in argv and any(
                a.endswith("privsep-helper") for a in argv):
            found.append((int(entry), argv))
    return found


@test_demo_task.needs_e2e
class PrivilegeTest(test_demo_task.ArtifactTest):

    @classmethod
    def load_artifacts(cls):
        cls.nova = pwd.getpwnam("nova")
        cls.docker_gid = grp.getgrnam("docker").gr_gid
        cls.ovsdb_gid = grp.getgrnam(faults.VALUES["VMCT_OVSDB_GROUP"]).gr_gid

    def setUp(self):
        super().setUp()
        down = faults.aio_down_reason()
        if down:
            self.fail(down)

    def test_docker_computes_run_as_nova_in_the_docker_and_ovsdb_groups(self):
        for name in DOCKER_COMPUTES:
            fields = status(compute_pid(name))
            self.assertEqual([self.nova.pw_uid] * 4, fields["Uid"], name)
            self.assertEqual([self.nova.pw_gid] * 4, fields["Gid"], name)
            self.assertIn(self.docker_gid, fields["Groups"], name)
            self.assertIn(self.ovsdb_gid, fields["Groups"], name)
            self.assertNotIn(0, fields["Groups"], name)

    def test_root_work_goes_to_the_privsep_daemons_as_root(self):
        for name in DOCKER_COMPUTES:
            conf = os.path.join(faults.AIO_DIR, "etc", "nova", "compute-%s.conf" % name)
            for context in DRIVER_CONTEXTS:
                daemons = privsep_daemons(conf, context)
                # started by init_host (the driver checks it can plug before it takes
                # instances)
                self.assertTrue(daemons, "%s: no %s daemon with %s" % (name, context, conf))
                for pid, argv in daemons:
                    self.assertEqual(0, status(pid)["Uid"][0], argv)
                    # through nova-rootwrap's exec_dirs: the venv's privsep-helper
                    self.assertIn(os.path.join(faults.AIO_DIR, "venv", "bin",
                                               "privsep-helper"), argv)

    def test_each_daemon_keeps_only_its_capabilities(self):
        for name in DOCKER_COMPUTES:
            conf = os.path.join(faults.AIO_DIR, "etc", "nova", "compute-%s.conf" % name)
            for context, caps in CONTEXTS.items():
                for pid, argv in privsep_daemons(conf, context):
                    # effective and permitted, none inheritable or ambient
                    found = capabilities(pid)
                    self.assertEqual({"CapEff": caps, "CapPrm": caps, "CapInh": set()},
                                     {k: found[k] for k in ("CapEff", "CapPrm", "CapInh")},
                                     (name, context, pid))

    def test_ovsdb_answers_on_its_unix_socket_only(self):
        remotes = faults.run("ovs-appctl", "-t", self.ovsdb_ctl(),
                             "ovsdb-server/list-remotes").split()
        self.assertEqual([], [r for r in remotes if not r.startswith(("punix:", "db:"))])
        self.assertEqual("", faults.run("ovs-vsctl", "get-manager").strip())
        sock = os.stat(faults.VALUES["VMCT_OVSDB_SOCKET"])
        self.assertEqual((0, self.ovsdb_gid, 0o770),
                         (sock.st_uid, sock.st_gid, sock.st_mode & 0o777))

    @staticmethod
    def ovsdb_ctl():
        with open(os.path.join(faults.AIO_DIR, "pids", "ovsdb-server.pid")) as f:
            pid = f.read().strip()
        return os.path.join(os.path.dirname(faults.VALUES["VMCT_OVSDB_SOCKET"]),
                            "ovsdb-server.%s.ctl" % pid)
