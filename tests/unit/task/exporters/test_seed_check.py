"""The seed check: roles, verdicts and the comparisons behind them, by hand and scipy."""

import json
import math

from scipy import stats as sp
import testtools

from rally_vmct.task.exporters import comparison_data as cdata
from rally_vmct.task.exporters import comparison_render as render
from rally_vmct.task.exporters import seed_check
from rally_vmct.task import output
from tests.unit.task.exporters import sample_results as sr

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


def _comp(ratio=0.5, low=0.4, high=0.6, p=0.01, p_adj=0.02, p_min=0.008,
          significant=True, unbounded=False):
    return {"ratio": ratio, "ratio_ci_low": low, "ratio_ci_high": high,
            "ratio_ci_unbounded": unbounded, "ratio_note": None,
            "test": "mann-whitney-u exact", "p_value": p, "p_min": p_min,
            "p_adjusted": p_adj, "significant": significant, "test_note": None}


class TestVerdict(testtools.TestCase):

    def test_min_equal_n(self):
        # 2 / C(2n, n): n=3 -> 0.1, n=4 -> 0.0286, n=5 -> 0.00794
        self.assertEqual(4, seed_check.min_equal_n(0.05))
        self.assertEqual(5, seed_check.min_equal_n(0.01))
        self.assertEqual(4, seed_check.min_equal_n(0.1))

    def test_agrees_and_disagrees_by_direction(self):
        v = seed_check.verdict
        self.assertEqual("agrees", v("better", "lower", _comp(0.5), 0.05, 5, 5)[0])
        self.assertEqual("disagrees", v("better", "lower", _comp(1.5, 1.2, 1.8),
                                        0.05, 5, 5)[0])
        # higher is better: a ratio below 1 is worse
        self.assertEqual("agrees", v("worse", "higher", _comp(0.3), 0.05, 5, 5)[0])
        verdict, reason, seen = v("better", "higher", _comp(0.3), 0.05, 5, 5)
        self.assertEqual(("disagrees", "significant, in the opposite direction"),
                         (verdict, reason))
        self.assertEqual("70.0 % worse (significant)", seen)

    def test_cannot_tell_reasons(self):
        v = seed_check.verdict
        verdict, reason, seen = v("better", "lower", _comp(0.5, p_min=0.1, p=0.1,
                                                           significant=False),
                                  0.05, 3, 3)
        self.assertEqual("cannot tell", verdict)
        self.assertEqual("N too small: 3 vs 3 samples; Mann–Whitney U cannot reach "
                         "p < 0.05 (needs at least 4 per side)", reason)
        self.assertEqual("50.0 % faster (not significant)", seen)
        verdict, reason, _ = v("better", "lower", _comp(0.9, p_adj=0.3, significant=False),
                               0.05, 8, 8)
        self.assertEqual(("cannot tell", "not significant: Holm-adjusted p = 0.3 ≥ α = 0.05"),
                         (verdict, reason))
        missing = dict(_comp(None), p_value=None, ratio_note="no baseline samples")
        self.assertEqual(("cannot tell", "no ratio: no baseline samples"),
                         v("better", "lower", missing, 0.05, 3, 0)[:2])
        self.assertEqual("cannot tell", v("better", None, _comp(0.5), 0.05, 5, 5)[0])

    def test_no_published_direction_reports_what_was_seen(self):
        self.assertEqual(("no published direction", "significant",
                          "50.0 % faster (significant)"),
                         seed_check.verdict(None, "lower", _comp(0.5), 0.05, 5, 5))

    def test_band(self):
        v = seed_check.verdict
        self.assertEqual(("agrees", "interval [0.96, 1.03] lies within ±5 %"),
                         v("equivalent", "higher", _comp(0.99, 0.96, 1.03, p_adj=0.8,
                                                         significant=False),
                           0.05, 5, 5)[:2])
        self.assertEqual(("disagrees", "interval [0.8, 0.9] lies outside ±5 %, "
                                       "significant"),
                         v("equivalent", "higher", _comp(0.85, 0.8, 0.9), 0.05, 5, 5)[:2])
        verdict, reason, _ = v("equivalent", "higher", _comp(0.85, 0.8, 0.9, p_adj=0.2,
                                                             significant=False),
                               0.05, 5, 5)
        self.assertEqual("cannot tell", verdict)
        self.assertIn("lies outside ±5 % but not significant", reason)
        verdict, reason, _ = v("equivalent", "higher", _comp(0.97, 0.93, 1.01), 0.05, 5, 5)
        self.assertEqual(("cannot tell", "interval [0.93, 1.01] is not within ±5 %"),
                         (verdict, reason))
        verdict, reason, _ = v("equivalent", "higher",
                               _comp(0.97, None, None, unbounded=True), 0.05, 5, 5)
        self.assertEqual(("cannot tell", "the ratio's interval is unbounded"),
                         (verdict, reason))

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
        data = cdata.compare([sr.task(_boots("kvm", KVM_BUILD, KVM_DELETE),
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
        self.assertEqual((5, 12.0), (boot["baseline_stats"]["n"],
                                     boot["baseline_stats"]["mean"]))
        self.assertAlmostEqual(1 / 3, boot["ratio"], places=12)
        # Reference: scipy's exact two-sided U test; 3 comparisons (build, delete,
        # iteration duration), all completely separated: Holm gives 3 p.
        p = sp.mannwhitneyu(DOCKER_BUILD, KVM_BUILD, method="exact").pvalue
        self.assertAlmostEqual(2 / 252, p, places=12)
        self.assertAlmostEqual(p, boot["p_value"], places=12)
        self.assertAlmostEqual(3 * p, boot["p_adjusted"], places=12)
        self.assertEqual(("agrees", "significant, in the published direction"),
                         (boot["verdict"], boot["reason"]))
        self.assertEqual("66.7 % faster (significant)", boot["observed"])
        self.assertEqual("page", boot["comparison"])
        (delete,) = _checks(data, "b")
        self.assertEqual("agrees", delete["verdict"])
        # no reboots, no benchmarks, no native kind
        self.assertEqual("missing data: no metric for it in these results",
                         _checks(data, "c")[0]["reason"])
        for seed_id in ("e", "f"):
            (check,) = _checks(data, seed_id)
            self.assertEqual(("cannot tell", "missing data: no native kind among kvm, "
                                             "docker"),
                             (check["verdict"], check["reason"]))
        self.assertEqual({"agrees": 2, "cannot tell": 4}, data["seed_check"]["summary"])

    def test_inverted_page_comparison(self):
        # docker first: the page compares kvm with docker; the seed check turns it round.
        data = cdata.compare([sr.task(_boots("docker", DOCKER_BUILD, DOCKER_DELETE),
                                      _boots("kvm", KVM_BUILD, KVM_DELETE))])
        page = [g for g in data["groups"] if g["kind"] == "kvm"
                and g["metric"] == "vmct.build"][0]
        self.assertAlmostEqual(3.0, page["ratio"], places=12)
        (boot,) = _checks(data, "a")
        self.assertEqual("page, inverted", boot["comparison"])
        self.assertAlmostEqual(1 / 3, boot["ratio"], places=12)
        self.assertAlmostEqual(1 / page["ratio_ci_high"], boot["ratio_ci_low"], places=12)
        self.assertAlmostEqual(1 / page["ratio_ci_low"], boot["ratio_ci_high"], places=12)
        self.assertEqual(page["p_adjusted"], boot["p_adjusted"])
        self.assertEqual("docker", boot["candidate"])

    def test_pair_the_page_does_not_compare_joins_the_holm_family(self):
        # fake has builds first: the page compares kvm and docker with fake only.
        data = cdata.compare([sr.task(
            _boots("fake", [0.10, 0.11, 0.12, 0.13, 0.14], [0.5, 0.51, 0.52, 0.53, 0.54]),
            _boots("kvm", KVM_BUILD, KVM_DELETE),
            _boots("docker", DOCKER_BUILD, DOCKER_DELETE))])
        (boot,) = _checks(data, "a")
        self.assertIn("added by the seed check", boot["comparison"])
        self.assertAlmostEqual(1 / 3, boot["ratio"], places=12)
        # page: (kvm, docker) x (build, delete, iteration) = 6; seed: build, delete
        self.assertEqual(8, data["methods"]["comparisons"])
        self.assertAlmostEqual(8 * 2 / 252, boot["p_adjusted"], places=12)
        self.assertEqual("cannot tell", boot["verdict"])    # 0.0635 after 8 comparisons
        self.assertIn("not significant", boot["reason"])
        roles = {r["kind"]: r["role"] for r in data["seed_check"]["roles"]}
        self.assertEqual({"fake": None, "kvm": "VM", "docker": "container"}, roles)

    def test_n_too_small(self):
        data = cdata.compare([sr.task(_boots("kvm", [10.0, 12.0, 14.0], [3, 3, 3]),
                                      _boots("docker", [2.0, 3.0, 4.0], [1, 1, 1]))])
        (boot,) = _checks(data, "a")
        self.assertEqual("cannot tell", boot["verdict"])
        self.assertTrue(boot["reason"].startswith("N too small: 3 vs 3 samples"),
                        boot["reason"])

    def test_soft_reboot_says_whether_vm_reboots_fell_back(self):
        data = cdata.compare(sr.demo_tasks(times=8, facts=True))
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
        data = cdata.compare([sr.task(reboots("kvm", [9, 10, 11, 12, 13], True),
                                      reboots("docker", [1, 2, 3, 4, 5], True))])
        (soft,) = _checks(data, "c")
        self.assertEqual("none of kvm's 5 soft reboots fell back to hard: this compares "
                         "real soft reboots", soft["notes"][0])
        # reboot and iteration duration: Holm 2 x 2 / 252 < 0.05
        self.assertAlmostEqual(4 / 252, soft["p_adjusted"], places=12)
        self.assertEqual("agrees", soft["verdict"])
        data = cdata.compare([sr.task(reboots("kvm", [9, 10], False),
                                      reboots("docker", [1, 2], False))])
        (soft,) = _checks(data, "c")
        self.assertIn("reboot paths were not recorded", soft["notes"][0])

    def test_direct_fileio_and_cpu_memory_against_native(self):
        data = cdata.compare(sr.demo_tasks(times=8, facts=True))
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
        data = cdata.compare(sr.demo_tasks(times=4))
        (direct,) = _checks(data, "e")
        self.assertEqual("missing data: no metric for it in these results",
                         direct["reason"])


class TestSeedCheckSection(testtools.TestCase):

    def test_html_and_json(self):
        data = cdata.compare(sr.demo_tasks(times=8, facts=True))
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
