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
"""Reachability probes: is the instance answering on the network yet?

A probe's ``check()`` answers ``(ok, detail)`` at once: attempts that have not
finished stay in flight between calls (up to ``max_in_flight`` of them, each
given ``connect_timeout`` seconds), and a new one starts at every call. So a
dropped SYN (retried by the kernel only after 1, 3, 7 s) or a slow proxy does
not stall the measurement: once the instance refuses or accepts connections,
the waiter calling ``check()`` every ``poll_interval`` sees the first attempt
that gets through within one interval. While the instance does not answer
ARP yet, every attempt waits for the kernel's neighbour resolution (a probe
per second), which bounds the resolution to about 1 s in that phase.
``summary()`` counts the failed attempts by reason, for the iteration output.

* :class:`TcpProbe` - TCP connect to ``host:port`` (port 22 by default).
* :class:`ProxiedTcpProbe` - the same through a proxy command (OpenSSH
  ProxyCommand syntax, see :mod:`rally_vmct.access.ssh`); reachable once the
  command connected and the SSH banner (``SSH-``) came back through it.
* :class:`PingProbe` - one ICMP echo (``ping -c 1``) per attempt.
* :class:`SSHCommandProbe` - an SSH login that runs a command with exit code 0.

Every probe must be closed (``close()`` or ``with``): it kills and reaps the
processes and closes the sockets of the attempts still in flight.
"""

import collections
import errno
import ipaddress
import os
import select
import socket
import subprocess
import time

from rally_vmct.access import ssh as vmct_ssh

PROBES = ("tcp", "ping", "ssh")
SSH_BANNER = b"SSH-"


class _Probe:
    what = "probe"
    failures = None

    def _failed(self, detail):
        """Count one failed attempt by its reason (see :meth:`summary`)."""
        if self.failures is None:
            self.failures = collections.Counter()
        self.failures[detail] += 1
        return detail

    def summary(self):
        """``"Connection refused x12, timed out after 5.0 s x3"``, or "" without failures."""
        if not self.failures:
            return ""
        return ", ".join("%s x%d" % (detail, count)
                         for detail, count in self.failures.most_common())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        pass


class TcpProbe(_Probe):
    """Non-blocking TCP connects to ``host:port``, several in flight."""

    def __init__(self, host, port=22, connect_timeout=5.0, max_in_flight=16,
                 monotonic=time.monotonic):
        self.host, self.port = host, int(port)
        self.connect_timeout = connect_timeout
        self.max_in_flight = max_in_flight
        self.monotonic = monotonic
        self.family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.what = "TCP connect to %s:%d" % (host, self.port)
        self._attempts = []        # (started, socket)

    def _start(self):
        sock = socket.socket(self.family, socket.SOCK_STREAM)
        sock.setblocking(False)
        code = sock.connect_ex((self.host, self.port))
        if code not in (0, errno.EINPROGRESS, errno.EAGAIN):
            sock.close()
            return os.strerror(code)
        self._attempts.append((self.monotonic(), sock))
        return None

    def check(self):
        detail = None
        now = self.monotonic()
        for started, sock in list(self._attempts):
            if now - started > self.connect_timeout:
                self._drop(sock)
                detail = self._failed("timed out after %.1f s" % self.connect_timeout)
        if len(self._attempts) < self.max_in_flight:
            started = self._start()
            detail = self._failed(started) if started else detail
        socks = [sock for _, sock in self._attempts]
        if not socks:
            return False, detail or "no attempt in flight"
        _, writable, _ = select.select([], socks, [], 0)
        for sock in writable:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            self._drop(sock)
            if code == 0:
                return True, "connected"
            detail = self._failed(os.strerror(code))
        return False, detail or "connecting"

    def _drop(self, sock):
        self._attempts = [(s, k) for s, k in self._attempts if k is not sock]
        sock.close()

    def close(self):
        for _, sock in self._attempts:
            sock.close()
        self._attempts = []


class _ProcessProbe(_Probe):
    """Attempts that are child processes, polled without blocking."""

    def __init__(self, connect_timeout, max_in_flight, monotonic):
        self.connect_timeout = connect_timeout
        self.max_in_flight = max_in_flight
        self.monotonic = monotonic
        self._attempts = []        # dicts: started, process, out

    def _argv(self):
        raise NotImplementedError()

    def _spawn(self):
        argv = self._argv()
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE)
        except OSError as e:
            return "cannot run %s: %s" % (argv[0], e.strerror)
        os.set_blocking(process.stdout.fileno(), False)
        os.set_blocking(process.stderr.fileno(), False)
        self._attempts.append({"started": self.monotonic(), "process": process,
                               "out": b"", "err": b""})
        return None

    @staticmethod
    def _read(attempt):
        for name, pipe in (("out", attempt["process"].stdout),
                           ("err", attempt["process"].stderr)):
            try:
                chunk = os.read(pipe.fileno(), 4096)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            attempt[name] += chunk or b""

    def _succeeded(self, attempt, finished):
        raise NotImplementedError()

    def _failure(self, attempt):
        err = attempt["err"].decode("utf-8", "replace").strip()
        out = attempt["out"].decode("utf-8", "replace").strip()
        text = (err or out).splitlines()
        return "exit code %s%s" % (attempt["process"].returncode,
                                   ": " + text[-1][:200] if text else "")

    def check(self):
        detail = None
        now = self.monotonic()
        for attempt in list(self._attempts):
            if now - attempt["started"] > self.connect_timeout:
                self._drop(attempt)
                detail = self._failed("no answer within %.1f s" % self.connect_timeout)
        if len(self._attempts) < self.max_in_flight:
            spawned = self._spawn()
            detail = self._failed(spawned) if spawned else detail
        if self._attempts:
            pipes = [a["process"].stdout for a in self._attempts]
            select.select(pipes, [], [], 0)
        for attempt in list(self._attempts):
            self._read(attempt)
            finished = attempt["process"].poll() is not None
            if finished:
                self._read(attempt)
            if self._succeeded(attempt, finished):
                self._drop(attempt)
                return True, "answered"
            if finished:
                detail = self._failed(self._failure(attempt))
                self._drop(attempt)
        return False, detail or "waiting for an answer"

    def _drop(self, attempt):
        self._attempts = [a for a in self._attempts if a is not attempt]
        vmct_ssh.terminate(attempt["process"], grace=1.0)

    def close(self):
        for attempt in list(self._attempts):
            self._drop(attempt)


class ProxiedTcpProbe(_ProcessProbe):
    """A proxy command per attempt; reachable when the SSH banner comes through."""

    def __init__(self, proxy_command, host, port=22, user=None, connect_timeout=5.0,
                 max_in_flight=5, banner=SSH_BANNER, monotonic=time.monotonic):
        super().__init__(connect_timeout, max_in_flight, monotonic)
        self.argv = vmct_ssh.expand_proxy_command(proxy_command, host, port, user)
        self.banner = banner
        self.what = "SSH banner from %s:%s through %r" % (host, port, proxy_command)

    def _argv(self):
        return self.argv

    def _succeeded(self, attempt, finished):
        return attempt["out"].startswith(self.banner)


class PingProbe(_ProcessProbe):
    """``ping -c 1`` per attempt."""

    def __init__(self, host, connect_timeout=5.0, max_in_flight=3, monotonic=time.monotonic):
        super().__init__(connect_timeout, max_in_flight, monotonic)
        wait = max(1, int(round(connect_timeout)))
        self.argv = ["ping", "-n", "-c", "1", "-W", str(wait), host]
        if ipaddress.ip_address(host).version == 6:
            self.argv.insert(1, "-6")
        self.what = "ping %s" % host

    def _argv(self):
        return self.argv

    def _succeeded(self, attempt, finished):
        return finished and attempt["process"].returncode == 0


class SSHCommandProbe(_Probe):
    """An SSH login running ``command`` (``true`` by default) that exits 0.

    One attempt at a time (each is bounded by ``connect_timeout``); meant for
    after the port answers, when logins succeed or fail quickly.
    """

    def __init__(self, host, user, port=22, pkey=None, key_filename=None, password=None,
                 proxy_command=None, connect_timeout=5.0, command="true"):
        self.client = vmct_ssh.SSH(user, host, port=port, pkey=pkey, key_filename=key_filename,
                                   password=password, proxy_command=proxy_command,
                                   connect_timeout=connect_timeout)
        self.command = command
        self.timeout = connect_timeout
        self.what = "SSH %s@%s:%s %r" % (user, host, port, command)

    def check(self):
        try:
            rc, _out, err = self.client.execute(self.command, timeout=max(self.timeout, 10))
        except Exception as e:
            self.client.close()
            return False, self._failed(str(e)[:300])
        if rc == 0:
            return True, "command succeeded"
        self.client.close()
        return False, self._failed("exit code %s: %s" % (rc, err.strip()[-200:]))

    def close(self):
        self.client.close()


def make_probe(probe, host, port=22, user=None, pkey=None, key_filename=None,
               proxy_command=None, connect_timeout=5.0, monotonic=time.monotonic):
    """The probe named ``probe`` ("tcp", "ping" or "ssh") for ``host``.

    :raises ValueError: for an unknown name, or ``ping`` with a proxy command
    """
    if probe == "tcp":
        if proxy_command:
            return ProxiedTcpProbe(proxy_command, host, port, user=user,
                                   connect_timeout=connect_timeout, monotonic=monotonic)
        return TcpProbe(host, port, connect_timeout=connect_timeout, monotonic=monotonic)
    if probe == "ping":
        if proxy_command:
            raise ValueError("probe 'ping' cannot go through proxy_command %r; use probe "
                             "'tcp' (SSH banner through the proxy) or 'ssh'" % proxy_command)
        return PingProbe(host, connect_timeout=connect_timeout, monotonic=monotonic)
    if probe == "ssh":
        return SSHCommandProbe(host, user, port=port, pkey=pkey, key_filename=key_filename,
                               proxy_command=proxy_command, connect_timeout=connect_timeout)
    raise ValueError("probe must be one of %s, got %r" % (", ".join(PROBES), probe))
