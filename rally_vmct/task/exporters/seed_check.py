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
that measures it, at the lowest concurrency the candidate has; the comparison is
the page's own (ratio with Fieller's interval, Mann-Whitney U p, Holm-adjusted
over the page) or, when the page compares both kinds only with a third one, a
comparison of its own that :mod:`.comparison_data` adds to the page's Holm family
(:func:`attach`). :func:`evaluate` then says, per direction:

* **agrees**: the difference is significant after the page's correction and goes
  the published way (for "within 5 % of native": the ratio's interval lies in
  [0.95, 1.05], significant or not);
* **disagrees**: significant the other way (for the band: the interval lies
  wholly outside it and the difference is significant);
* **cannot tell**, with the reason: a kind or the data is missing, N is too small
  for the test to reach alpha (Mann-Whitney needs 4 per side at alpha 0.05), the
  difference is not significant, the interval straddles the band;
* **no published direction** (hard reboot): what this run shows, for the record.

Pure Python on the comparison's plain dicts; no Rally import.
"""

import collections
import math

from rally_vmct.task import output
from rally_vmct.workloads import facts

VM, CONTAINER, NATIVE = "VM", "container", "native"
AGREES, DISAGREES, CANNOT_TELL = "agrees", "disagrees", "cannot tell"
NO_DIRECTION = "no published direction"
BETTER, WORSE, EQUIVALENT = "better", "worse", "equivalent"
BAND = 0.05                    # KEK: containers within 2-5 % of native
FALLBACK_PATH = "soft_fell_back_to_hard"

Seed = collections.namedtuple(
    "Seed", ["id", "source", "claim", "published", "candidate", "baseline", "expected",
             "select"])

_CONTAINER_WORDS = ("container", "docker", "lxc", "lxd", "podman", "zun")
_NATIVE_WORDS = ("bare metal", "bare-metal", "baremetal", "native", "ironic")
_VM_WORDS = ("kvm", "qemu", "tcg", "xen", "hyper-v", "hyperv", "vmware", "esx",
             "libvirt", "virtual machine", "hardware-assisted", "emulated", "vm")


def min_equal_n(alpha):
    """Smallest N per side with which a Mann-Whitney test can reach p < alpha."""
    n = 1
    while 2.0 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


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
         "boot", "28 % faster (HPE)", CONTAINER, VM, BETTER, _boot),
    Seed("b", "HPE", "container delete is faster than VM delete", "34 % faster",
         CONTAINER, VM, BETTER, _atomic("vmct.delete", "nova.delete_server")),
    Seed("c", "HPE", "container soft reboot is faster than VM soft reboot", "96 % faster",
         CONTAINER, VM, BETTER, _atomic("vmct.reboot_soft", "vmct.reboot (soft)")),
    Seed("d", "none", "container hard reboot vs VM hard reboot (reported as measured)",
         NO_DIRECTION, CONTAINER, VM, None,
         _atomic("vmct.reboot_hard", "vmct.reboot (hard)")),
    Seed("e", "KEK", "VM fileio with O_DIRECT is worse than native at low concurrency",
         "60–80 % worse", VM, NATIVE, WORSE, _headlines(("fileio",), direct_only=True)),
    Seed("f", "KEK", "container cpu and memory are within 2–5 % of native",
         "within 2–5 %", CONTAINER, NATIVE, EQUIVALENT, _headlines(("cpu", "memory"))),
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

COMPARISON_FIELDS = ("ratio", "ratio_ci_low", "ratio_ci_high", "ratio_ci_unbounded",
                     "ratio_note", "test", "p_value", "p_min", "p_adjusted",
                     "significant", "test_note")


def _inverted(row):
    """A comparison row's fields for baseline / candidate (the other way round)."""
    out = {k: row.get(k) for k in COMPARISON_FIELDS}
    r, low, high = row.get("ratio"), row.get("ratio_ci_low"), row.get("ratio_ci_high")
    out["ratio"] = 1.0 / r if r else None
    if low is not None and high is not None and high > 0:
        out["ratio_ci_low"] = 1.0 / high
        out["ratio_ci_high"] = 1.0 / low if low > 0 else None
        out["ratio_ci_unbounded"] = low <= 0
    return out


def attach(checks, groups, compute):
    """Give each plannable check its rows and comparison; returns the new rows.

    ``compute(candidate, concurrency, baseline, baseline concurrency, metric)``
    returns a comparison row (the shape of a page group row) for a pair the page
    does not compare; those rows are returned so that the caller adds them to
    the page's Holm family before :func:`evaluate`.
    """
    index = {(row["kind"], row["concurrency"], metric_key(row)): row for row in groups}
    extra = []
    for check in checks:
        if check["missing"] or check["metric"] is None:
            continue
        key = metric_key(check["metric"])
        cand = (check["candidate"], check["concurrency"], key)
        base = (check["baseline"], check["baseline_concurrency"], key)
        check["_rows"] = (index[cand], index[base])
        row, other = index[cand], index[base]
        if (row["baseline_kind"], row["baseline_concurrency"]) == base[:2]:
            check["_comparison"], check["comparison"] = row, "page"
        elif (other["baseline_kind"], other["baseline_concurrency"]) == cand[:2]:
            check["_comparison"], check["comparison"] = other, "page, inverted"
            check["_inverted"] = True
        else:
            row = compute(cand[0], cand[1], base[0], base[1], check["metric"])
            extra.append(row)
            check["_comparison"] = row
            check["comparison"] = ("added by the seed check (the page compares both "
                                   "with another kind); in the page's Holm family")
    return extra


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


def _test_reason(comp, alpha, n_cand, n_base):
    """Why the test cannot say, else None."""
    if comp.get("p_value") is None:
        return "no test: %s" % (comp.get("ratio_note") or comp.get("test_note")
                                or "no comparison")
    if comp.get("p_min") is not None and comp["p_min"] >= alpha:
        return ("N too small: %d vs %d samples; Mann–Whitney U cannot reach p < %g "
                "(needs at least %d per side)" % (n_cand, n_base, alpha,
                                                  min_equal_n(alpha)))
    if not comp.get("significant"):
        return "not significant: Holm-adjusted p = %.3g ≥ α = %g" % (
            comp["p_adjusted"], alpha)
    return None


def verdict(expected, direction, comp, alpha, n_cand, n_base, band=BAND):
    """``(verdict, reason, observed)`` of one comparison (see the module doc)."""
    ratio = comp.get("ratio")
    observed = _observed(ratio, direction)
    reason = _test_reason(comp, alpha, n_cand, n_base)
    seen = difference_text(ratio, direction)
    if reason is None:
        seen += " (significant)"
    elif ratio is not None:
        seen += " (not significant)"
    if expected == EQUIVALENT:
        return _band_verdict(comp, band, reason, seen)
    if ratio is None:
        return CANNOT_TELL, "no ratio: %s" % (comp.get("ratio_note") or "no data"), seen
    if expected is None:
        return NO_DIRECTION, reason or "significant", seen
    if direction not in ("higher", "lower"):
        return CANNOT_TELL, "the metric's unit says nothing of better or worse", seen
    if reason:
        return CANNOT_TELL, reason, seen
    if observed == expected:
        return AGREES, "significant, in the published direction", seen
    return DISAGREES, "significant, in the opposite direction", seen


def _band_verdict(comp, band, reason, seen):
    low, high = comp.get("ratio_ci_low"), comp.get("ratio_ci_high")
    lo_band, hi_band = 1 - band, 1 + band
    if comp.get("ratio") is None:
        return CANNOT_TELL, "no ratio: %s" % (comp.get("ratio_note") or "no data"), seen
    if low is None or high is None:
        return CANNOT_TELL, "the ratio's interval is %s" % (
            "unbounded" if comp.get("ratio_ci_unbounded") else "unknown (N < 2)"), seen
    if lo_band <= low and high <= hi_band:
        return AGREES, "interval [%.4g, %.4g] lies within ±%g %%" % (
            low, high, 100 * band), seen
    if high < lo_band or low > hi_band:
        if reason is None:
            return DISAGREES, "interval [%.4g, %.4g] lies outside ±%g %%, significant" % (
                low, high, 100 * band), seen
        return CANNOT_TELL, "interval [%.4g, %.4g] lies outside ±%g %% but %s" % (
            low, high, 100 * band, reason), seen
    return CANNOT_TELL, "interval [%.4g, %.4g] is not within ±%g %%%s" % (
        low, high, 100 * band, "; " + reason if reason else ""), seen


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


def evaluate(roles, checks, alpha, reboot_paths=(), groups=()):
    """The seed check section (a JSON-ready dict) of planned, attached checks.

    Call after the page's Holm correction set ``p_adjusted``/``significant``.
    """
    emulated = {r["kind"] for r in roles if r["emulated"]}
    out = []
    for check in checks:
        result = _result(check)
        if check["missing"]:
            result.update(dict.fromkeys(COMPARISON_FIELDS))
            result.update(verdict=CANNOT_TELL, reason="missing data: " + check["missing"])
        else:
            cand_row, base_row = check["_rows"]
            comp = check["_comparison"]
            comp = (_inverted(comp) if check.get("_inverted")
                    else {k: comp.get(k) for k in COMPARISON_FIELDS})
            result.update(comp)
            result["candidate_stats"] = _stats(cand_row)
            result["baseline_stats"] = _stats(base_row)
            result["verdict"], result["reason"], result["observed"] = verdict(
                check["expected"], result["direction"], comp, alpha, cand_row["n"],
                base_row["n"])
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
    return {"roles": roles, "alpha": alpha, "band": BAND, "checks": out,
            "summary": dict(collections.Counter(r["verdict"] for r in out))}
