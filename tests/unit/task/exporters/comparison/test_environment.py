"""Environment disclosure: facts tables tallied per kind, warnings, title, CSV, HTML."""

import csv
import io
import json

import testtools

from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct.task.exporters.comparison import environment as env
from rally_vmct.task import output
from tests.unit.task.exporters.comparison import sample_results as sr


def _bench(kind, tables, scenario="VMCT.boot_and_benchmark"):
    """One benchmark workload: an iteration per facts table (None: no table)."""
    its = []
    for i, table in enumerate(tables):
        charts = [output.stats_chart(kind, "sysbench cpu", "events/s",
                                     [("events_per_second", 100.0 + i)])]
        its.append(sr.iteration([sr.action("vmct.sysbench_cpu", 10.0)], charts,
                                complete=[table] if table else []))
    return sr.workload(scenario, kind, its)


def _facts(data, kind):
    entry = [e for e in data["environment"] if e["kind"] == kind][0]
    return {f["key"]: f for f in entry["facts"]}, entry


class TestFactsTables(testtools.TestCase):

    def test_reads_only_facts_tables(self):
        it = sr.iteration(complete=[
            sr.facts_table("kvm", {"virtualization": "KVM (hardware-assisted)", "vcpus": 2}),
            {"title": "kvm: workload metrics", "chart_plugin": "Table",
             "data": {"cols": ["a"], "rows": [["x", 1]]}},
            {"title": "docker: instance facts", "chart_plugin": "TextArea",
             "data": ["not a table"]}])
        self.assertEqual({"kvm": {"where": "test", "virtualization": "KVM (hardware-assisted)",
                                  "vcpus": "2"}}, env.facts_tables(it))
        self.assertEqual({}, env.facts_tables({"output": {}}))

    def test_tally_counts_identical_and_odd_tables(self):
        tally = env.FactsTally()
        odd = sr.facts_table("kvm", {"vcpus": 2})
        odd["data"]["rows"].append(["extra", {"not": "hashable"}])
        odd["data"]["rows"].append("not a row")
        for table in (sr.facts_table("kvm", {"vcpus": 2}),) * 3 + (odd,):
            self.assertEqual("2", tally.add_iteration(sr.iteration(
                complete=[table]))["kvm"]["vcpus"])
        entry = tally.disclosure("kvm")
        self.assertEqual(4, entry["facts_tables"])
        vcpus = [f for f in entry["facts"] if f["key"] == "vcpus"][0]
        self.assertEqual([{"value": "2", "count": 4}], vcpus["values"])

    def test_value_text(self):
        self.assertEqual("not recorded", env.value_text([]))
        self.assertEqual("A", env.value_text([("A", 4)]))
        self.assertEqual("2 values: A (3), B (1)", env.value_text([("A", 3), ("B", 1)]))

    def test_emulated_values(self):
        self.assertTrue(env.is_emulated_value("emulated", "yes"))
        self.assertFalse(env.is_emulated_value("emulated", "no"))
        self.assertTrue(env.is_emulated_value("virtualization", "QEMU TCG (emulated)"))
        self.assertTrue(env.is_emulated_value("virtualization", "qemu (tcg)"))
        self.assertFalse(env.is_emulated_value("virtualization", "KVM (hardware-assisted)"))
        self.assertFalse(env.is_emulated_value("cpu_model", "TCG"))


class TestDisclosure(testtools.TestCase):

    def setUp(self):
        super(TestDisclosure, self).setUp()
        kvm = [sr.facts_table("kvm") for _ in range(3)]
        kvm.append(sr.facts_table("kvm", memory_kb="2048000", fileio_direct=None))
        self.data = analyse.compare([sr.task(
            _bench("native", [sr.facts_table("native")] * 2, "VMCT.native_benchmark"),
            _bench("kvm", kvm),
            _bench("docker", [sr.facts_table("docker"), None]),
            _bench("old", [None, None]))])

    def test_every_disclosed_key_in_order(self):
        for entry in self.data["environment"]:
            self.assertEqual([k for k, _ in output.DISCLOSED_FACTS],
                             [f["key"] for f in entry["facts"]])
            self.assertEqual([label for _, label in output.DISCLOSED_FACTS],
                             [f["label"] for f in entry["facts"]])
        self.assertEqual(["native", "kvm", "docker", "old"],
                         [e["kind"] for e in self.data["environment"]])

    def test_disagreeing_iterations_show_every_value_with_counts(self):
        facts, entry = _facts(self.data, "kvm")
        self.assertEqual(4, entry["facts_tables"])
        self.assertEqual("2 values: 1012345 (3), 2048000 (1)", facts["memory_kb"]["text"])
        self.assertEqual([{"value": "1012345", "count": 3}, {"value": "2048000", "count": 1}],
                         facts["memory_kb"]["values"])
        self.assertEqual("2 values: on (3), not recorded (1)",
                         facts["fileio_direct"]["text"])
        self.assertEqual("QEMU TCG (emulated)", facts["virtualization"]["text"])

    def test_not_recorded(self):
        facts, entry = _facts(self.data, "old")
        self.assertEqual(0, entry["facts_tables"])
        self.assertEqual({"not recorded"}, {f["text"] for f in facts.values()})
        self.assertFalse(entry["emulated"])
        facts, _ = _facts(self.data, "native")
        self.assertEqual("not recorded", facts["nova_hypervisor_version"]["text"])
        self.assertEqual("(empty)", facts["nova_hypervisor_type"]["text"])
        # docker: one iteration had facts, the other none: only tables count
        facts, entry = _facts(self.data, "docker")
        self.assertEqual((1, "overlay"), (entry["facts_tables"], facts["fileio_fs"]["text"]))

    def test_warnings_and_title(self):
        self.assertEqual(
            [{"kind": "kvm", "type": "emulated",
              "text": "kvm runs under QEMU TCG emulation: its CPU, memory and I/O figures "
                      "are not KVM figures"},
             {"kind": "kvm", "type": "kvm-name-emulated",
              "text": "kvm is named kvm, but its detected virtualization is QEMU TCG "
                      "(emulated): it is not a KVM (hardware-assisted) instance"}],
            self.data["warnings"])
        self.assertEqual("native vs kvm (emulated) vs docker vs old", self.data["title"])

    def test_emulation_from_either_fact_and_partial(self):
        tables = [sr.facts_table("qemu", {"virtualization": "QEMU TCG (emulated)"}),
                  sr.facts_table("qemu", {"emulated": "yes"}),
                  sr.facts_table("qemu", {"virtualization": "KVM", "emulated": "no"})]
        data = analyse.compare([sr.task(_bench("qemu", tables))])
        (warning,) = data["warnings"]     # the name does not claim kvm
        self.assertEqual("qemu runs under QEMU TCG emulation (in 2 of its 3 iterations "
                         "with facts): its CPU, memory and I/O figures are not KVM figures",
                         warning["text"])
        self.assertEqual("qemu (emulated)", data["title"])

    def test_no_warning_for_hardware_virtualization(self):
        tables = [sr.facts_table("kvm", {"virtualization": "KVM (hardware-assisted)",
                                         "emulated": "no"})]
        data = analyse.compare([sr.task(_bench("kvm", tables))])
        self.assertEqual(([], "kvm"), (data["warnings"], data["title"]))

    def test_json_csv_and_html(self):
        data = json.loads(render.render_json(self.data))
        self.assertEqual(self.data["environment"], data["environment"])
        rows = list(csv.DictReader(io.StringIO(render.render_csv(self.data))))
        facts = [r for r in rows if r["source"] == "fact"]
        memory = [(r["value"], r["n"]) for r in facts
                  if r["kind"] == "kvm" and r["metric"] == "memory_kb"]
        self.assertEqual([("1012345", "3"), ("2048000", "1")], memory)
        self.assertEqual("memory (kB)", [r for r in facts if r["metric"] == "memory_kb"][0][
            "group"])
        old = [r for r in facts if r["kind"] == "old"]
        self.assertEqual(len(output.DISCLOSED_FACTS), len(old))
        self.assertEqual({("not recorded", "0")}, {(r["value"], r["n"]) for r in old})
        page = render.render_html(self.data)
        self.assertIn("<title>rally-vmct comparison: native vs kvm (emulated) vs docker vs "
                      "old</title>", page)
        self.assertIn("<h1>Instance kinds compared: native vs kvm (emulated) vs docker vs "
                      "old</h1>", page)
        self.assertIn('<div class="warnings" id="warnings" role="alert"><p>Warning: kvm runs '
                      "under QEMU TCG emulation: its CPU, memory and I/O figures are not KVM "
                      "figures.</p>", page)
        self.assertIn('id="environment-table"', page)
        self.assertIn('<td class="mixed" title="iterations disagree">2 values: 1012345 (3), '
                      "2048000 (1)</td>", page)
        # the disclosure comes before the summary
        self.assertLess(page.index('id="environment"'), page.index('id="summary"'))

    def test_page_without_facts_has_no_warning_box(self):
        page = render.render_html(analyse.compare(sr.demo_tasks(times=3)))
        self.assertNotIn('id="warnings"', page)
        self.assertIn("<h1>Instance kinds compared: native vs kvm vs docker</h1>", page)
