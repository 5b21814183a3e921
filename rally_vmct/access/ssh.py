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
"""SSH to instances, directly or through an OpenSSH-style ProxyCommand.

Many clouds expose instances only behind a bastion, and the local all-in-one
cloud reaches them only from a network namespace, so every connection can go
through a proxy command written as for OpenSSH's ``ProxyCommand``::

    ssh -W %h:%p bastion.example.org
    ip netns exec qdhcp-NET nc %h %p

The command is split with :func:`shlex.split` and the tokens ``%h`` (host),
``%p`` (port), ``%r`` (user) and ``%%`` are replaced *inside each argument*; it
is run without a shell, so host names can never inject commands.

:class:`SSH` is Rally's :class:`rally.utils.sshutils.SSH` (``execute``, ``run``,
``put_file``, ``wait``) plus ``proxy_command`` and a configurable connect
timeout (Rally's is a fixed 1 s and it has no proxy support). A connection lost
during a command is an :class:`SSHError` naming why (Rally's returns exit status
-1), and ``close()`` ends the transport thread before the proxy command, so a
clean session logs no error.

Usage::

    with ssh.SSH("root", "10.0.0.5", pkey=private_key,
                 proxy_command="ip netns exec qdhcp-x nc %h %p") as client:
        rc, out, err = client.execute(["uname", "-r"])
"""

import errno
import os
import select
import shlex
import socket
import subprocess
import tempfile
import threading
import time

import paramiko
from rally.common import logging
from rally import exceptions
from rally.utils import sshutils

LOG = logging.getLogger(__name__)
TOKENS = {"h": "host", "p": "port", "r": "user"}

# Prints the guest's boot id and the start time of its PID 1 (clock ticks since
# the kernel booted). A VM reboot changes the boot id; a container restart keeps
# the host's boot id but starts a new PID 1, so the pair identifies one "life" of
# an instance of either kind. Works with busybox. Field 22 of /proc/1/stat is
# counted after the ") " that closes the command name (which may hold spaces).
INCARNATION_COMMAND = ("cat /proc/sys/kernel/random/boot_id && "
                       "sed 's/^.*) //' /proc/1/stat | cut -d ' ' -f 20")


def expand_proxy_command(template, host, port, user=None):
    """argv of ``template`` with ``%h``, ``%p``, ``%r`` and ``%%`` replaced per argument.

    :raises ValueError: naming ``proxy_command`` for an empty template, bad
        quoting, or an unknown ``%x`` token
    """
    if not template or not template.strip():
        raise ValueError("proxy_command is empty; give a command such as "
                         "'ssh -W %h:%p bastion' or leave it unset")
    try:
        words = shlex.split(template)
    except ValueError as e:
        raise ValueError("proxy_command %r cannot be split like a shell command: %s"
                         % (template, e))
    values = {"host": str(host), "port": str(port), "user": str(user or "")}
    argv = []
    for word in words:
        out = []
        i = 0
        while i < len(word):
            char = word[i]
            if char != "%":
                out.append(char)
                i += 1
                continue
            token = word[i + 1:i + 2]
            if token == "%":
                out.append("%")
            elif token in TOKENS:
                out.append(values[TOKENS[token]])
            else:
                raise ValueError("proxy_command %r has an unknown token '%%%s'; supported: "
                                 "%%h (host), %%p (port), %%r (user), %%%% (a %%)"
                                 % (template, token))
            i += 2
        argv.append("".join(out))
    return argv


class ProxySocket(paramiko.ProxyCommand):
    """paramiko's ProxyCommand started from an argv, safe to close from another thread.

    paramiko closes its socket from the thread that closes the transport while the
    transport thread may still be reading it: ``Transport.close()`` calls
    ``Packetizer.close()``, which closes the socket *before* the thread is joined
    (and ``stop_thread`` then skips the join, the packetizer being closed). A real
    socket's ``recv`` then fails with ``OSError``, which paramiko takes for EOF; a
    pipe closed under the reader fails with ``ValueError`` instead, which the
    transport thread logs at ERROR as "Unknown exception: I/O operation on closed
    file". So :meth:`close` stops the command, wakes a ``recv`` blocked in
    ``select`` (a wake-up pipe), waits until ``recv`` and ``send`` have let go of the
    pipes and only then closes them; from then on ``recv`` raises ``EOFError`` and
    ``send`` ``OSError(EBADF)``, as paramiko expects of a closed socket. EOF from a
    command that was not asked to stop is a :class:`paramiko.ProxyCommandFailure`
    naming its exit code and stderr. (paramiko's own class spins when the command
    exits and leaves a zombie on close.)
    """

    stop_grace = 2.0        # seconds between SIGTERM and SIGKILL on close

    def __init__(self, argv):
        # Not calling super().__init__: it re-splits a command string.
        self.cmd = list(argv)
        self._stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, bufsize=0)
        self.timeout = None
        self._closing = False
        self._released = False
        self._wake_r, self._wake_w = os.pipe()
        self._closing_lock = threading.Lock()
        self._reading = threading.Lock()     # held while recv() uses the stdout pipe
        self._writing = threading.Lock()     # held while send() uses the stdin pipe

    def stderr_text(self):
        """What the proxy command wrote to stderr so far (last 500 characters)."""
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", "replace").strip()[-500:]
        except (OSError, ValueError):
            return ""

    def _failure(self, why):
        try:
            code = self.process.wait(0.5)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None:
            why += " (exit code %d)" % code
        detail = self.stderr_text()
        return paramiko.ProxyCommandFailure(" ".join(self.cmd),
                                            why + (": " + detail if detail else ""))

    def recv(self, size):
        with self._reading:
            if self._closing:
                raise EOFError()
            buffer = b""
            deadline = None
            if self.timeout is not None:
                deadline = time.monotonic() + self.timeout
            while len(buffer) < size:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self.process.stdout, self._wake_r], [], [], wait)
                if self._wake_r in ready:
                    raise EOFError()        # close() under way: the end paramiko expects
                if not ready:
                    if buffer:
                        return buffer
                    raise socket.timeout()
                chunk = os.read(self.process.stdout.fileno(), size - len(buffer))
                if not chunk:
                    if buffer:
                        return buffer
                    if self._closing:
                        raise EOFError()
                    raise self._failure("proxy command closed the connection")
                buffer += chunk
            return buffer

    def send(self, content):
        with self._writing:
            if self._closing:
                raise OSError(errno.EBADF, "proxy command closed")
            try:
                written = self.process.stdin.write(content)
            except OSError as e:
                if self._closing:
                    raise
                raise self._failure("cannot write to proxy command (%s)" % e.strerror)
        return len(content) if written is None else written

    def close(self):
        """Stop the command and release the pipes once no reader or writer uses them.

        Idempotent; paramiko calls it from the closing thread and again from the
        transport thread as that ends.
        """
        with self._closing_lock:
            if self._released:
                return
            self._closing = True
            os.write(self._wake_w, b"x")
            # a writer blocked on a full pipe gets EPIPE
            stopped = stop(self.process, self.stop_grace)
            with self._reading, self._writing:
                close_pipes(self.process)
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._stderr.close()
            if not stopped:
                reap_after_eof(self.process, self.stop_grace)
            self._released = True


def stop(process, grace=2.0):
    """Stop a child process (SIGTERM, SIGKILL after ``grace`` seconds) and reap it.

    Returns whether it ended. A child that runs as another user may refuse signals:
    ``sudo ip netns exec NS nc`` (devstack's proxy command, Rally running as the stack
    user) does while sudo changes user. Such a child is left to end on the EOF that
    closing its pipes gives it (:func:`reap_after_eof`).
    """
    if process.poll() is not None:
        return True
    try:
        process.terminate()
        process.wait(grace)
    except PermissionError:
        return False
    except subprocess.TimeoutExpired:
        try:
            process.kill()
        except PermissionError:
            return False
        process.wait()
    return True


def reap_after_eof(process, grace=2.0):
    """Wait up to ``grace`` seconds for a child that refused signals to end on EOF."""
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        LOG.warning("%s (pid %d) refused to be signalled (it runs as another user) and did "
                    "not end within %.1f s of its input closing; it is left to end by "
                    "itself (a proxy command should end on EOF: nc -q 0)",
                    " ".join(process.args) if isinstance(process.args, list)
                    else process.args, process.pid, grace)


def close_pipes(process):
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass


def terminate(process, grace=2.0):
    """Stop a child process and reap it (no zombie), closing its pipes."""
    stopped = stop(process, grace)
    close_pipes(process)
    if not stopped:
        reap_after_eof(process, grace)


def executor(client):
    """``client.execute`` as the ``execute(command, timeout)`` the runner calls.

    sshutils' second positional argument is stdin, not the timeout.
    """
    def execute(command, timeout):
        return client.execute(command, timeout=timeout)
    return execute


DEFAULT_PORT = 22


def spec_port(spec):
    """The SSH port of a host spec ({host, port, ...}): its port, else 22."""
    return spec.get("port", DEFAULT_PORT)


class SSH(sshutils.SSH):
    """Rally's SSH client with ``proxy_command`` and ``connect_timeout``.

    :param proxy_command: OpenSSH ProxyCommand-style template or None
    :param connect_timeout: seconds for TCP connect, banner and authentication
    """

    def __init__(self, user, host, port=DEFAULT_PORT, pkey=None, key_filename=None, password=None,
                 proxy_command=None, connect_timeout=5.0):
        super().__init__(user, host, port=port, pkey=pkey, key_filename=key_filename,
                         password=password)
        self.proxy_command = proxy_command or None
        self.connect_timeout = connect_timeout
        if self.proxy_command:
            expand_proxy_command(self.proxy_command, host, port, user)   # fail early

    @classmethod
    def of_spec(cls, spec, proxy_command=None, connect_timeout=None):
        """A client for a host spec ({host, port, user, key_file, password, proxy_command}).

        ``proxy_command`` and ``connect_timeout`` are the defaults where the spec has none.
        """
        return cls(spec.get("user", "root"), spec["host"], port=spec_port(spec),
                   key_filename=spec.get("key_file"), password=spec.get("password"),
                   proxy_command=spec.get("proxy_command") or proxy_command,
                   connect_timeout=connect_timeout or 5.0)

    def _where(self):
        via = " via proxy command %r" % self.proxy_command if self.proxy_command else ""
        return "%s@%s:%s%s" % (self.user, self.host, self.port, via)

    def _get_client(self):
        if self._client:
            transport = self._client.get_transport()
            if transport is not None and transport.is_active():
                return self._client
            self._lost(transport, "before the command")
        sock = client = None
        try:
            if self.proxy_command:
                sock = ProxySocket(expand_proxy_command(self.proxy_command, self.host,
                                                        self.port, self.user))
            client = paramiko.SSHClient()
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            explicit = bool(self.pkey or self.key_filename or self.password)
            client.connect(self.host, username=self.user, port=self.port, pkey=self.pkey,
                           key_filename=self.key_filename, password=self.password,
                           timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                           auth_timeout=self.connect_timeout, sock=sock,
                           allow_agent=not explicit, look_for_keys=not explicit)
            self._client = client
            return client
        except Exception as e:
            _close(client, sock)
            self._client = False
            raise exceptions.SSHError("Cannot connect to %s: %s: %s"
                                      % (self._where(), type(e).__name__, e))

    def _lost(self, transport, when):
        """Close the dead connection (the next command reconnects) and raise why it died."""
        cause = getattr(transport, "saved_exception", None)
        self.close()
        raise exceptions.SSHError("Connection to %s lost %s%s" % (
            self._where(), when, ": %s: %s" % (type(cause).__name__, cause) if cause else ""))

    def run(self, cmd, stdin=None, stdout=None, stderr=None, raise_on_error=True,
            timeout=3600):
        """Rally's ``run``, raising :class:`SSHError` when the connection dies mid-command.

        (Rally's returns exit status -1, or raises "failed with exit_status -1".)
        """
        client = self._get_client()
        try:
            result = super().run(cmd, stdin=stdin, stdout=stdout, stderr=stderr,
                                 raise_on_error=raise_on_error, timeout=timeout)
        except exceptions.SSHError:
            self._raise_if_lost(client, cmd)
            raise
        if result[0] == -1:     # no exit status: killed by a signal, or the connection died
            self._raise_if_lost(client, cmd)
        return result

    def _raise_if_lost(self, client, cmd):
        transport = client.get_transport()
        if transport is None or not transport.is_active():
            self._lost(transport, "while running %r" % (cmd,))

    def close(self):
        """Close the transport, wait for its thread to end, then release the proxy."""
        client, self._client = self._client, False
        if client:
            _close(client)


def _close(client, sock=None, join_timeout=10.0):
    """Close paramiko ``client``, wait for its transport thread, then close the proxy.

    ``sock``: the proxy when the client may have no transport yet (a failed connect).
    """
    transport = client.get_transport() if client is not None else None
    if transport is not None:
        sock = transport.sock
    if client is not None:
        client.close()
    if (transport is not None and transport.is_alive()
            and transport is not threading.current_thread()):
        transport.join(join_timeout)
    if isinstance(sock, ProxySocket):
        sock.close()


def incarnation(client, timeout=30):
    """``"<boot id> <pid 1 start ticks>"`` of the instance behind ``client``, or None."""
    try:
        rc, out, _err = client.execute(INCARNATION_COMMAND, timeout=timeout)
    except (exceptions.SSHError, exceptions.SSHTimeout, OSError):
        return None
    words = out.split()
    if rc != 0 or len(words) != 2:
        return None
    return " ".join(words)
