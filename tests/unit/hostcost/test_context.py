"""vmct_host_monitor's setup and cleanup, with the real local agent and fake samplers.

A local agent is a Python subprocess reading this machine's /proc (no service, no
container); the fakes stand for samplers that fail, hang, or ignore their stdin.
"""

import json
import os
import subprocess
import sys
import time
from unittest import mock

import jsonschema
from rally import plugins
import testtools

from rally_vmct import opts
from rally_vmct.hostcost import context
from rally_vmct.hostcost import windows
from rally_vmct.hostcost.agent import sampler

KEY = context.KEY

# Writes a start line and one sample, then waits for stdin to close.
GOOD = ("import json, sys, time\n"
        "print(json.dumps({'t': time.time(), 'type': 'start'}))\n"
        "print(json.dumps({'t': time.time(), 'type': 'sample'}), flush=True)\n"
        "sys.stdin.buffer.read()\n")
# The same, but it never exits by itself.
STUBBORN = GOOD.replace("sys.stdin.buffer.read()\n",
                        "sys.stdin.buffer.read()\nwhile True: time.sleep(1)\n")


def python(code):
    return lambda spec, config: ([sys.executable, "-c", code], b"")


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


class HostMonitorTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()

    def context(self, **config):
        return {"task": {"uuid": "task-uuid"}, "owner_id": "owner-uuid",
                "config": {KEY: config}}

    def start(self, ctx):
        monitor = context.HostMonitor(ctx)
        self.addCleanup(monitor.cleanup)
        monitor.setup()
        return monitor

    def test_local_agent_samples_until_cleanup(self):
        ctx = self.context(interval=0.2, docker_socket=None)
        monitor = self.start(ctx)
        [host] = ctx[KEY]["hosts"]
        self.assertEqual(("local", "local"), (host["name"], host["address"]))
        self.assertEqual(0.2, ctx[KEY]["interval"])
        self.assertEqual([], ctx[KEY]["native_ports"])
        directory = os.path.dirname(host["path"])
        [agent] = monitor._agents
        pid = agent.process.pid
        with open(host["path"], "rb") as f:
            header = windows.read_header(f)
            self.assertIsNotNone(windows.last_time(f))
        self.assertEqual(os.sysconf("SC_CLK_TCK"), header["hz"])
        self.assertIsNone(header["docker"])
        monitor.cleanup()
        self.assertNotIn(KEY, ctx)
        self.assertFalse(os.path.exists(directory))
        self.assertFalse(alive(pid))
        self.assertEqual(0, agent.process.returncode)   # it exited by itself

    def test_agent_exits_when_the_rally_process_is_gone(self):
        # The stdin pipe is inherited by Rally's forked workers, so the agent also
        # watches its parent: killed here, it is reparented and stops.
        script = (
            "import os, subprocess, sys, time\n"
            "from rally_vmct.hostcost.agent import sampler as a\n"
            "p = subprocess.Popen(a.command(sys.executable, ['--interval', '0.1', "
            "'--docker-socket', '', '--parent-pid', str(os.getpid())]), stdin=subprocess.PIPE, "
            "stdout=subprocess.DEVNULL, start_new_session=True)\n"
            "p.stdin.write(a.payload()); p.stdin.flush()\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(60)\n")
        parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
        self.addCleanup(parent.wait)
        self.addCleanup(parent.kill)
        agent = int(parent.stdout.readline())
        self.assertTrue(alive(agent))
        parent.kill()
        parent.wait()
        for _ in range(100):
            if not alive(agent):
                break
            time.sleep(0.05)
        self.assertFalse(alive(agent), open("/proc/%d/status" % agent).read())

    def test_sampler_that_exits_names_its_error(self):
        code = "import sys; sys.stderr.write('ssh: no route to host'); sys.exit(3)"
        self.useFixture_patch(python(code))
        ctx = self.context()
        monitor = context.HostMonitor(ctx)
        e = self.assertRaises(context.MonitorError, monitor.setup)
        self.assertIn("sampler of host 'local' exited (status 3)", str(e))
        self.assertIn("ssh: no route to host", str(e))
        self.assertNotIn(KEY, ctx)
        self.assertIsNone(monitor._dir)

    def test_sampler_without_samples_times_out(self):
        self.useFixture_patch(python("import sys; sys.stdin.buffer.read()"))
        monitor = context.HostMonitor(self.context(start_timeout=1))
        e = self.assertRaises(context.MonitorError, monitor.setup)
        self.assertIn("no sample from host 'local' within 1 s (start_timeout)", str(e))
        self.assertEqual([], monitor._agents)

    def test_stubborn_sampler_is_terminated(self):
        self.useFixture_patch(python(STUBBORN))
        self.patch_grace(0.3)
        ctx = self.context(interval=0.1)
        monitor = self.start(ctx)
        [agent] = monitor._agents
        monitor.cleanup()
        self.assertEqual(-15, agent.process.returncode)
        self.assertFalse(alive(agent.process.pid))

    def test_one_sampler_per_host(self):
        self.useFixture_patch(python(GOOD))
        ctx = self.context(hosts=["local", {"host": "10.0.0.5", "name": "compute-1"},
                                  {"host": "10.0.0.6"}])
        self.start(ctx)
        self.assertEqual(["local", "compute-1", "10.0.0.6"],
                         [h["name"] for h in ctx[KEY]["hosts"]])
        self.assertEqual(["00-local.jsonl", "01-compute-1.jsonl", "02-10.0.0.6.jsonl"],
                         [os.path.basename(h["path"]) for h in ctx[KEY]["hosts"]])

    def useFixture_patch(self, launch):
        patcher = mock.patch.object(context, "launch", launch)
        patcher.start()
        self.addCleanup(patcher.stop)

    def patch_grace(self, seconds):
        patcher = mock.patch.object(context.HostMonitor, "stop_grace", seconds)
        patcher.start()
        self.addCleanup(patcher.stop)


class LaunchTestCase(testtools.TestCase):

    CONFIG = {"interval": 1.0, "disk_interval": 10.0, "docker_socket": "/run/d.sock"}

    def setUp(self):
        super().setUp()
        opts.register()

    def test_local_runs_the_agent_with_this_python(self):
        argv, first = context.launch("local", self.CONFIG)
        self.assertEqual(sampler.command(sys.executable, [
            "--interval", "1.0", "--disk-interval", "10.0", "--docker-socket", "/run/d.sock",
            "--watch-stdin", "--parent-pid", str(os.getpid())]), argv)
        self.assertEqual(sampler.payload(), first)

    def test_native_ports(self):
        config = dict(self.CONFIG, native_ports=[22, 22822])
        argv, _ = context.launch("local", config)
        self.assertEqual(["--native-port", "22", "--native-port", "22822"],
                         argv[argv.index("--watch-stdin") + 1:-2])

    def test_remote_runs_the_relay_with_the_resolved_spec(self):
        spec = {"host": "compute-1", "user": "stack", "key_file": "/k", "name": "c1",
                "python": "/usr/bin/python3.11"}
        with mock.patch.object(opts, "get", {"ssh_proxy_command": "ssh -W %h:%p bastion",
                                             "ssh_connect_timeout": 7.0}.get):
            argv, first = context.launch(spec, self.CONFIG)
        self.assertEqual([sys.executable, "-m", "rally_vmct.hostcost.remote"], argv)
        line = json.loads(first)
        self.assertEqual({"host": "compute-1", "user": "stack", "key_file": "/k",
                          "proxy_command": "ssh -W %h:%p bastion"}, line["host"])
        self.assertEqual(7.0, line["connect_timeout"])
        self.assertEqual("/usr/bin/python3.11", line["command"][0])
        self.assertEqual(sampler.BOOTSTRAP, line["command"][3])
        self.assertEqual("--exit-with-parent", line["command"][-1])
        self.assertTrue(first.endswith(b"\n"))


class SchemaTestCase(testtools.TestCase):

    def valid(self, config):
        jsonschema.validate(config, context.HostMonitor.CONFIG_SCHEMA)

    def invalid(self, config):
        self.assertRaises(jsonschema.ValidationError, self.valid, config)

    def test_config(self):
        self.valid({})
        self.valid({"hosts": ["local", {"host": "h", "port": 2222, "user": "root",
                                        "key_file": "/k", "proxy_command": "nc %h %p",
                                        "name": "c1", "python": "python3"}],
                    "interval": 0.5, "disk_interval": 0, "docker_socket": None,
                    "start_timeout": 30})
        self.valid({"hosts": [{"host": "h", "proxy_command": ""}],
                    "docker_socket": "/run/docker.sock"})
        self.invalid({"hosts": []})
        self.invalid({"hosts": ["remote"]})
        self.invalid({"hosts": [{"port": 22}]})
        self.invalid({"hosts": [{"host": "h", "pasword": "x"}]})
        self.invalid({"interval": 0})
        self.invalid({"intervals": 1})
        self.invalid({"docker_socket": ""})
        self.invalid({"hosts": [{"host": "h", "key_file": ""}]})
        self.valid({"native_ports": [22, 22822]})
        self.invalid({"native_ports": [0]})
        self.invalid({"native_ports": [22, 22]})
        self.invalid({"native_ports": 22})
