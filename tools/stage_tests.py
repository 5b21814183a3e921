"""Run one stage's test suite with stestr and keep exactly this run's results.

usage: stage_tests.py run NAME TEST_PATH [--concurrency N] [--exclude-regex RE] [--filter RE]
                         [--first-worker FILE]
       stage_tests.py skip NAME TEST_PATH REASON

``run`` gives stestr a repository of its own, made empty for this run
($VMCT_RESULTS/stestr/NAME), and writes its subunit stream straight to
$VMCT_RESULTS/NAME.subunit: nothing is read back with ``stestr last``, which returns an
earlier run (possibly another stage's) when discovery fails before a run is saved. The
human-readable trace goes to $VMCT_RESULTS/NAME.log. When stestr cannot run the suite (a test
module that fails to import, a syntax error) or finds no test, the stream gets one failed
result, ``NAME.discovery``, carrying stestr's own message, which names the module.

``--first-worker FILE`` (with two workers) runs the test modules FILE lists, one a line, on the
first worker and every other module on the second. stestr splits classes by count when it has
no times (each run starts from an empty repository), which left one worker idle for minutes
while the other ran the slow classes; FILE names the slow ones.

``skip`` lists the suite's tests without running them and records each as skipped with
REASON, so a stage left out by a variable shows up as N skipped.

Runs under any Python that has stestr (the project's .venv, nova-docker's), from the current
directory, which must hold the suite's .stestr.conf top directory.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import subunit
import testtools

from subunit_result import write_result  # tools/, this script's own folder


class Collect(testtools.StreamResult):
    """Test ids with a final status, and the text stestr printed outside the stream.

    With ``log``, each result is written there as it arrives: ``<status> <test id>``.
    """

    def __init__(self, log=None):
        super().__init__()
        self.ids = set()
        self.text = []
        self.log = log

    def status(self, test_id=None, test_status=None, file_name=None, file_bytes=None,
               **kwargs):
        if test_id and test_status not in (None, "exists", "inprogress"):
            self.ids.add(test_id)
            if self.log:
                self.log.write(("%s %s\n" % (test_status, test_id)).encode())
                self.log.flush()
        elif not test_id and file_bytes:
            self.text.append(bytes(file_bytes).decode("utf-8", "replace"))


class Tee:
    """A readable stream that copies what is read from it into ``copy``."""

    def __init__(self, source, copy):
        self.source, self.copy = source, copy

    def read(self, size=-1):
        data = self.source.read(size)
        self.copy.write(data)
        return data


def read(stream, log=None):
    collect = Collect(log)
    subunit.ByteStreamToStreamResult(stream, non_subunit_name="stdout").run(collect)
    return collect


def stestr(*args):
    return [sys.executable, "-m", "stestr"] + list(args)


def fresh_repo(results, name):
    repo = os.path.join(results, "stestr", name)
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    return repo


def worker_groups(modules):
    """stestr's worker file for two workers: ``modules`` on the first, the others on the second."""
    names = "|".join(re.escape(m) for m in modules)
    return [{"worker": [r"^(%s)\." % names]}, {"worker": [r"^(?!(%s)\.)" % names]}]


def read_modules(path):
    """The module names a file lists, one a line, without comments and blank lines."""
    with open(path) as f:
        return [line.split("#")[0].strip() for line in f if line.split("#")[0].strip()]


def run(args, results):
    repo = fresh_repo(results, args.name)
    stream_path = os.path.join(results, args.name + ".subunit")
    log_path = os.path.join(results, args.name + ".log")
    # --parallel-class: a class's tests share one worker, so its setUpClass (a Rally DB, a
    # fake cloud, hundreds of task validations) runs once, not once a worker
    cmd = stestr("--repo-url", repo, "--test-path", args.test_path, "--parallel-class", "run",
                 "--subunit", "--concurrency", str(args.concurrency))
    if args.exclude_regex:
        cmd += ["--exclude-regex", args.exclude_regex]
    if args.first_worker:
        workers = repo + "-workers.yaml"    # JSON is YAML
        with open(workers, "w") as f:
            json.dump(worker_groups(read_modules(args.first_worker)), f, indent=1)
        cmd += ["--worker-file", workers]
    if args.filter:
        cmd += [args.filter]
    with open(stream_path, "wb") as stream, open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log)
        # one pass: the stream saved as it comes, each result logged for whoever tails the log
        found = read(Tee(proc.stdout, stream), log)
        rc = proc.wait()
    if rc == 0 and found.ids:
        return 0
    with open(log_path, "rb") as log:
        stderr = log.read().decode("utf-8", "replace")
    if found.ids:
        why = "stestr exited %d after %d results from %s" % (rc, len(found.ids), args.test_path)
    else:
        why = "no test ran from %s (stestr exited %d)" % (args.test_path, rc)
    with open(stream_path, "ab") as stream:
        write_result(stream, args.name + ".discovery", "fail",
                     "\n".join([why, "".join(found.text), stderr[-20000:]]))
    print("%s: %s" % (args.name, why))
    return 0


def skip(args, results):
    repo = fresh_repo(results, args.name)
    subprocess.run(stestr("--repo-url", repo, "init"), capture_output=True, check=True)
    proc = subprocess.run(stestr("--repo-url", repo, "--test-path", args.test_path, "list"),
                          capture_output=True, text=True)
    ids = [line for line in proc.stdout.splitlines() if line.strip()]
    with open(os.path.join(results, args.name + ".subunit"), "wb") as stream:
        if proc.returncode or not ids:
            write_result(stream, args.name + ".discovery", "fail",
                         "cannot list %s to skip it:\n%s" % (args.test_path, proc.stderr))
        for test_id in ids:
            write_result(stream, test_id, "skip", args.reason)
    print("%s: %d tests skipped: %s" % (args.name, len(ids), args.reason))
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("run", "skip"):
        p = sub.add_parser(command)
        p.add_argument("name")
        p.add_argument("test_path")
        if command == "run":
            p.add_argument("--concurrency", type=int, default=1)
            p.add_argument("--exclude-regex")
            p.add_argument("--filter", help="run only the tests whose id matches this regex")
            p.add_argument("--first-worker", metavar="FILE",
                           help="two workers: the test modules FILE lists on the first")
        else:
            p.add_argument("reason")
    args = parser.parse_args(argv)
    results = os.environ.get("VMCT_RESULTS") or parser.error("VMCT_RESULTS is not set")
    return (run if args.command == "run" else skip)(args, results)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
