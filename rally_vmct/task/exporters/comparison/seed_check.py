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
"""Seed check: does this run agree with the seed studies' published directions?

The seeds (KEK's HEPiX 2015 study and HPE's KVM vs Docker in OpenStack) published
directions, e.g. "container boot is faster than VM boot". For each, :func:`plan`
picks the kinds that play the roles (VM, container, native: from the facts'
``virtualization`` when recorded, else from the kind's name) and the page metric
that measures it, at the lowest concurrency the candidate has. :func:`evaluate`
then tests them as **one confirmatory family of their own**, apart from the page's
exploratory cells:

* each direction (seed x kind pair) is one hypothesis; a direction with several
  metrics (fileio modes; cpu and memory) holds only when every metric does (an
  intersection-union test, whose p is the largest of its metrics' and which needs
  no correction within the direction);
* Holm's step-down over the directions at ``alpha``
  (:func:`rally_vmct.stats.holm_levels`); each row's ratio and interval
  come from the page's one rule (:mod:`rally_vmct.inference`) at the
  level Holm's step used for its direction, so verdict and interval agree;
* **agrees**: the interval excludes 1 in the published direction; for "within 5 %
  of native", two one-sided tests (TOST): the ``1 - 2 level`` interval lies in
  [0.95, 1.05];
* **disagrees**: the interval excludes 1 the other way; for the band, the
  ``1 - level`` interval lies wholly outside it;
* **cannot tell**, with the reason and what would tell: the ratios this N and
  spread could detect (80 % power) and the N per side that would detect the
  published effect;
* **no published direction** (hard reboot): what this run shows, for the record,
  outside the family.

Pure Python on the comparison's plain dicts; no Rally import.
"""

import collections
import math

from rally_vmct.task import output
from rally_vmct.workloads import facts
from rally_vmct import inference
from rally_vmct import stats

VM, CONTAINER, NATIVE = "VM", "container", "native"
AGREES, DISAGREES, CANNOT_TELL = "agrees", "disagrees", "cannot tell"
NO_DIRECTION = "no published direction"
BETTER, WORSE, EQUIVALENT = "better", "worse", "equivalent"
BAND = 0.05                    # KEK: containers within 2-5 % of native
FALLBACK_PATH = "soft_fell_back_to_hard"

Seed = collections.namedtuple(
    "Seed", ["id", "source", "claim", "published", "candidate", "baseline", "expected",
             "select", "effect"])
Seed.__doc__ = """A published direction. ``effect``: the published change as a fraction
(0.28 for "28 % faster"; for an equivalence, the difference assumed when asking what
N would show it), for "what would tell"."""
CORRECTION = "holm"

_CONTAINER_WORDS = ("container", "docker", "lxc", "lxd", "podman", "zun")
_NATIVE_WORDS = ("bare metal", "bare-metal", "baremetal", "native", "ironic")
_VM_WORDS = ("kvm", "qemu", "tcg", "xen", "hyper-v", "hyperv", "vmware", "esx",
             "libvirt", "virtual machine", "hardware-assisted", "emulated", "vm")


# -- roles --------------------------------------------------------------------

def _role_from_text(text, name=False):
    lowered = text.lower()
    if any(word in lowered for word in _CONTAINER_WORDS):
        return CONTAINER
    if lowered.startswith("none") or any(word in lowered for word in _NATIVE_WORDS):
        return NATIVE
    words = lowered.replace("-", " ").replace("_", " ").split()
    for word in _VM_WORDS:
        if word in lowered and (not name or len(word) > 2 or word in words
                                or lowered.startswith(word)):
            return VM
    return None


def _recorded(entry, key):
    """The recorded values of one fact of a kind's environment entry, most frequent first."""
    fact = next((f for f in entry["facts"] if f["key"] == key), None)
    return [v["value"] for v in (fact or {}).get("values", ())
            if v["value"] not in ("not recorded", "(empty)")]


def kind_roles(kinds, environment):
    """``[{"kind", "role", "basis", "emulated"}]``: which kind is a VM, a container.

    The most frequent recorded ``virtualization`` decides; without it the name
    (docker -> container; kvm, qemu... -> VM; native -> native). ``role`` is None
    for kinds that are neither (e.g. Nova's fake driver).
    """
    env = {entry["kind"]: entry for entry in environment or ()}
    out = []
    for kind in kinds:
        entry = env.get(kind) or {"facts": [], "emulated": False}
        recorded = _recorded(entry, "virtualization")
        role = _role_from_text(recorded[0]) if recorded else None
        if kind == output.NATIVE_KIND or any(
                v.startswith(facts.NOT_NOVA) for v in _recorded(entry, "nova_hypervisor_type")):
            # the baseline is this host whatever it runs on (a VM itself, maybe): say so
            role, basis = NATIVE, "the native baseline (VMCT.native_benchmark, not a Nova " \
                "instance)" + ("; the host itself: %s" % recorded[0] if recorded else "")
        elif role is not None:
            basis = "facts: virtualization %r" % recorded[0]
        else:
            role = _role_from_text(kind, name=True)
            basis = "its name" if role else "neither its facts nor its name say"
        out.append({"kind": kind, "role": role, "basis": basis,
                    "emulated": bool(entry.get("emulated"))})
    return out


# -- metric selection ---------------------------------------------------------

def _find(metrics, source, names, group=None):
    for name in names:
        for metric in metrics:
            if (metric["source"] == source and metric["metric"] == name
                    and (group is None or metric["group"] == group)):
                return metric
    return None


def _boot(metrics):
    both = _find(metrics, "chart", ("build_and_network",), "lifecycle")
    if both:
        return [(both, None)]
    build = _find(metrics, "atomic", ("vmct.build", "nova.boot_server"))
    if build:
        return [(build, "build only: these results have no build + network figure "
                        "(lifecycle chart row build_and_network)")]
    return []


def _atomic(*names):
    def select(metrics):
        found = _find(metrics, "atomic", names)
        return [(found, None)] if found else []
    return select


def _headlines(categories, direct_only=False):
    def select(metrics):
        return [(m, None) for m in metrics if m.get("headline") in categories
                and (not direct_only or "direct" in m["group"].split())]
    return select


SEEDS = (
    Seed("a", "KEK, HPE", "container boot (build + wait for network) is faster than VM "
         "boot", "28 % faster (HPE)", CONTAINER, VM, BETTER, _boot, 0.28),
    Seed("b", "HPE", "container delete is faster than VM delete", "34 % faster",
         CONTAINER, VM, BETTER, _atomic("vmct.delete", "nova.delete_server"), 0.34),
    Seed("c", "HPE", "container soft reboot is faster than VM soft reboot", "96 % faster",
         CONTAINER, VM, BETTER, _atomic("vmct.reboot_soft", "vmct.reboot (soft)"), 0.96),
    Seed("d", "none", "container hard reboot vs VM hard reboot (reported as measured)",
         NO_DIRECTION, CONTAINER, VM, None,
         _atomic("vmct.reboot_hard", "vmct.reboot (hard)"), None),
    Seed("e", "KEK", "VM fileio with O_DIRECT is worse than native at low concurrency",
         "60–80 % worse", VM, NATIVE, WORSE, _headlines(("fileio",), direct_only=True), 0.6),
    Seed("f", "KEK", "container cpu and memory are within 2–5 % of native",
         "within 2–5 %", CONTAINER, NATIVE, EQUIVALENT, _headlines(("cpu", "memory")),
         0.02),
)


# -- planning -----------------------------------------------------------------

def metric_key(item):
    """Identity of a metric (or of a group row's metric) as a tuple."""
    return (item["source"], item["group"], item["metric"], item["unit"],
            item.get("dialect"), item.get("sysbench_mode"))


def _levels(groups):
    """``{(kind, metric key): sorted concurrencies with samples}``."""
    levels = collections.defaultdict(set)
    for row in groups:
        if row["n"]:
            levels[(row["kind"], metric_key(row))].add(row["concurrency"])
    return {key: sorted(value) for key, value in levels.items()}


def _nearest(levels, concurrency):
    return min(levels, key=lambda c: (abs(math.log2(c) - math.log2(concurrency)), c))


def _base_check(seed, candidate=None, baseline=None):
    return {"id": seed.id, "source": seed.source, "claim": seed.claim,
            "published": seed.published, "expected": seed.expected,
            "candidate_role": seed.candidate, "baseline_role": seed.baseline,
            "candidate": candidate, "baseline": baseline, "metric": None,
            "concurrency": None, "baseline_concurrency": None, "notes": [],
            "missing": None}


def _pair_checks(seed, metrics, levels, cand, base):
    selected = seed.select(metrics)
    if not selected:
        check = _base_check(seed, cand, base)
        check["missing"] = "no metric for it in these results"
        return [check]
    checks = []
    for metric, note in selected:
        check = _base_check(seed, cand, base)
        check["metric"] = metric
        if note:
            check["notes"].append(note)
        key = metric_key(metric)
        mine, theirs = levels.get((cand, key)), levels.get((base, key))
        if not mine or not theirs:
            check["missing"] = "%s has no samples of %s" % (
                cand if not mine else base, metric["label"])
        else:
            common = sorted(set(mine) & set(theirs))
            check["concurrency"] = common[0] if common else mine[0]
            check["baseline_concurrency"] = (common[0] if common
                                             else _nearest(theirs, mine[0]))
        checks.append(check)
    return checks


def plan(kinds, environment, metrics, groups):
    """The checks to make: one per seed direction x kind pair x metric.

    Returns ``(roles, checks)``; a check names its kinds, metric and concurrencies,
    or says in ``missing`` why it cannot be made.
    """
    roles = kind_roles(kinds, environment)
    by_role = collections.defaultdict(list)
    for entry in roles:
        by_role[entry["role"]].append(entry["kind"])
    levels = _levels(groups)
    checks = []
    for seed in SEEDS:
        cands, bases = by_role.get(seed.candidate, []), by_role.get(seed.baseline, [])
        if not cands or not bases:
            check = _base_check(seed)
            lacking = seed.candidate if not cands else seed.baseline
            check["missing"] = "no %s kind among %s" % (
                lacking, ", ".join(kinds) or "no kinds")
            checks.append(check)
            continue
        for cand in cands:
            for base in bases:
                checks.extend(_pair_checks(seed, metrics, levels, cand, base))
    return roles, checks


# -- comparisons --------------------------------------------------------------

COMPARISON_FIELDS = inference.FIELDS + (
    "family_level", "tost_low", "tost_high", "p_decision", "direction_metrics",
    "would_tell")


def attach(checks, groups):
    """Give each plannable check its two group rows (candidate, baseline)."""
    index = {(row["kind"], row["concurrency"], metric_key(row)): row for row in groups}
    for check in checks:
        if check["missing"] or check["metric"] is None:
            continue
        key = metric_key(check["metric"])
        check["_rows"] = (index[(check["candidate"], check["concurrency"], key)],
                          index[(check["baseline"], check["baseline_concurrency"], key)])


# -- verdicts -----------------------------------------------------------------

def _observed(ratio, direction):
    """``"better"``/``"worse"``/``"equal"`` of the candidate, None if unknown."""
    if ratio is None or direction not in ("higher", "lower"):
        return None
    if ratio == 1:
        return "equal"
    return BETTER if (ratio > 1) == (direction == "higher") else WORSE


def difference_text(ratio, direction):
    """``"75.0 % faster"`` / ``"12.5 % worse"`` of the candidate; "" when unknown."""
    if ratio is None:
        return ""
    if ratio == 1:
        return "no difference"
    words = {"lower": ("faster", "slower"), "higher": ("better", "worse")}.get(
        direction, ("lower", "higher"))
    below = ratio < 1
    if direction == "higher":
        below = not below
    return "%.1f %% %s" % (abs(1.0 - ratio) * 100, words[0] if below else words[1])


def published_ratio(seed, direction):
    """The candidate / baseline ratio the seed published for a metric of ``direction``."""
    if seed.expected == EQUIVALENT:
        return 1.0 - seed.effect
    if seed.expected is None or direction not in ("higher", "lower"):
        return None
    smaller = (seed.expected == BETTER) == (direction == "lower")
    return 1.0 - seed.effect if smaller else 1.0 / (1.0 - seed.effect)


def _pct(level):
    return "%.4g %%" % (100 * level)


def _decision_p(check, result, alpha):
    """``(p of "agrees", p of "disagrees")`` of one row at the family's alpha."""
    if result.get("p_value") is None:
        return None, None
    if check["expected"] == EQUIVALENT:
        _, p_equal, p_out, _ = inference.band_decision(result, BAND, alpha)
        return p_equal, p_out
    observed = _observed(result["ratio"], check["metric"]["direction"])
    if observed not in (BETTER, WORSE):
        return 1.0, 1.0
    p = result["p_value"]
    return (p, 1.0) if observed == check["expected"] else (1.0, p)


def _directions(checks, compare, alpha):
    """``{direction key: [checks]}`` of the testable checks with their decision p."""
    directions = collections.OrderedDict()
    for check in checks:
        metric = check["metric"] or {}
        if (check["missing"] or check["expected"] is None
                or metric.get("direction") not in ("higher", "lower")):
            continue
        result = compare(*check["_rows"], alpha)
        check["_p"] = _decision_p(check, result, alpha)
        if check["_p"][0] is None:
            continue
        key = (check["id"], check["candidate"], check["baseline"])
        directions.setdefault(key, []).append(check)
    return directions


def _family(checks, compare, alpha):
    """Holm over the testable directions; sets each check's ``_level``/``_agree``.

    A direction with several metrics (fileio modes; cpu and memory) is one
    hypothesis: it agrees (or disagrees) only when each of its metrics does, an
    intersection-union test (Berger 1982) whose p is the largest of its metrics'
    and needs no correction within the direction.
    """
    directions = _directions(checks, compare, alpha)
    keys = list(directions)
    agree = [max(c["_p"][0] for c in directions[k]) for k in keys]
    disagree = [max(c["_p"][1] for c in directions[k]) for k in keys]
    decisions = stats.holm_levels([min(a, d) for a, d in zip(agree, disagree)], alpha)
    for key, p_agree, p_disagree, (rejected, level) in zip(keys, agree, disagree,
                                                           decisions):
        outcome = None
        if rejected:
            outcome = AGREES if p_agree <= p_disagree else DISAGREES
        for check in directions[key]:
            check.update(_level=level, _outcome=outcome, _family_size=len(keys),
                         _direction_size=len(directions[key]),
                         _p_decision=min(p_agree, p_disagree))
    return len(keys)


def _would_tell(seed_effect, result, cand_row, base_row, level, equivalence):
    """What would tell: detectable ratios at this N, N per side for the published effect."""
    if result.get("rule") != inference.RULE_LOG:
        return None
    sd_a, sd_b = cand_row.get("log_sd"), base_row.get("log_sd")
    if sd_a is None or sd_b is None or seed_effect is None:
        return None
    band = (math.log(1 - BAND), math.log(1 + BAND)) if equivalence else None
    n = stats.n_per_side(math.log(seed_effect), sd_a, sd_b, level, band=band)
    text = ""
    if result.get("detectable_low") is not None and not equivalence:
        text = ("at N = %d vs %d and these spreads a test at α = %.3g detects (80 %% "
                "power) only ratios below ×%.3g or above ×%.3g; "
                % (cand_row["n"], base_row["n"], level, result["detectable_low"],
                   result["detectable_high"]))
    what = ("equivalence within ±%g %% if the true ratio is ×%.3g" % (100 * BAND, seed_effect)
            if equivalence else "the published ×%.3g" % seed_effect)
    text += ("%s per side would show %s (80 %% power at α = %.3g)"
             % ("N ≈ %d" % n if n else "no N up to 100000", what, level))
    return {"text": text, "n_per_side": n, "published_ratio": seed_effect}


def _row_verdict(check, result, level, band_interval):
    """``(verdict, reason)`` of a checked row from its interval at the family's level."""
    ratio = result.get("ratio")
    rule = inference.RULE_TEXT.get(result.get("rule"), "no rule")
    pct = _pct(1 - level)
    if ratio is None:
        return CANNOT_TELL, "no ratio: %s" % (result.get("ratio_note") or "no data")
    if result.get("ratio_ci_low") is None:
        return CANNOT_TELL, "no interval: %s" % (
            "unbounded (the baseline mean is not significantly different from 0)"
            if result.get("ratio_ci_unbounded") else result.get("ratio_note") or "N < 2")
    outcome = check.get("_outcome")
    share = ("the direction's %d metrics each" % check["_direction_size"]
             if check.get("_direction_size", 1) > 1 else "")
    if check["expected"] == EQUIVALENT:
        low, high = band_interval
        if outcome == AGREES:
            return AGREES, "TOST: the %s interval [%.4g, %.4g] lies within ±%g %%%s (%s)" % (
                _pct(1 - 2 * level), low, high, 100 * BAND,
                "; so do " + share if share else "", rule)
        if outcome == DISAGREES:
            return DISAGREES, "the %s interval lies wholly outside ±%g %%%s (%s)" % (
                pct, 100 * BAND, "; so do " + share if share else "", rule)
        return CANNOT_TELL, ("neither the %s interval [%.4g, %.4g] lies within ±%g %% (TOST) "
                             "nor the %s interval wholly outside it%s (%s)"
                             % (_pct(1 - 2 * level), low, high, 100 * BAND, pct,
                                " in all of " + share.replace(" each", "")
                                if share else "", rule))
    if outcome == AGREES:
        return AGREES, "the %s interval excludes 1, in the published direction%s (%s)" % (
            pct, "; so do " + share if share else "", rule)
    if outcome == DISAGREES:
        return DISAGREES, "the %s interval excludes 1, opposite to the published " \
            "direction%s (%s)" % (pct, "; so do " + share if share else "", rule)
    if result.get("significant"):
        return CANNOT_TELL, ("this metric's %s interval excludes 1, but not all of %s "
                             "go the same way at this level (%s)"
                             % (pct, share.replace(" each", "") or "the direction", rule))
    return CANNOT_TELL, "the %s interval contains 1 (%s)" % (pct, rule)


def _evaluate_check(check, result, compare, alpha, seeds):
    """Fill ``result`` (a JSON-ready dict) for one planned check."""
    cand_row, base_row = check["_rows"]
    result["candidate_stats"] = _stats(cand_row)
    result["baseline_stats"] = _stats(base_row)
    level = check.get("_level", alpha)
    comp = compare(cand_row, base_row, level)
    result.update({k: comp.get(k) for k in inference.FIELDS})
    result["family_level"] = level
    result["p_decision"] = check.get("_p_decision")
    result["direction_metrics"] = check.get("_direction_size")
    direction = result["direction"]
    seen = difference_text(comp.get("ratio"), direction)
    if check["expected"] is None:
        result["verdict"] = NO_DIRECTION
        result["reason"] = "for the record, outside the confirmatory family: the %s " \
            "interval %s 1" % (_pct(1 - alpha), "excludes" if comp.get("significant")
                               else "contains")
        result["observed"] = seen
        return
    if direction not in ("higher", "lower"):
        result.update(verdict=CANNOT_TELL, observed=seen,
                      reason="the metric's unit says nothing of better or worse")
        return
    band_interval = None
    if check["expected"] == EQUIVALENT:
        _, _, _, band_interval = inference.band_decision(comp, BAND, level)
        if band_interval:
            result["tost_low"], result["tost_high"] = band_interval
    if check["expected"] == EQUIVALENT and band_interval is None and comp.get(
            "ratio_ci_low") is not None:
        result.update(verdict=CANNOT_TELL, observed=seen,
                      reason="equivalence needs values > 0 (TOST on log values)")
        return
    result["verdict"], result["reason"] = _row_verdict(check, comp, level, band_interval)
    result["observed"] = seen
    if result["verdict"] == CANNOT_TELL:
        tell = _would_tell(published_ratio(seeds[check["id"]], direction), comp, cand_row,
                           base_row, level, check["expected"] == EQUIVALENT)
        if tell:
            result["would_tell"] = tell
            result["reason"] += "; " + tell["text"]


def _fallback_note(check, reboot_paths, groups):
    """Whether the VM's soft reboots fell back to hard (check c)."""
    vm = check["baseline"]
    counts = collections.Counter()
    for row in reboot_paths:
        if row["kind"] == vm:
            counts.update({k: v for k, v in row["counts"].items()})
    soft = counts.get("soft", 0) + counts.get(FALLBACK_PATH, 0)
    if not soft:
        return ("%s's reboot paths were not recorded: whether its soft reboots fell "
                "back to hard is unknown" % vm), None
    fell = counts.get(FALLBACK_PATH, 0)
    if not fell:
        return ("none of %s's %d soft reboots fell back to hard: this compares real "
                "soft reboots" % (vm, soft)), {"soft": soft, "fell_back": 0}
    note = ("%d of %s's %d soft reboots fell back to hard (libvirt's wait for the "
            "guest), timed apart as vmct.reboot_soft_fell_back_to_hard and not in "
            "this comparison" % (fell, vm, soft))
    fallback = [r for r in groups if r["kind"] == vm and r["n"]
                and r["source"] == "atomic"
                and r["metric"] == "vmct.reboot_soft_fell_back_to_hard"]
    cand_row = check["_rows"][0] if "_rows" in check else None
    if fallback and cand_row and cand_row["mean"]:
        r = cand_row["mean"] / fallback[0]["mean"]
        note += ("; against those fallbacks (mean %.4g s) the container's soft reboot "
                 "is ×%.3g, %s: a fallback would explain a gap like the published one"
                 % (fallback[0]["mean"], r, difference_text(r, "lower")))
    return note, {"soft": soft, "fell_back": fell}


def _stats(row):
    return {"n": row["n"], "mean": row["mean"], "sd": row["sd"]}


def _result(check):
    metric = check["metric"] or {}
    return {"id": check["id"], "source": check["source"], "claim": check["claim"],
            "published": check["published"], "expected": check["expected"],
            "candidate_role": check["candidate_role"],
            "baseline_role": check["baseline_role"],
            "candidate": check["candidate"], "baseline": check["baseline"],
            "label": metric.get("label"), "unit": metric.get("unit"),
            "direction": metric.get("direction"),
            "concurrency": check["concurrency"],
            "baseline_concurrency": check["baseline_concurrency"],
            "candidate_stats": None, "baseline_stats": None,
            "comparison": check.get("comparison"),
            "observed": "", "notes": list(check["notes"])}


def _magnitude_note(result):
    """Check e: is the VM's shortfall within the published 60-80 %?"""
    r = result.get("ratio")
    if r is None or result["direction"] != "higher":
        return None
    inside = 0.2 <= r <= 0.4
    return "published 60–80 %% worse; this run %s (%s the published range)" % (
        difference_text(r, "higher"), "within" if inside else "outside")


def evaluate(roles, checks, alpha, reboot_paths=(), groups=(), compare=None):
    """The seed check section (a JSON-ready dict) of planned, attached checks.

    ``compare(candidate row, baseline row, alpha)`` is the one rule
    (:func:`rally_vmct.inference.compare` on the rows' samples). The
    testable directions form one family, Holm-corrected at ``alpha``; each row's
    interval is printed at the level Holm's step used for its direction.
    """
    emulated = {r["kind"] for r in roles if r["emulated"]}
    seeds = {seed.id: seed for seed in SEEDS}
    family = _family(checks, compare, alpha) if compare else 0
    out = []
    for check in checks:
        result = _result(check)
        result.update(dict.fromkeys(COMPARISON_FIELDS))
        if check["missing"]:
            result.update(verdict=CANNOT_TELL, reason="missing data: " + check["missing"])
        else:
            _evaluate_check(check, result, compare, alpha, seeds)
        if check["id"] == "c" and check["baseline"]:
            note, paths = _fallback_note(check, reboot_paths, groups)
            result["notes"].append(note)
            result["vm_soft_reboots"] = paths
        if check["id"] == "e" and not check["missing"]:
            note = _magnitude_note(result)
            if note:
                result["notes"].append(note)
        for kind in (check["candidate"], check["baseline"]):
            if kind in emulated:
                result["notes"].append(
                    "%s is emulated (QEMU TCG); the seeds measured KVM" % kind)
        out.append(result)
    return {"roles": roles, "alpha": alpha, "band": BAND, "correction": CORRECTION,
            "family_size": family, "checks": out,
            "summary": dict(collections.Counter(r["verdict"] for r in out))}
