"""End-to-end: the Docker computes run without root; their root work goes through privsep.

tools/aio runs each Docker compute's nova-compute as the user nova (tools/aio/lib/users.sh):
in the docker group, no root, started with no sudo shim on its PATH. Plugging a port runs in
the driver's privsep daemon (nova_docker_vmct.privsep.vif_plug), which Nova's root helper
started: sudo, nova-rootwrap with the driver's filters (nova-docker/etc/nova/rootwrap.d), then
privsep-helper with that compute's config files. The demo, conformance and the fault tests
ran their Docker instances through these processes before this test looks at them.
"""

import grp
import os
import pwd

from tests.e2e import faults
from tests.e2e import test_demo_task

DOCKER_COMPUTES = ("docker", "docker2")
CONTEXT = "nova_docker_vmct.privsep.vif_plug"
# what oslo.privsep's daemon logs (into its client's log) once it dropped to its capabilities
CAPS_LINE = "privsep process running with capabilities (eff/prm/inh): "
VIF_PLUG_CAPS = "CAP_NET_ADMIN|CAP_NET_RAW|CAP_SYS_ADMIN|CAP_SYS_PTRACE"


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


def privsep_daemons(conf):
    """(pid, argv) of the vif_plug daemons started with config file ``conf``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = argv_of(int(entry))
        except OSError:
            continue
        if CONTEXT in argv and conf in argv and any(
                a.endswith("privsep-helper") for a in argv):
            found.append((int(entry), argv))
    return found


@test_demo_task.needs_e2e
class PrivilegeTest(test_demo_task.ArtifactTest):

    @classmethod
    def load_artifacts(cls):
        cls.nova = pwd.getpwnam("nova")
        cls.docker_gid = grp.getgrnam("docker").gr_gid

    def setUp(self):
        super().setUp()
        down = faults.aio_down_reason()
        if down:
            self.fail(down)

    def test_docker_computes_run_as_nova_in_the_docker_group(self):
        for name in DOCKER_COMPUTES:
            fields = status(compute_pid(name))
            self.assertEqual([self.nova.pw_uid] * 4, fields["Uid"], name)
            self.assertEqual([self.nova.pw_gid] * 4, fields["Gid"], name)
            self.assertIn(self.docker_gid, fields["Groups"], name)
            self.assertNotIn(0, fields["Groups"], name)

    def test_root_work_goes_to_the_privsep_daemon_as_root(self):
        for name in DOCKER_COMPUTES:
            conf = os.path.join(faults.AIO_DIR, "etc", "nova", "compute-%s.conf" % name)
            daemons = privsep_daemons(conf)
            # started by init_host (the driver checks it can plug before it takes instances)
            self.assertTrue(daemons, "%s: no privsep daemon with %s" % (name, conf))
            for pid, argv in daemons:
                self.assertEqual(0, status(pid)["Uid"][0], argv)
                # through nova-rootwrap's exec_dirs: the venv's privsep-helper
                self.assertIn(os.path.join(faults.AIO_DIR, "venv", "bin", "privsep-helper"),
                              argv)

    def test_the_daemon_keeps_only_its_capabilities(self):
        for name in DOCKER_COMPUTES:
            log = os.path.join(faults.AIO_DIR, "logs", "nova-compute-%s.log" % name)
            with open(log, errors="replace") as f:
                lines = [line for line in f if CAPS_LINE in line]
            self.assertTrue(lines, "%s: no privsep daemon start in %s" % (name, log))
            # the last daemon this compute started: effective and permitted, none inheritable
            self.assertEqual("%s/%s/none" % (VIF_PLUG_CAPS, VIF_PLUG_CAPS),
                             lines[-1].split(CAPS_LINE, 1)[1].strip(), name)
