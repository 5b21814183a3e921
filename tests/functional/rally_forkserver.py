"""Run ``rally`` commands in forks of one process that has already loaded Rally.

Each ``rally`` process spends about two seconds importing Rally, rally-openstack
and our plugins before it reads its arguments; the functional tests run a few
hundred of them. The server imports and loads every plugin once, then forks a
child per command, which runs the console script's own ``rally.cli.main.main``
with the command's argv, environment and working directory, its stdout and
stderr going to a file. The result is what ``subprocess.run`` of the console
script gives, seconds earlier. ``VMCT_TEST_RALLY_FORK=0`` runs the console script
instead.

Protocol (one Unix socket connection per command): the client sends one JSON
line ``{"argv", "env", "cwd", "out"}``; the child answers ``{"pid": N}`` and,
when the command ends, ``{"exit": CODE}``.
"""

import json
import os
import signal
import socket
import sys
import traceback


def _run_command(conn):
    """In the forked child: run one command; never returns."""
    code = 1
    try:
        request = json.loads(conn.makefile("r").readline())
        conn.sendall(b'{"pid": %d}\n' % os.getpid())
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.argv = ["rally"] + request["argv"]
        code = _main(request["argv"])
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            conn.sendall(b'{"exit": %d}\n' % code)
        finally:
            os._exit(code)


def _main(argv):
    from rally.cli import main as cli_main
    try:
        cli_main.main(argv)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    return 0


def serve(path):
    """Load Rally and its plugins, then fork a child per connection on ``path``."""
    import rally.cli.main  # noqa: F401  (the imports are what the server saves)
    import rally.plugins
    rally.plugins.load()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # children reap themselves
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(16)
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _run_command(conn)
        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
