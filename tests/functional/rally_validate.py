"""Many tasks through ``rally task validate``'s own code path, in one process.

``rally task validate`` is ``rally.api.API(config_file).task.validate(deployment=ENV,
config=TASK)`` after rendering the file. Each CLI run pays Rally's start-up (seconds);
this worker pays it once. Run it in child processes (Rally's options and DB engine are
process-global), as :func:`validate_many` does::

    python -m tests.functional.rally_validate RALLY_CONF ENV < tasks.json > results.json

stdin: a JSON list of task configs (dicts, as a task file holds them); stdout: a
JSON list, per task, of ``{"valid": bool, "error": the message the CLI prints,
"seconds": how long it took}``.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def validate_many(home, env, tasks, workers=2, timeout=600):
    """``[{valid, error, seconds}]`` of every task, validated in ``home`` (a RallyHome).

    ``workers`` child processes share the tasks (validation is CPU-bound).
    """
    runs = []
    for index in range(workers):
        out, err = (tempfile.TemporaryFile("w+") for _ in range(2))
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.functional.rally_validate", home.conf, env],
            stdin=subprocess.PIPE, stdout=out, stderr=err, text=True, env=home.env(),
            cwd=ROOT)
        proc.stdin.write(json.dumps(tasks[index::workers]))
        proc.stdin.close()
        runs.append((proc, out, err))
    results = [None] * len(tasks)
    for index, (proc, out, err) in enumerate(runs):
        proc.wait(timeout)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise AssertionError("rally_validate exited %d:\n%s"
                                 % (proc.returncode, err.read()[-4000:]))
        results[index::workers] = json.load(out)
        out.close()
        err.close()
    return results


def main(conf, env):
    from rally import api as rally_api
    from rally import plugins

    tasks = json.load(sys.stdin)
    api = rally_api.API(config_file=conf)
    plugins.load()      # as the CLI does: Rally's plugins and ours (the entry point)
    results = []
    for task in tasks:
        start = time.monotonic()
        try:
            api.task.validate(deployment=env, config=task)
        except Exception as e:
            # what `rally task validate` prints after "Input task is invalid!"
            message = e.format_message() if hasattr(e, "format_message") else str(e)
            results.append({"valid": False, "error": "%s: %s" % (type(e).__name__, message)})
        else:
            results.append({"valid": True, "error": ""})
        results[-1]["seconds"] = round(time.monotonic() - start, 3)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    # Rally logs to stderr; stdout carries only the results.
    main(*sys.argv[1:3])
