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
"""The host monitor's agent on a host reached over SSH, its lines written here.

``vmct_host_monitor`` runs this as a process of its own (Rally forks its
workers after the context's setup, and an SSH transport thread must not be
forked with them)::

    python -m rally_vmct.hostcost.remote < spec, stdout > the host's file

The first line of stdin is ``{"host": a Host spec (shared.Host; the
proxy command resolved), "connect_timeout": S, "command": the agent's argv}``;
stdin then stays open. The relay connects like VMCT.native_benchmark (key,
password, OpenSSH-style proxy command: :mod:`rally_vmct.access.ssh`), compares
the host's clock with this one, starts the agent with its payload on stdin and
writes each of its lines to stdout. When the clocks differ by more than the
measurement's uncertainty, ``"t"`` is moved to this host's clock (``"host_t"``
keeps the host's own; the start line says ``clock_offset``). When stdin closes
(the context's cleanup, or the Rally process gone) the agent's stdin is closed:
the agent exits, and so does the relay. (sshutils' ``run`` cannot do this: it
sends stdin 4 KiB per second and stops reading it while output keeps coming.)
"""

import json
import os
import select
import shlex
import sys
import time

from rally_vmct.access import ssh
from rally_vmct.hostcost.agent import sampler

CLOCK_COMMANDS = ("date +%s.%N", "python3 -c 'import time; print(repr(time.time()))'")


class AgentSSH(ssh.SSH):
    """The project's SSH client, plus a command streamed both ways until stdin closes."""

    def stream(self, command, data, stdin_fd, out, err):
        """Run ``command`` with ``data`` then nothing on its stdin until ``stdin_fd`` closes.

        Its stdout goes to ``out.write`` (text), its stderr to ``err``, as they
        come. Returns its exit status.
        """
        channel = self._get_client().get_transport().open_session()
        try:
            channel.exec_command(" ".join(shlex.quote(str(a)) for a in command))
            channel.sendall(data)
            watched = [channel, stdin_fd]
            while True:
                ready, _, _ = select.select(watched, [], [], 1.0)
                while channel.recv_ready():
                    out.write(channel.recv(65536).decode("utf-8", "replace"))
                while channel.recv_stderr_ready():
                    err.write(channel.recv_stderr(65536).decode("utf-8", "replace"))
                if stdin_fd in ready and not os.read(stdin_fd, 4096):
                    channel.shutdown_write()
                    watched.remove(stdin_fd)
                if (channel.exit_status_ready() and not channel.recv_ready()
                        and not channel.recv_stderr_ready()):
                    return channel.recv_exit_status()
        finally:
            channel.close()


class Lines:
    """Writes the agent's output to ``out`` line by line, ``"t"`` moved by ``-offset``."""

    def __init__(self, out, offset=0.0, err=None):
        self.out = out
        self.offset = offset
        self.err = err or sys.stderr
        self.pending = ""

    def write(self, text):
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            try:
                record = json.loads(line)
                record["host_t"] = record["t"]
                record["t"] = round(record["t"] - self.offset, 6)
            except (ValueError, KeyError, TypeError):
                self.err.write("agent: %s\n" % line)
                continue
            if record.get("type") == "start":
                record["clock_offset"] = round(self.offset, 6)
            self.out.write(json.dumps(record) + "\n")
        self.out.flush()


def clock_offset(client, now=time.time):
    """``(host clock - this clock, round trip)`` in seconds, or (None, None).

    The host's time was read somewhere within the round trip: the offset is
    uncertain by that much.
    """
    for command in CLOCK_COMMANDS:
        before = now()
        rc, out, _ = client.execute(command, timeout=30)
        after = now()
        try:
            return float(out.strip()) - (before + after) / 2, after - before
        except ValueError:
            continue        # busybox date has no %N
    return None, None


def correction(offset, round_trip):
    """The offset to apply: 0 unless the clocks differ by more than it can tell."""
    if offset is None or abs(offset) <= max(round_trip, 0.1):
        return 0.0
    return offset


def relay(spec, stdin_fd, out, err):
    """Run the agent over SSH until ``stdin_fd`` closes; the agent's exit status."""
    client = AgentSSH.of_spec(spec["host"], connect_timeout=spec.get("connect_timeout"))
    try:
        offset = correction(*clock_offset(client))
        return client.stream(spec["command"], sampler.payload(), stdin_fd,
                             Lines(out, offset, err), err)
    finally:
        client.close()


def read_spec(fd):
    """The first line of ``fd`` as JSON (read without buffering: stdin's EOF matters)."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 65536)
        if not chunk:
            raise ValueError("no host spec on stdin")
        data += chunk
    return json.loads(data.split(b"\n", 1)[0])


def main():
    spec = read_spec(0)
    try:
        status = relay(spec, 0, sys.stdout, sys.stderr)
    except Exception as e:
        sys.stderr.write("host monitor on %s: %s: %s\n" % (spec["host"].get("host"),
                                                           type(e).__name__, e))
        return 1
    if status:
        sys.stderr.write("host monitor on %s: the agent exited with status %s (python3 "
                         "missing? see above)\n" % (spec["host"].get("host"), status))
    return status


if __name__ == "__main__":
    sys.exit(main())
