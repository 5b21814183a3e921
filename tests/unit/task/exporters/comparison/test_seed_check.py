"""The seed check: roles, verdicts and the comparisons behind them, by hand and scipy."""

import json
import math

import numpy
from scipy import stats as sp
import testtools

from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct.task.exporters.comparison import seed_check
from rally_vmct.task import output
from rally_vmct import stats
from tests.unit.task.exporters.comparison import sample_results as sr

BOOT = "VMCT.boot_and_delete_server"
KVM_BUILD = [10.0, 11.0, 12.0, 13.0, 14.0]
DOCKER_BUILD = [2.0, 3.0, 4.0, 5.0, 6.0]
# No ties anywhere (deletes and iteration durations too): every U test is exact.
KVM_DELETE = [3.0, 3.1, 3.2, 3.3, 3.4]
DOCKER_DELETE = [1.0, 1.1, 1.2, 1.3, 1.4]


def _boots(kind, builds, deletes, concurrency=1, facts=None):
    its = []
    for build, delete in zip(builds, deletes):
        complete = [sr.facts_table(kind, facts)] if facts is not None else []
        its.append(sr.iteration([sr.action("vmct.build", build),
                                 sr.action("vmct.delete", delete, build)],
                                complete=complete))
    return sr.workload(BOOT, kind, its, concurrency)


def _checks(data, seed_id):
    return [c for c in data["seed_check"]["checks"] if c["id"] == seed_id]


def _cpu(kind, values):
    native = kind == "native"
    return sr.workload(
        "VMCT.native_benchmark" if native else "VMCT.boot_and_benchmark",
        None if native else kind,
        [sr.iteration(charts=[output.stats_chart(kind, "sysbench cpu", "events/s",
                                                 [("events_per_second", v)])])
         for v in values], concurrency=1)


def _log_interval(a, b, level):
    """scipy's reference: Welch t on logs at Hsu df, interval at ``level``."""
    la, lb = numpy.log(a), numpy.log(b)
    d = la.mean() - lb.mean()
    se = math.sqrt(la.var(ddof=1) / len(a) + lb.var(ddof=1) / len(b))
    df = min(len(a), len(b)) - 1
    t = sp.t.ppf(0.5 + level / 2, df)
    return math.exp(d), math.exp(d - t * se), math.exp(d + t * se), \
        2 * sp.t.sf(abs(d) / se, df)


class TestVerdict(testtools.TestCase):

    def test_published_ratio(self):
        seeds = {seed.id: seed for seed in seed_check.SEEDS}
        self.assertAlmostEqual(0.72, seed_check.published_ratio(seeds["a"], "lower"))
        self.assertAlmostEqual(0.4, seed_check.published_ratio(seeds["e"], "higher"))
        self.assertAlmostEqual(2.5, seed_check.published_ratio(seeds["e"], "lower"))
        self.assertAlmostEqual(0.98, seed_check.published_ratio(seeds["f"], "higher"))
        self.assertIsNone(seed_check.published_ratio(seeds["d"], "lower"))

    def test_difference_text(self):
        self.assertEqual("28.0 % faster", seed_check.difference_text(0.72, "lower"))
        self.assertEqual("50.0 % slower", seed_check.difference_text(1.5, "lower"))
        self.assertEqual("20.0 % better", seed_check.difference_text(1.2, "higher"))
        self.assertEqual("no difference", seed_check.difference_text(1.0, "higher"))
        self.assertEqual("", seed_check.difference_text(None, "higher"))


class TestRoles(testtools.TestCase):

    def _env(self, kind, virtualization, emulated=False):
        return {"kind": kind, "emulated": emulated, "facts": [
            {"key": "virtualization", "values": [{"value": virtualization, "count": 2}]}]}

    def test_from_names(self):
        roles = seed_check.kind_roles(["native", "kvm", "docker", "qemu-tcg", "fake"], [])
        self.assertEqual([("native", "native"), ("kvm", "VM"), ("docker", "container"),
                          ("qemu-tcg", "VM"), ("fake", None)],
                         [(r["kind"], r["role"]) for r in roles])
        self.assertEqual("its name", roles[1]["basis"])

    def test_facts_win_over_names(self):
        env = [self._env("kvm", "container (docker), host: KVM guest"),
               self._env("box", "QEMU TCG (emulated)", emulated=True),
               self._env("metal", "none (bare metal)"),
               self._env("docker", "not recorded")]
        roles = seed_check.kind_roles(["kvm", "box", "metal", "docker"], env)
        self.assertEqual([("kvm", "container"), ("box", "VM"), ("metal", "native"),
                          ("docker", "container")],
                         [(r["kind"], r["role"]) for r in roles])
        self.assertEqual("facts: virtualization 'QEMU TCG (emulated)'", roles[1]["basis"])
        self.assertTrue(roles[1]["emulated"])
        self.assertEqual("its name", roles[3]["basis"])

    def test_the_native_baseline_stays_native_on_a_virtual_host(self):
        """This machine is a KVM guest: its native_benchmark kind is still the baseline."""
        host = self._env("native", "KVM (hardware-assisted)")
        other = self._env("metal2", "KVM (hardware-assisted)")
        other["facts"].append({"key": "nova_hypervisor_type",
                               "values": [{"value": "none (not a Nova instance)", "count": 2}]})
        roles = seed_check.kind_roles(["native", "metal2"], [host, other])
        self.assertEqual([("native", "native"), ("metal2", "native")],
                         [(r["kind"], r["role"]) for r in roles])
        self.assertIn("the host itself: KVM (hardware-assisted)", roles[0]["basis"])


class TestSeedCheckOfAComparison(testtools.TestCase):

    def test_lifecycle_directions_with_reference_values(self):
        data = analyse.compare([sr.task(_boots("kvm", KVM_BUILD, KVM_DELETE),
                                        _boots("docker", DOCKER_BUILD, DOCKER_DELETE))])
        (boot,) = _checks(data, "a")
        self.assertEqual(("docker", "kvm", "container", "VM", 1, 1),
                         (boot["candidate"], boot["baseline"], boot["candidate_role"],
                          boot["baseline_role"], boot["concurrency"],
                          boot["baseline_concurrency"]))
        self.assertEqual(["build only: these results have no build + network figure "
                          "(lifecycle chart row build_and_network)"], boot["notes"])
        self.assertEqual({"n": 5, "mean": 4.0, "sd": math.sqrt(2.5)},
                         boot["candidate_stats"])
        (delete,) = _checks(data, "b")
        # a family of two directions (build, delete), Holm at 0.05: the smaller p
        # at 0.025, the other at 0.05; each row's interval at its step's level
        self.assertEqual(2, data["seed_check"]["family_size"])
        p_boot = _log_interval(DOCKER_BUILD, KVM_BUILD, 0.95)[3]
        p_delete = _log_interval(DOCKER_DELETE, KVM_DELETE, 0.95)[3]
        self.assertLess(p_delete, p_boot)
        self.assertAlmostEqual(0.025, delete["family_level"], places=15)
        self.assertAlmostEqual(0.05, boot["family_level"], places=15)
        ref = _log_interval(DOCKER_BUILD, KVM_BUILD, 0.95)
        for mine, theirs in zip((boot["ratio"], boot["ratio_ci_low"],
                                 boot["ratio_ci_high"], boot["p_decision"]), ref):
            self.assertAlmostEqual(theirs, mine, places=10)
        ref = _log_interval(DOCKER_DELETE, KVM_DELETE, 0.975)
        self.assertAlmostEqual(ref[2], delete["ratio_ci_high"], places=10)
        self.assertEqual("agrees", boot["verdict"])
        self.assertTrue(boot["reason"].startswith(
            "the 95 % interval excludes 1, in the published direction"), boot["reason"])
        self.assertEqual("agrees", delete["verdict"])
        self.assertIn("97.5 % interval", delete["reason"])
        # no reboots, no benchmarks, no native kind
        self.assertEqual("missing data: no metric for it in these results",
                         _checks(data, "c")[0]["reason"])
        for seed_id in ("e", "f"):
            (check,) = _checks(data, seed_id)
            self.assertEqual(("cannot tell", "missing data: no native kind among kvm, "
                                             "docker"),
                             (check["verdict"], check["reason"]))
        self.assertEqual({"agrees": 2, "cannot tell": 4}, data["seed_check"]["summary"])

    def test_the_order_of_the_kinds_does_not_matter(self):
        data = analyse.compare([sr.task(_boots("docker", DOCKER_BUILD, DOCKER_DELETE),
                                        _boots("kvm", KVM_BUILD, KVM_DELETE))])
        (boot,) = _checks(data, "a")
        self.assertEqual(("docker", "kvm"), (boot["candidate"], boot["baseline"]))
        ref = _log_interval(DOCKER_BUILD, KVM_BUILD, 0.95)
        self.assertAlmostEqual(ref[0], boot["ratio"], places=12)
        self.assertEqual("agrees", boot["verdict"])

    def test_a_family_apart_from_the_page(self):
        # fake has builds first: the page compares kvm and docker with fake only; the
        # seed check compares docker with kvm itself, in its own family of 2
        data = analyse.compare([sr.task(
            _boots("fake", [0.10, 0.11, 0.12, 0.13, 0.14], [0.5, 0.51, 0.52, 0.53, 0.54]),
            _boots("kvm", KVM_BUILD, KVM_DELETE),
            _boots("docker", DOCKER_BUILD, DOCKER_DELETE))])
        (boot,) = _checks(data, "a")
        self.assertAlmostEqual(_log_interval(DOCKER_BUILD, KVM_BUILD, 0.95)[0],
                               boot["ratio"], places=12)
        # page: (kvm, docker) x (build, delete, iteration) = 6, none of the seed's
        self.assertEqual(6, data["methods"]["comparisons"])
        self.assertEqual(2, data["seed_check"]["family_size"])
        self.assertEqual("agrees", boot["verdict"])
        roles = {r["kind"]: r["role"] for r in data["seed_check"]["roles"]}
        self.assertEqual({"fake": None, "kvm": "VM", "docker": "container"}, roles)

    def test_cannot_tell_says_what_would_tell(self):
        data = analyse.compare([sr.task(_boots("kvm", [10.0, 12.0, 14.0], [3, 3.2, 3.1]),
                                        _boots("docker", [9.0, 13.0, 11.0], [1, 1.1, 1.2]))])
        (boot,) = _checks(data, "a")
        self.assertEqual("cannot tell", boot["verdict"])
        self.assertIn("interval contains 1", boot["reason"])
        self.assertIn("detects (80 % power) only ratios below ×", boot["reason"])
        tell = boot["would_tell"]
        self.assertAlmostEqual(0.72, tell["published_ratio"])
        rows = {g["kind"]: g for g in data["groups"] if g["metric"] == "vmct.build"}
        expected = stats.n_per_side(math.log(0.72), rows["docker"]["log_sd"],
                                    rows["kvm"]["log_sd"], boot["family_level"])
        self.assertEqual(expected, tell["n_per_side"])
        self.assertIn("N ≈ %d per side would show the published ×0.72" % expected,
                      boot["reason"])

    def test_the_issues_demo_example_is_decided_at_three_per_side(self):
        """3 vs 3 as the demo runs: decided, not "cannot tell" (issue 25)."""
        tcg_delete, docker_delete = [3.05, 2.90, 3.20], [0.62, 0.98, 0.75]
        data = analyse.compare([sr.task(
            _boots("qemu-tcg", [30.0, 32.0, 35.0], tcg_delete),
            _boots("docker", [3.1, 3.5, 2.9], docker_delete),
            _cpu("native", [498.0, 503.5, 495.1]), _cpu("qemu-tcg", [71.0, 69.5, 72.3]),
            _cpu("docker", [497.0, 500.0, 502.0]))])
        seeds = data["seed_check"]
        self.assertEqual(3, seeds["family_size"])          # a, b, f; no fileio (e)
        verdicts = {c["id"]: c["verdict"] for c in seeds["checks"] if c["label"]}
        self.assertEqual({"a": "agrees", "b": "agrees", "f": "agrees"}, verdicts)
        (delete,) = _checks(data, "b")
        ref = _log_interval(docker_delete, tcg_delete, 1 - delete["family_level"])
        self.assertAlmostEqual(ref[2], delete["ratio_ci_high"], places=10)
        self.assertLess(delete["ratio_ci_high"], 1)
        (cpu,) = _checks(data, "f")
        self.assertTrue(0.95 <= cpu["tost_low"] and cpu["tost_high"] <= 1.05)
        self.assertIn("TOST", cpu["reason"])
        # the page's cell: qemu-tcg vs native cpu, worse, its interval below 1
        cell = [g for g in data["groups"] if g["kind"] == "qemu-tcg"
                and g["metric"] == "events_per_second"][0]
        self.assertTrue(cell["significant"])
        self.assertLess(cell["ratio_ci_high"], 1)

    def test_a_direction_of_several_metrics_needs_each(self):
        # container within 5 % of native on cpu but not on memory: f cannot tell
        def bench(kind, cpu, mem):
            return sr.workload("VMCT.native_benchmark" if kind == "native"
                               else "VMCT.boot_and_benchmark",
                               None if kind == "native" else kind, [sr.iteration(charts=[
                                   output.stats_chart(kind, "sysbench cpu", "events/s",
                                                      [("events_per_second", c)]),
                                   output.stats_chart(kind, "sysbench memory read",
                                                      "MiB/s", [("mib_per_second", m)])])
                                   for c, m in zip(cpu, mem)], concurrency=1)
        data = analyse.compare([sr.task(
            bench("native", [500, 501, 499, 500], [900, 910, 905, 902]),
            bench("docker", [499, 500, 501, 500], [700, 880, 990, 600]))])
        checks = _checks(data, "f")
        self.assertEqual(2, len(checks))
        self.assertEqual(["cannot tell", "cannot tell"], [c["verdict"] for c in checks])
        self.assertEqual([2, 2], [c["direction_metrics"] for c in checks])

    def test_soft_reboot_says_whether_vm_reboots_fell_back(self):
        data = analyse.compare(sr.demo_tasks(times=8, facts=True))
        (soft,) = _checks(data, "c")
        counts = {"soft": 0, "fell_back": 0}
        for row in data["reboot_paths"]:
            if row["kind"] == "kvm":
                counts["soft"] += row["counts"]["soft"] + row["counts"][
                    "soft_fell_back_to_hard"]
                counts["fell_back"] += row["counts"]["soft_fell_back_to_hard"]
        self.assertEqual(counts, soft["vm_soft_reboots"])
        self.assertGreater(counts["fell_back"], 0)
        self.assertTrue(soft["notes"][0].startswith(
            "%d of kvm's %d soft reboots fell back to hard" % (counts["fell_back"],
                                                               counts["soft"])),
                        soft["notes"][0])
        self.assertIn("kvm is emulated (QEMU TCG); the seeds measured KVM", soft["notes"])
        self.assertEqual("vmct.reboot_soft [s]", soft["label"])

    def test_soft_reboot_without_fallbacks_and_without_paths(self):
        def reboots(kind, seconds, path_chart):
            its = []
            for s in seconds:
                charts = [output.stats_chart(kind, output.REBOOT_PATH_GROUP, "count", [
                    ("soft", 1), ("soft_fell_back_to_hard", 0), ("hard", 0)])] \
                    if path_chart else []
                its.append(sr.iteration([sr.action("vmct.reboot_soft", s)], charts))
            return sr.workload("VMCT.boot_and_reboot_server", kind, its,
                               reboot_type="soft")
        data = analyse.compare([sr.task(reboots("kvm", [9, 10, 11, 12, 13], True),
                                        reboots("docker", [1, 2, 3, 4, 5], True))])
        (soft,) = _checks(data, "c")
        self.assertEqual("none of kvm's 5 soft reboots fell back to hard: this compares "
                         "real soft reboots", soft["notes"][0])
        # the family: c alone, at 0.05
        self.assertEqual(0.05, soft["family_level"])
        self.assertEqual("agrees", soft["verdict"])
        data = analyse.compare([sr.task(reboots("kvm", [9, 10], False),
                                        reboots("docker", [1, 2], False))])
        (soft,) = _checks(data, "c")
        self.assertIn("reboot paths were not recorded", soft["notes"][0])

    def test_direct_fileio_and_cpu_memory_against_native(self):
        data = analyse.compare(sr.demo_tasks(times=8, facts=True))
        # one check per VM kind x direct fileio metric; kvm's lowest concurrency, c=1
        (direct,) = _checks(data, "e")
        self.assertEqual("sysbench fileio rndrd direct: mib_per_second [MiB/s] "
                         "(sysbench 1.0)", direct["label"])
        self.assertEqual(("kvm", "native", 1, 1),
                         (direct["candidate"], direct["baseline"], direct["concurrency"],
                          direct["baseline_concurrency"]))
        self.assertTrue(direct["notes"][0].startswith("published 60–80 % worse"))
        equal = _checks(data, "f")
        self.assertEqual(["sysbench cpu: events_per_second [events/s] (sysbench 1.0)",
                          "sysbench memory read: mib_per_second [MiB/s] (sysbench 1.0)"],
                         [c["label"] for c in equal])
        for check in equal:
            self.assertEqual(("docker", "native"), (check["candidate"], check["baseline"]))

    def test_buffered_fileio_is_not_the_direct_seed(self):
        data = analyse.compare(sr.demo_tasks(times=4))
        (direct,) = _checks(data, "e")
        self.assertEqual("missing data: no metric for it in these results",
                         direct["reason"])


class TestSeedCheckSection(testtools.TestCase):

    def test_html_and_json(self):
        data = analyse.compare(sr.demo_tasks(times=8, facts=True))
        page = render.render_html(data)
        self.assertIn('<h2 id="seed-check">Seed check: the published directions</h2>', page)
        self.assertIn('id="seed-check-table"', page)
        self.assertIn("<p class=note id=\"seed-roles\">Which kind plays which part: "
                      "native = native (from the native baseline (VMCT.native_benchmark, "
                      "not a Nova instance); the host itself: none (bare metal)); "
                      "kvm = VM (from facts: virtualization &#39;QEMU TCG "
                      "(emulated)&#39;), emulated; docker = container", page)
        for seed in seed_check.SEEDS:
            self.assertIn('<tr data-seed="%s">' % seed.id, page)
        self.assertLess(page.index('id="summary"'), page.index('id="seed-check"'))
        for check in data["seed_check"]["checks"]:
            self.assertIn(check["verdict"], (seed_check.AGREES, seed_check.DISAGREES,
                                             seed_check.CANNOT_TELL,
                                             seed_check.NO_DIRECTION))
        loaded = json.loads(render.render_json(data))
        self.assertEqual(data["seed_check"], loaded["seed_check"])
        self.assertNotIn("_rows", json.dumps(loaded["seed_check"]))
