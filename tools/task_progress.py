"""How far a running ``rally task start`` is: iterations done of the total it will run.

usage: task_progress.py plan TASK_FILE [--task-args-file FILE] [--task-args JSON] > PLAN
       task_progress.py status PLAN RALLY_LOG

``plan`` renders TASK_FILE with its arguments as ``rally task start`` does (Rally's own
template rendering and task config, so the same defaults apply) and prints every workload with
its iterations as JSON; run it with the Python of the Rally that runs the task. ``status``
reads RALLY_LOG (the output of that ``rally task start``) for the iterations ended so far and
the workloads finished, and prints one line, e.g.
``iterations 12/46, workload 4/13: VMCT.boot_and_benchmark (docker)``; it needs only the
standard library.
"""

import argparse
import json
import os
import re
import sys

ITER_END = re.compile(r"\| ITER: \d+ END")
WORKLOAD_DONE = "Finished workload "


# plan's imports are local: status runs under any Python, without Rally or PyYAML
def task_args(args_file, args_json):
    """The task's arguments, the JSON over the file as ``rally task start`` merges them."""
    import yaml

    values = {}
    if args_file:
        with open(args_file) as f:
            values.update(yaml.safe_load(f) or {})
    if args_json:
        values.update(yaml.safe_load(args_json) or {})
    return values


def workloads(task_file, values):
    """[(label, iterations or None)] of every workload, in the order Rally runs them."""
    import yaml
    from rally import api
    from rally.task import task_cfg

    with open(task_file) as f:
        rendered = api._Task(None).render_template(
            task_template=f.read(), template_dir=os.path.dirname(task_file), **values)
    found = []
    for subtask in task_cfg.TaskConfig(yaml.safe_load(rendered)).subtasks:
        for w in subtask["workloads"]:
            kind = w["args"].get("kind")
            kind = kind.get("name") if isinstance(kind, dict) else kind
            label = w["name"] + (" (%s)" % kind if kind else "")
            found.append((label, w["runner"].get("times")))
    return found


def progress(planned, log_text):
    iterations = len(ITER_END.findall(log_text))
    done = log_text.count(WORKLOAD_DONE)
    counts = [times for _, times in planned]
    total = "%d" % sum(counts) if None not in counts else "?"
    line = "iterations %d/%s" % (iterations, total)
    if done < len(planned):
        line += ", workload %d/%d: %s" % (done + 1, len(planned), planned[done][0])
    else:
        line += ", all %d workloads finished" % len(planned)
    return line


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan")
    plan.add_argument("task_file")
    plan.add_argument("--task-args-file")
    plan.add_argument("--task-args")
    status = sub.add_parser("status")
    status.add_argument("plan")
    status.add_argument("rally_log")
    args = parser.parse_args(argv)
    if args.command == "plan":
        values = task_args(args.task_args_file, args.task_args)
        json.dump(workloads(args.task_file, values), sys.stdout)
        return 0
    with open(args.plan) as f:
        planned = json.load(f)
    try:
        with open(args.rally_log, errors="replace") as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    print(progress(planned, text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
