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
"""After / before of interleaved spawn-gap runs: the ratio, its interval, per level.

    python tools/bench/ab_compare.py RESULTS.jsonl [--metric ssh|build] [--kind docker]

RESULTS.jsonl holds ``tools/bench/spawn-gap --json`` lines whose labels are
``before-<block>`` and ``after-<block>``: blocks of the two codes run one after the other
(ABAB...), so drift falls on both sides. Per concurrency level it prints the ratio
after / before of geometric means by the comparison page's rule
(:func:`rally_vmct.inference.compare`, Welch t on log values, Hsu df) twice: with the
blocks as the replicates (each block's geometric mean; the unit at which the code, the
engine and the cloud's moment vary) and with the servers (what the interval would be if
every boot were independent). The first is the one to quote.
"""

import argparse
import collections
import json
import math
import sys

from rally_vmct import inference


def load(path, metric, kind):
    """{(side, level): {block: [seconds]}} of the lines of ``kind``."""
    found = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            side, _, block = row["label"].partition("-")
            if row["kind"] != kind or side not in ("before", "after"):
                continue
            if row[metric] is not None:
                found[(side, row["concurrency"])][block].append(row[metric])
    return found


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def line(name, after, before):
    r = inference.compare(inference.sample(after), inference.sample(before), 0.05)
    if r["ratio_ci_low"] is None:
        return "  %-24s ×%s (no interval: %s)" % (name, r["ratio"], r["ratio_note"])
    return "  %-24s after/before ×%.3f, 95 %% interval [%.3f, %.3f] (N %d / %d)" % (
        name, r["ratio"], r["ratio_ci_low"], r["ratio_ci_high"], len(after), len(before))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results")
    parser.add_argument("--metric", choices=("ssh", "build"), default="ssh")
    parser.add_argument("--kind", default="docker")
    args = parser.parse_args(argv)
    found = load(args.results, args.metric, args.kind)
    for level in sorted({level for _, level in found}):
        before, after = found[("before", level)], found[("after", level)]
        print("concurrency %d, %s %s (create request to %s), %d before and %d after blocks:"
              % (level, args.kind, args.metric, "the SSH banner" if args.metric == "ssh"
                 else "ACTIVE", len(before), len(after)))
        print(line("blocks (geometric means)",
                   [geometric_mean(v) for v in after.values()],
                   [geometric_mean(v) for v in before.values()]))
        print(line("servers", [x for v in after.values() for x in v],
                   [x for v in before.values() for x in v]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
