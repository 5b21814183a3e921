"""Hostile strings in VMCT.native_benchmark's arguments never run, end to end.

Every string argument of the scenario that reaches a shell or a command, on the target
(over SSH) or here, is set to each hostile form of :data:`FORMS` (``$(...)``, backquotes,
``;``, single and double quotes, a newline, ``&&``), each touching a marker file of
its own, and run through the real ``rally task start`` against the real sshd of
tests/functional/sshd.py (root on this machine, so the target's /tmp is ours too):

* remote shell: ``fileio_dir`` (sysbench fileio's probe, ``mkdir``, ``cd``, ``rmdir``),
  ``netperf_peer.host`` (``netperf -H``), ``netperf_peer.listen`` (``netserver -L``),
  the string parameters of ``workloads`` (sysbench and netperf command lines);
* local command, a proxy command's argv (no shell): ``hosts[].host`` (``%h``),
  ``hosts[].user`` (``%r``), ``hosts[].proxy_command`` itself (one workload each, an
  iteration per form: iteration N logs in with hosts[N - 1]), and the same three of
  ``netperf_peer.ssh`` (the same SSH client: one value holding every form).

(``kind``, ``key_file`` and ``password`` reach no command: a label, a file paramiko
reads, a secret paramiko sends.) A task with a hostile value is first validated as
``rally task validate`` does (:mod:`tests.functional.rally_validate`): rejected, its
reason must name the argument; accepted, it runs in one ``rally task start`` of all
of them, and its iteration either works or fails with an error that names the
argument or shows the value. No marker file may ever appear. Outcomes per argument
are printed (``pytest -s``).
"""

import collections
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import uuid

import testtools

from tests.functional import rally_home
from tests.functional import rally_validate
from tests.functional import sshd

ENV = "native"
FORMS = ("$(touch {m})", "`touch {m}`", "; touch {m}", "' ; touch {m} ; '",
         '" ; touch {m} ; "', "\ntouch {m}\n", " && touch {m}")
# Quick workloads: what each argument needs to reach its command.
CPU = {"sysbench": "cpu", "max_prime": 100, "events": 1}
# fileio runs 1 s: one 4K read takes under 0.00005 s here, which sysbench prints as a total
# time of 0.0000 s, and no rate can be computed from that.
FILEIO = {"sysbench": "fileio", "test_mode": "seqrd", "total_size": "16K", "num": 1,
          "block_size": "4K", "time": 1}
NETPERF = {"netperf": "TCP_RR", "duration": 1}
# A proxy command that hands %h and %r to a program (env) and still reaches the sshd.
VIA_ENV = "env VMCT_HOST=%h VMCT_USER=%r nc 127.0.0.1 %p"

Case = collections.namedtuple("Case", "argument value args")


def free_port():
    """A free loopback port above 40000 (netserver's control and data ports)."""
    while True:
        port = random.randint(40001, 60999)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


def names(case):
    """How a message names the case's argument: its top-level name, ``proxy_command``."""
    top, _, field = case.argument.replace("[]", "").partition(".")
    field = field.rpartition(".")[2]
    return [top] + ([field, field.replace("_", " ")] if "_" in field else [])


def named(case, text, or_value=False):
    """Does ``text`` name the case's argument (or, ``or_value``, show its value)?"""
    if or_value and (case.value in text or repr(case.value)[1:-1] in text):
        return True
    return any(re.search(r"(?<!\w)%s(?!\w)" % re.escape(name), text) for name in names(case))


class HostileStringsTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.run_id = uuid.uuid4().hex[:8]
        self.markers_made = 0
        self.addCleanup(self.remove_markers)
        self.home = self.useFixture(rally_home.RallyHome())
        self.home.rally("env", "create", "--name", ENV)
        self.server = self.useFixture(sshd.SSHServer())
        self.fileio_root = "/var/tmp/vmct-hostile-%s" % self.run_id
        self.addCleanup(shutil.rmtree, self.fileio_root, True)
        self.netserver_ports = []
        self.addCleanup(self.stop_netservers)

    # -- markers, netservers ---------------------------------------------------------------

    def hostile(self, prefix=""):
        """``prefix`` + each form, each form touching a marker of its own."""
        values = []
        for form in FORMS:
            self.markers_made += 1
            values.append(prefix + form.format(
                m="/tmp/vmct-pwned-%s-%d" % (self.run_id, self.markers_made)))
        return values

    def all_forms(self, prefix=""):
        """One value: ``prefix`` + every form (whatever the quoting, one of them breaks out)."""
        return [prefix + "".join(self.hostile())]

    def markers(self):
        return sorted(glob.glob("/tmp/vmct-pwned-%s-*" % self.run_id))

    def remove_markers(self):
        for path in self.markers():
            os.remove(path)

    def netserver_port(self):
        port = free_port()
        self.netserver_ports.append(port)
        return port

    def stop_netservers(self):
        """Stop the netservers the scenario started: the PIDs listening on our ports."""
        for port in self.netserver_ports:
            out = subprocess.run(["ss", "-Hltnp", "sport = :%d" % port], text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
            for pid in set(re.findall(r"pid=(\d+)", out)):
                os.kill(int(pid), signal.SIGTERM)

    # -- the cases -------------------------------------------------------------------------

    def host(self, **changes):
        return dict({"host": self.server.host, "port": self.server.port,
                     "user": self.server.user, "key_file": self.server.key_file}, **changes)

    def peer(self, **changes):
        return dict({"host": "127.0.0.1", "control_port": self.netserver_port(),
                     "data_port": free_port(), "listen": "127.0.0.1",
                     "ssh": self.host()}, **changes)

    def host_cases(self):
        """``hosts[]`` fields, one form per entry: iteration N logs in with entry N."""
        cases = []
        for field, prefix, extra in (("host", "127.0.0.1", {"proxy_command": VIA_ENV}),
                                     ("user", "root", {"proxy_command": VIA_ENV}),
                                     ("proxy_command", "nc %h %p", {})):
            cases += [Case("hosts[].%s" % field, value,
                           {"hosts": [self.host(**dict(extra, **{field: value}))],
                            "workloads": [CPU]})
                      for value in self.hostile(prefix)]
        return cases

    def cases(self):
        """Every other argument, one task per value."""
        cases = []
        for field, prefix, extra in (("host", "127.0.0.1", {"proxy_command": VIA_ENV}),
                                     ("user", "root", {"proxy_command": VIA_ENV}),
                                     ("proxy_command", "nc %h %p", {})):
            # the same SSH client as hosts[] (benchmark/shared.py connect): every form at once
            cases += [Case("netperf_peer.ssh.%s" % field, value, {
                "hosts": [self.host()], "workloads": [NETPERF],
                "netperf_peer": self.peer(ssh=self.host(**dict(extra, **{field: value})))})
                for value in self.all_forms(prefix)]
        for field in ("host", "listen"):
            cases += [Case("netperf_peer.%s" % field, value, {
                "hosts": [self.host()], "workloads": [NETPERF],
                "netperf_peer": self.peer(**{field: value})})
                for value in self.hostile("127.0.0.1")]
        cases += [Case("fileio_dir", value, {"hosts": [self.host()], "workloads": [FILEIO],
                                             "fileio_dir": value})
                  for value in self.hostile(self.fileio_root + "/d")]
        for workload, key, prefix in ((CPU, "sysbench", "cpu"),
                                      (FILEIO, "test_mode", "seqrd"),
                                      (FILEIO, "block_size", "4K"),
                                      (NETPERF, "netperf", "TCP_RR")):
            cases += [Case("workloads.%s" % key, value, {
                "hosts": [self.host()], "netperf_peer": self.peer(),
                "workloads": [dict(workload, **{key: value})]})
                for value in self.hostile(prefix)]
        return cases

    @staticmethod
    def task(workloads):
        """A task of ``[(title, args, times)]``, one subtask each."""
        return {"version": 2, "title": "hostile strings", "subtasks": [{
            "title": title,
            "workloads": [{"scenario": {"VMCT.native_benchmark": args},
                           "runner": {"constant": {"times": times, "concurrency": 1}}}]}
            for title, args, times in workloads]}

    def test_hostile_strings_never_run(self):
        host_cases, cases = self.host_cases(), self.cases()
        verdicts = rally_validate.validate_many(
            self.home, ENV, [self.task([("v", c.args, 1)]) for c in host_cases + cases])
        problems, runs = [], []
        for case, verdict in zip(host_cases + cases, verdicts):
            why = verdict["error"].split("Reason(s):")[-1]
            if verdict["valid"]:
                runs.append(case)
            elif not named(case, why):
                problems.append("%s=%r: rejected, the reason does not name it: %s"
                                % (case.argument, case.value, why.strip()))
        # hosts[]: the entries that validate, one workload per field, an iteration each
        workloads, ran = [], []
        for field in sorted({c.argument for c in host_cases}):
            valid = [c for c in runs if c.argument == field]
            hosts = [c.args["hosts"][0] for c in valid]
            workloads.append(("%s" % field, {"hosts": hosts, "workloads": [CPU]}, len(hosts)))
            ran.append(valid)
        for case in runs:
            if not case.argument.startswith("hosts[]"):
                workloads.append(("%d" % len(workloads), case.args, 1))
                ran.append([case])
        path = os.path.join(self.home.path, "task.json")
        with open(path, "w") as f:
            json.dump(self.task(workloads), f)
        proc = self.home.rally("task", "start", path, check=False, timeout=900)
        self.assertIn(proc.returncode, (0, 2), proc.stdout[-3000:])     # 2: an SLA failed
        subtasks = self.home.report_json()["tasks"][0]["subtasks"]
        self.assertEqual(len(workloads), len(subtasks))
        outcomes = collections.Counter()
        for subtask, cases_run in zip(subtasks, ran):
            iterations = subtask["workloads"][0]["data"]
            self.assertEqual(len(cases_run), len(iterations), subtask["title"])
            for case, iteration in zip(cases_run, iterations):
                error = " ".join(iteration["error"])
                outcomes[(case.argument, "fails" if error else "works")] += 1
                if error and not named(case, error, or_value=True):
                    problems.append("%s=%r: the iteration fails without naming it: %s"
                                    % (case.argument, case.value, error[:600]))
        for case in host_cases + cases:
            if case not in runs:
                outcomes[(case.argument, "rejected")] += 1
        print("\nHostile values per argument (rejected by validation, ran and worked, ran "
              "and failed naming it):")
        for argument in dict.fromkeys(c.argument for c in host_cases + cases):
            print("  %-32s %s" % (argument, ", ".join(
                "%d %s" % (outcomes[(argument, how)], how)
                for how in ("rejected", "works", "fails") if outcomes[(argument, how)])))
        self.assertEqual([], self.markers(), "hostile strings ran a command")
        if problems:
            self.fail("\n".join(problems))
