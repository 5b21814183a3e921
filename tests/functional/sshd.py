"""A real OpenSSH server on a free 127.0.0.1 port, for tests that SSH somewhere.

The fixture makes a host key, a client key pair and a config in a temp dir, runs
``sshd -D`` as root (the machine's own user, so the tools it runs are the host's:
this is what the native baseline measures) and stops it on cleanup.
"""

import os
import socket
import subprocess
import time

import fixtures

SSHD = "/usr/sbin/sshd"

CONFIG = """\
ListenAddress 127.0.0.1
Port {port}
HostKey {path}/host_ed25519
AuthorizedKeysFile {path}/authorized_keys
PidFile {path}/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_banner(host, port, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), 0.5) as sock:
                if sock.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("no SSH banner on %s:%d after %ss" % (host, port, timeout))
        time.sleep(0.05)


def keygen(path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path],
                   check=True, stdout=subprocess.DEVNULL)


class SSHServer(fixtures.Fixture):
    """sshd on 127.0.0.1:``port``; log in as ``user`` with ``key_file``."""

    user = "root"
    host = "127.0.0.1"

    def _setUp(self):
        self.path = self.useFixture(fixtures.TempDir()).path
        self.port = free_port()
        keygen(os.path.join(self.path, "host_ed25519"))
        self.key_file = os.path.join(self.path, "client_ed25519")
        keygen(self.key_file)
        with open(self.key_file + ".pub") as pub, \
                open(os.path.join(self.path, "authorized_keys"), "w") as auth:
            auth.write(pub.read())
        config = os.path.join(self.path, "sshd_config")
        with open(config, "w") as f:
            f.write(CONFIG.format(port=self.port, path=self.path))
        # Privilege separation directory, normally made by the init system.
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", config],
                                        stdout=subprocess.DEVNULL,
                                        stderr=open(os.path.join(self.path, "sshd.log"), "w"))
        self.addCleanup(self._stop)
        wait_for_banner(self.host, self.port)

    def _stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
