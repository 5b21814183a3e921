"""Containers of the project's Docker workload image as SSH targets for tests.

The engine and the image come from the project's own scripts
(tools/docker/ensure-dockerd, tools/images/docker/build: debootstrap + docker import,
no registry). Containers use host networking and listen on free 127.0.0.1 ports only; they
run in the host's user namespace (--userns host), which an engine that remaps user namespaces
requires for host networking, and which keeps the mounted key file (root's, 0600) readable.
"""

import os
import subprocess

import fixtures

from tests.functional import sshd

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = "vmct-workload:latest"
# On an engine that remaps user namespaces the image's files belong to the remapped root (uid
# 100000) even in a --userns host container (Docker shares the remapped layers): sshd refuses
# a privilege separation directory and a home that are not root's. Root here is the host's
# root: it takes them back (a no-op on an engine that does not remap).
SSHD_OWNED = "chown 0:0 /root /root/.ssh /run/sshd && "


def ensure_image():
    """Start the engine and build the workload image if needed (cached rootfs)."""
    subprocess.run([os.path.join(ROOT, "tools", "docker", "ensure-dockerd")], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([os.path.join(ROOT, "tools", "images", "docker", "build"),
                    "--tag", IMAGE], check=True, stdout=subprocess.DEVNULL)


class Container(fixtures.Fixture):
    """One container of the workload image running ``command`` (a shell line)."""

    def __init__(self, command, mounts=()):
        super().__init__()
        self.command = command
        self.mounts = mounts

    def _setUp(self):
        argv = ["docker", "run", "-d", "--rm", "--network", "host", "--userns", "host",
                "--label", "vmct-test=1"]
        for source, target in self.mounts:
            argv += ["-v", "%s:%s:ro" % (source, target)]
        argv += [IMAGE, "sh", "-c", self.command]
        self.id = subprocess.run(argv, check=True, stdout=subprocess.PIPE,
                                 text=True).stdout.strip()
        self.addCleanup(subprocess.run, ["docker", "rm", "-f", self.id],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def logs(self):
        return subprocess.run(["docker", "logs", self.id], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True).stdout


class SSHContainer(fixtures.Fixture):
    """A workload-image container answering SSH as root on 127.0.0.1:``port``."""

    user = "root"
    host = "127.0.0.1"

    def _setUp(self):
        path = self.useFixture(fixtures.TempDir()).path
        self.key_file = os.path.join(path, "id_ed25519")
        sshd.keygen(self.key_file)
        os.chmod(path, 0o755)
        self.port = sshd.free_port()
        self.container = self.useFixture(Container(
            "mkdir -p /run/sshd && " + SSHD_OWNED + "exec /usr/sbin/sshd -D -e -p %d "
            "-o ListenAddress=127.0.0.1" % self.port,
            mounts=[(self.key_file + ".pub", "/root/.ssh/authorized_keys")]))
        sshd.wait_for_banner(self.host, self.port)
