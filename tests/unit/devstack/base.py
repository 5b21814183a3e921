"""Source devstack/plugin.sh in a real bash with devstack's functions stubbed."""

import os
import shlex
import subprocess
import sys
import tempfile

import fixtures
import testtools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
DEVSTACK = os.path.join(ROOT, "devstack")
STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "devstack-stubs.sh")

# Controller of a single-node cloud with a Docker compute next to the libvirt one.
SINGLE_NODE = "key,g-api,n-api,n-cpu,n-sch,n-cond,q-svc,q-agt,q-dhcp,placement-api,vmct-docker"
DOCKER_ONLY_NODE = "n-cpu,q-agt,vmct-docker"

# Executables devstack would find in NOVA_BIN_DIR: they record their argv like the stubs. The
# task-args writer (tools/task_args.py) really runs, so the tests read the file it writes.
BIN_STUB = """#!/bin/bash
out=$(printf '%q ' "$(basename "$0")" "$@")
echo "$out" >> "$STUB_LOG"
if [[ "$(basename "$0")" == python3 && "$1" == */tools/task_args.py ]]; then
    exec "$VMCT_REAL_PYTHON" "$@" >/dev/null
fi
"""


class Result(object):
    def __init__(self, rc, calls, stderr, env_after):
        self.rc = rc
        self.calls = calls
        self.stderr = stderr
        self.env_after = env_after

    def named(self, name):
        """The argv lists of the calls to ``name``."""
        return [c[1:] for c in self.calls if c[0] == name]

    def find(self, *prefix):
        """Index of the first call starting with ``prefix``, else -1."""
        for i, call in enumerate(self.calls):
            if tuple(call[:len(prefix)]) == prefix:
                return i
        return -1


class PluginTestCase(testtools.TestCase):
    """Runs ``source devstack/plugin.sh MODE [PHASE]`` as stack.sh would."""

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.log = os.path.join(self.tmp, "calls.log")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        for name in ("nova-manage", "python3", "nova-compute"):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(BIN_STUB)
            os.chmod(path, 0o755)
        self.data = os.path.join(self.tmp, "data")

    def devstack_env(self, services, **extra):
        env = {
            "PATH": os.environ["PATH"], "HOME": self.tmp, "LC_ALL": "C",
            "STUB_LOG": self.log, "ENABLED_SERVICES": services,
            "DEST": os.path.join(self.tmp, "stack"), "DATA_DIR": self.data,
            "STACK_USER": "stack", "STACK_GROUP": "stack", "REGION_NAME": "RegionOne",
            "NOVA_CONF_DIR": "/etc/nova", "NOVA_CONF": "/etc/nova/nova.conf",
            "NOVA_CPU_CONF": "/etc/nova/nova-cpu.conf", "NOVA_BIN_DIR": self.bin,
            "VIRT_DRIVER": "libvirt",
            "Q_AGENT": "openvswitch", "VMCT_REAL_PYTHON": sys.executable,
            "DEVSTACK_PLUGINS": "rally-openstack,rally-vmct",
        }
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run_plugin(self, mode, phase=None, services=SINGLE_NODE, prelude="", **env):
        """Source settings then plugin.sh MODE PHASE; returns a :class:`Result`."""
        if os.path.exists(self.log):
            os.unlink(self.log)
        after = os.path.join(self.tmp, "env-after")
        args = " ".join(shlex.quote(a) for a in (mode, phase) if a)
        script = "\n".join([
            "set -o errexit",
            "source %s" % shlex.quote(STUBS),
            prelude,
            "source %s" % shlex.quote(os.path.join(DEVSTACK, "override-defaults")),
            "source %s" % shlex.quote(os.path.join(DEVSTACK, "settings")),
            "xtrace_before=$(set +o | grep xtrace)",
            "source %s %s" % (shlex.quote(os.path.join(DEVSTACK, "plugin.sh")), args),
            "{ echo \"ENABLED_SERVICES=$ENABLED_SERVICES\";"
            " echo \"FORCE_CONFIG_DRIVE=$FORCE_CONFIG_DRIVE\";"
            " echo \"XTRACE_KEPT=$([[ \"$(set +o | grep xtrace)\" == \"$xtrace_before\" ]]"
            " && echo yes || echo no)\"; } > %s" % shlex.quote(after),
        ])
        proc = subprocess.run(["bash", "-c", script], env=self.devstack_env(services, **env),
                              cwd=self.tmp, capture_output=True, text=True, timeout=60)
        calls = []
        if os.path.exists(self.log):
            with open(self.log) as f:
                calls = [shlex.split(line) for line in f if line.strip()]
        env_after = {}
        if os.path.exists(after):
            with open(after) as f:
                env_after = dict(line.rstrip("\n").split("=", 1) for line in f)
        return Result(proc.returncode, calls, proc.stderr, env_after)

    def assertRan(self, result, msg=None):
        self.assertEqual(0, result.rc, msg or "plugin failed:\n%s" % result.stderr[-3000:])

    def assertDies(self, result, *words):
        """The plugin stopped stacking with a message holding every word."""
        self.assertNotEqual(0, result.rc)
        message = " ".join(" ".join(c) for c in result.named("die"))
        for w in words:
            self.assertIn(w, message)

    def assertInOrder(self, result, *prefixes):
        """Each call prefix occurs, in this order."""
        last = -1
        for prefix in prefixes:
            found = [i for i, c in enumerate(result.calls)
                     if tuple(c[:len(prefix)]) == tuple(prefix) and i > last]
            self.assertTrue(found, "no call %r after call #%d in:\n%s" % (
                prefix, last, "\n".join(" ".join(c) for c in result.calls)))
            last = found[0]

    def make_qemu_guest(self):
        d = tempfile.mkdtemp(dir=self.tmp)
        for name in ("vmlinuz", "initrd.img", "disk.qcow2"):
            with open(os.path.join(d, name), "w") as f:
                f.write("x")
        with open(os.path.join(d, "build-id"), "w") as f:
            f.write("b123\n")
        return d

    def make_docker_tar(self):
        path = os.path.join(self.tmp, "workload.tar")
        with open(path, "w") as f:
            f.write("x")
        return path
