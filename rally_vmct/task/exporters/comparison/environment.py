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
"""What produced each kind's numbers: the facts tables, tallied and disclosed.

Every benchmark iteration adds a complete Table ``"<kind>: instance facts"``
(columns ``fact, value``; :mod:`rally_vmct.task.output`). :class:`FactsTally`
counts, per kind, every value each :data:`output.DISCLOSED_FACTS` key took over
the iterations; :meth:`FactsTally.disclosure` says it per kind (one value, or
"2 values: A (3), B (1)"), :func:`warnings` warns about emulated kinds and
:func:`page_title` names the kinds with "(emulated)" marks. Pure Python.
"""

import collections
import re

from rally_vmct.task import output

NOT_RECORDED = "not recorded"
EMPTY = "(empty)"
EMULATED_KEY = "emulated"
VIRTUALIZATION_KEY = "virtualization"
DIALECT_KEY = "sysbench dialect"
_EMULATION_RE = re.compile(r"tcg|emulat", re.IGNORECASE)
# What the exporter reads of a facts table (the rest, e.g. boot_id, varies by design).
_READ = frozenset([key for key, _ in output.DISCLOSED_FACTS] + [DIALECT_KEY])


def _tables(iteration):
    """``(kind, rows)`` of an iteration's facts tables (complete outputs)."""
    for chart in (iteration.get("output") or {}).get("complete") or ():
        if not isinstance(chart, dict):
            continue
        kind = output.parse_facts_title(chart.get("title"))
        data = chart.get("data")
        if kind is not None and isinstance(data, dict):
            yield kind, data.get("rows") or ()


def _facts(rows):
    facts = {}
    for row in rows:
        if isinstance(row, (list, tuple)) and len(row) >= 2:
            facts[str(row[0])] = "" if row[1] is None else str(row[1])
    return facts


def _read_rows(rows):
    """The rows the exporter reads, as a hashable tuple (TypeError if it cannot be)."""
    kept = tuple((row[0], row[1]) for row in rows
                 if isinstance(row, (list, tuple)) and len(row) >= 2 and row[0] in _READ)
    hash(kept)
    return kept


def facts_tables(iteration):
    """``{kind: {fact: value}}`` of an iteration's facts tables (complete outputs)."""
    found = {}
    for kind, rows in _tables(iteration):
        found.setdefault(kind, {}).update(_facts(rows))
    return found


def value_text(values):
    """One value as is; several as ``"2 values: A (3), B (1)"``.

    ``values``: ``[(value, count)]`` most frequent first.
    """
    if not values:
        return NOT_RECORDED
    if len(values) == 1:
        return values[0][0]
    return "%d values: %s" % (len(values), ", ".join(
        "%s (%d)" % (value, count) for value, count in values))


def is_emulated_value(key, value):
    """Whether one fact value says the CPU is emulated."""
    if key == EMULATED_KEY:
        return value.strip().lower() == "yes"
    if key == VIRTUALIZATION_KEY:
        return bool(_EMULATION_RE.search(value))
    return False


class FactsTally(object):
    """Counts of each disclosed fact's values, per kind."""

    def __init__(self):
        self.tables = collections.Counter()     # kind -> facts tables seen
        self.emulated = collections.Counter()   # kind -> tables saying "emulated"
        self.values = {}                        # kind -> {key: Counter(value)}
        # Tables alike in what is read (the usual case) are parsed and tallied once.
        self._pending = collections.Counter()   # (kind, rows read) -> count
        self._parsed = {}                       # (kind, rows read) -> facts

    def add_iteration(self, iteration):
        """Tally an iteration's facts tables; returns ``{kind: facts}`` of it."""
        found = {}
        for kind, rows in _tables(iteration):
            try:
                key = (kind, _read_rows(rows))
            except TypeError:
                key = (kind, repr(rows))
            facts = self._parsed.get(key)
            if facts is None:
                facts = self._parsed[key] = {k: v for k, v in _facts(rows).items()
                                             if k in _READ}
            self._pending[key] += 1
            found.setdefault(kind, {}).update(facts)
        return found

    def _flush(self):
        pending, self._pending = self._pending, collections.Counter()
        for key, count in pending.items():
            self.add(key[0], self._parsed[key], count)

    def add(self, kind, facts, count=1):
        """Tally one facts table (``count`` identical ones)."""
        self.tables[kind] += count
        if any(is_emulated_value(key, facts.get(key) or "")
               for key in (EMULATED_KEY, VIRTUALIZATION_KEY)):
            self.emulated[kind] += count
        per_key = self.values.setdefault(kind, {})
        for key, _ in output.DISCLOSED_FACTS:
            value = facts.get(key)
            if value is None:
                value = NOT_RECORDED
            elif not value.strip():
                value = EMPTY
            per_key.setdefault(key, collections.Counter())[value] += count

    def counted(self, kind, key):
        """``[(value, count)]`` most frequent first (ties: first seen first)."""
        counter = (self.values.get(kind) or {}).get(key)
        if not counter:
            return []
        return counter.most_common()

    def disclosure(self, kind):
        """The environment entry of one kind (a JSON-ready dict)."""
        self._flush()
        facts = []
        for key, label in output.DISCLOSED_FACTS:
            values = self.counted(kind, key)
            facts.append({"key": key, "label": label,
                          "values": [{"value": v, "count": n} for v, n in values],
                          "text": value_text(values)})
        emulated = self.emulated[kind]
        return {"kind": kind, "facts_tables": self.tables[kind], "facts": facts,
                "emulated": emulated > 0, "emulated_tables": emulated}


def environment(tally, kinds):
    """Environment entries of ``kinds``, in that order."""
    return [tally.disclosure(kind) for kind in kinds]


def _virtualization(entry):
    for fact in entry["facts"]:
        if fact["key"] == VIRTUALIZATION_KEY:
            return fact["text"]
    return NOT_RECORDED


def warnings(entries):
    """Plain warnings about emulated kinds: ``[{"kind", "type", "text"}]``."""
    out = []
    for entry in entries:
        if not entry["emulated"]:
            continue
        kind = entry["kind"]
        share = ""
        if entry["emulated_tables"] < entry["facts_tables"]:
            share = " (in %d of its %d iterations with facts)" % (
                entry["emulated_tables"], entry["facts_tables"])
        out.append({"kind": kind, "type": "emulated",
                    "text": "%s runs under QEMU TCG emulation%s: its CPU, memory and I/O "
                            "figures are not KVM figures" % (kind, share)})
        if "kvm" in kind.lower():
            out.append({"kind": kind, "type": "kvm-name-emulated",
                        "text": "%s is named kvm, but its detected virtualization is %s: "
                                "it is not a KVM (hardware-assisted) instance"
                                % (kind, _virtualization(entry))})
    return out


def page_title(entries):
    """``"native vs kvm (emulated) vs docker"``; "no data" without kinds."""
    names = ["%s (emulated)" % e["kind"] if e["emulated"] else e["kind"]
             for e in entries]
    return " vs ".join(names) or "no data"
