"""Bad input, generated: every argument of every plugin of this package, each bad value rejected.

The plugins come from Rally's registry after ``rally.plugins.load()`` (what the CLI
loads, our ``rally_plugins`` entry point included), not from a list here: every
scenario (``VMCT.*``) and context (``vmct_*``) of ``rally_vmct``, and the
``vmct-comparison`` exporters. For each argument (a scenario's ``run()`` argument
from its schema, a context's ``CONFIG_SCHEMA`` key, an exporter's ``--to`` option) and
each property nested in it, the bad values its schema lets one write are generated
from that schema:

* wrong type: null, a scalar and a container of JSON types the property does not take
  (``true`` for an integer or a string, ``7`` for a boolean, ``[]``, ``{}``);
* out of range: just past ``minimum``/``maximum``/``exclusiveMinimum``, -1 where an
  integer or number has no lower bound, 0 and 65536 for a ``*port``; a relative
  path, ``/`` and a newline for ``fileio_dir``;
* empty: ``""`` (a string; ``proxy_command``: "" means none), ``[]``, ``{}`` (an
  object with properties), a required property left out;
* unknown name: an unknown argument or key (``additionalProperties: false``), a
  value outside an ``enum``, a string against its ``pattern``, a kind label with ':'
  or the reserved 'native', an image, flavor or availability zone the cloud does
  not have, a floating network it does not have or that is not external, a ``%x``
  token or an unbalanced quote in a proxy command, a ``boot_args`` key the scenario
  sets itself;
* ``workloads``: from the plan's own tables (tools, tests, each test's
  parameters): an unknown tool, test or parameter, and for every parameter of
  every sysbench and netperf test the values no parameter takes (``{}``, -1,
  ``""``, an unknown word); those through the first scenario with ``workloads``
  only, all of them going through the one ``vmct_workloads`` parser.

Each value goes alone into an otherwise valid workload (the same workload with a
good value, synthesised from the schema, must validate: the control) and is
validated as ``rally task validate`` does it (``rally.api`` in child processes,
:mod:`tests.functional.rally_validate`) against a fake OpenStack (the one of
test_samples_validate); the first nested case of a scenario and of a context also
goes through the real CLI. Each must be rejected by a validator (not a traceback)
whose reason names the argument. The counts per plugin are printed (``pytest -s``);
when this was written: 6 scenarios, 3 contexts and 3 exporters, 68 arguments, 1306
bad values, every one rejected naming its argument.
"""

import collections
import copy
import json
import os
import re
import threading

import jsonschema
import testtools

from rally.common.plugin import plugin as rally_plugin
from rally.common import validation
from rally import plugins
from rally.task import context as rally_context
from rally.task import exporter
from rally.task import scenario as rally_scenario
from rally.task import sla as rally_sla
from rally.task import types as rally_types

from rally_vmct.task.exporters.comparison import plugin as comparison_plugin
from rally_vmct.task import kinds
from rally_vmct.task import output
from rally_vmct.task import validators
from rally_vmct.workloads import netperf
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import sysbench
from tests.functional import rally_home
from tests.functional import rally_validate
from tests.functional import test_samples_validate as samples

ENV = "fake-cloud-admin"
IMAGE, FLAVOR, ZONE = "cirros", "m1.tiny", "nova"
# Good values where the one synthesised from the schema is not (checked against the
# schema first, so "kind" gives a native label and a Nova kind alike).
GOOD = {
    "kind": [{"name": "kvm", "image": {"name": IMAGE}, "flavor": {"name": FLAVOR},
              "availability_zone": ZONE, "scheduler_hints": {}, "ssh_user": "root",
              "ssh_port": 22, "ssh_key_file": "/root/.ssh/id_vmct"}, output.NATIVE_KIND],
    "image": [{"name": IMAGE}], "flavor": [{"name": FLAVOR}],
    "fileio_dir": ["/var/tmp/vmct-fileio"],
    "workloads": [[{"sysbench": "cpu"}]],
    "proxy_command": ["nc %h %p"],
    "host": ["127.0.0.1"], "listen": ["127.0.0.1"],
}
# Arguments that only make sense together with another one: cv_target needs max_runs,
# netperf workloads a peer.
COMPANIONS = {"cv_target": {"max_runs": 3}, "workloads": {"netperf_peer": {"host": "127.0.0.1"}}}
# ... or with a context: peer_placement places the instance relative to the peer instance.
CONTEXT_COMPANIONS = {"peer_placement": {"vmct_netperf_peer": {"kind": GOOD["kind"][0]}}}
# "" is a good value of these: proxy_command "" means no proxy.
EMPTY_OK = {"proxy_command"}
# A context is validated inside a workload of this scenario.
CONTEXT_HOST = "VMCT.boot_and_benchmark"
UNKNOWN = "no_such_key"
MISSING = object()      # a required argument left out
# Values no sysbench or netperf parameter takes, whatever its kind (integer, size,
# choice, on/off, number, flags): wrong type, out of range, empty, unknown name.
BAD_PARAMETER_VALUES = ({}, -1, "", "no-such-value")

Case = collections.namedtuple("Case", "plugin argument path category value names")


def json_type(value):
    for name, types in (("null", type(None)), ("boolean", bool), ("integer", int),
                        ("number", float), ("string", str), ("array", list),
                        ("object", dict)):
        if isinstance(value, types):
            return name


def alternatives(schema):
    return schema.get("anyOf") or schema.get("oneOf") or []


def types_of(schema):
    """JSON types a (sub)schema takes, None when it takes any."""
    if schema.get("type"):
        found = schema["type"]
        return {found} if isinstance(found, str) else set(found)
    if "enum" in schema:
        return {json_type(v) for v in schema["enum"]}
    if alternatives(schema):
        found = set()
        for branch in alternatives(schema):
            branch_types = types_of(branch)
            if branch_types is None:
                return None
            found |= branch_types
        return found
    return None


def enum_of(schema):
    """The values of the property's ``enum`` (of one of its alternatives), else None."""
    return next((b["enum"] for b in [schema] + alternatives(schema) if "enum" in b), None)


def branch(schema, value):
    """The branch of an ``anyOf``/``oneOf`` that ``value`` matches (else the schema)."""
    for option in alternatives(schema):
        if jsonschema.Draft4Validator(option).is_valid(value):
            return option
    return schema


def synthesise(schema, name):
    """A good value of ``schema`` with every optional property filled in."""
    for good in GOOD.get(name, ()):
        if jsonschema.Draft4Validator(schema).is_valid(good):
            return copy.deepcopy(good)
    if alternatives(schema):
        objects = [b for b in alternatives(schema) if types_of(b) == {"object"}]
        return synthesise(objects[0] if objects else alternatives(schema)[0], name)
    if "enum" in schema:
        return schema["enum"][0]
    types = types_of(schema) or {"string"}
    if "object" in types:
        return {key: synthesise(sub, key) for key, sub in schema.get("properties", {}).items()}
    if "array" in types:
        return [synthesise(schema.get("items", {}), name)]
    if "boolean" in types:
        return True
    if types & {"integer", "number"}:
        low = max(int(schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)), 1)
        high = schema.get("exclusiveMaximum")
        # below an exclusive maximum of 1 or less (a confidence level): the middle
        return low if high is None or low < high else (schema.get("exclusiveMinimum", 0) + high) / 2
    return "x"


def set_at(value, path, new):
    """A copy of ``value`` with ``new`` at ``path`` (keys and indexes)."""
    if not path:
        return new
    value = copy.deepcopy(value)
    node = value
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return value


def dotted(argument, path):
    """``kind.image.name``: the argument and the keys below it (list indexes left out)."""
    return ".".join([argument] + [str(p) for p in path if not isinstance(p, int)])


def not_matching(pattern):
    """A short string against ``pattern``."""
    for candidate in ("a:b", "a[0]", " ", "x\ny", "$(x)", "-"):
        if not re.search(pattern, candidate):
            return candidate
    raise AssertionError("no value against pattern %r: add one to not_matching" % pattern)


class Generator(object):
    """The bad values of one argument, from its schema and what it means."""

    def __init__(self, argument, parameters=True):
        self.argument = argument
        self.parameters = parameters
        self.values = []

    def add(self, path, category, value, *names):
        self.values.append((tuple(path), category, value, names))

    def walk(self, schema, good, path=()):
        name = ([self.argument] + [p for p in path if not isinstance(p, int)])[-1]
        self.wrong_types(schema, path)
        self.ranges(schema, name, path)
        self.names(schema, name, good, path)
        types = types_of(schema) or set()
        if isinstance(good, dict) and "object" in types:
            self.object(branch(schema, good), good, path)
        elif isinstance(good, list) and "array" in types:
            self.add(path, "empty", [])
            items = schema.get("items")
            if schema.get("uniqueItems"):
                self.add(path, "unknown name", good + good)
            if items and good:
                self.walk(items, good[0], path + (0,))
        elif isinstance(good, str) and name not in EMPTY_OK:
            self.add(path, "empty", "")

    def wrong_types(self, schema, path):
        """null, a scalar and a container of types the property does not take."""
        types = types_of(schema)
        if types is None:
            return
        wrong = [value for value in (None, True, 7, 1.5, "x", [], {})
                 if json_type(value) not in types
                 and not (json_type(value) == "integer" and "number" in types)
                 and not (json_type(value) == "string" and enum_of(schema))]
        nulls = [v for v in wrong if v is None]
        scalars = [v for v in wrong if isinstance(v, (bool, int, float, str))]
        containers = [v for v in wrong if isinstance(v, (list, dict))]
        for value in nulls + scalars[:1] + containers[:1]:
            self.add(path, "wrong type", value)

    def ranges(self, schema, name, path):
        schema = next((b for b in alternatives(schema) if "minimum" in b), schema)
        types = types_of(schema) or set()
        if not types & {"integer", "number"}:
            if "minLength" in schema and schema["minLength"] > 0:
                self.add(path, "empty", "")
            if "maxLength" in schema:
                self.add(path, "out of range", "x" * (schema["maxLength"] + 1))
            return
        step = 1 if "number" not in types else 0.5
        if "minimum" in schema:
            self.add(path, "out of range", schema["minimum"] - step)
        if "exclusiveMinimum" in schema:
            self.add(path, "out of range", schema["exclusiveMinimum"])
        if "minimum" not in schema and "exclusiveMinimum" not in schema:
            self.add(path, "out of range", -1)
        if "maximum" in schema:
            self.add(path, "out of range", schema["maximum"] + step)
        if name.endswith("port"):
            self.add(path, "out of range", 0)
            self.add(path, "out of range", 65536)

    def names(self, schema, name, good, path):
        where = dotted(self.argument, path)
        if enum_of(schema) is not None:
            self.add(path, "unknown name", "no-such-" + name)
        if "pattern" in schema:
            self.add(path, "unknown name", not_matching(schema["pattern"]))
        if isinstance(good, str):
            # Kind labels: the chart titles are "<kind>: <group> [<unit>]".
            if re.search(r"(^|\.)kind(\.name)?$", where):
                self.add(path, "unknown name", not_matching(kinds.NAME_PATTERN))
            if re.search(r"(^|\.)kind\.name$", where):
                self.add(path, "unknown name", output.NATIVE_KIND)
            ref = re.search(r"(^|\.)(image|flavor)\.(name|id|regex)$", where)
            if ref:     # the reference alone: a name would win over a regex
                missing = ("^no-such-%s$" if ref.group(3) == "regex" else "no-such-%s")
                self.add(path[:-1], "unknown name", {name: missing % ref.group(2)})
            if where.endswith("availability_zone"):
                self.add(path, "unknown name", "no-such-zone")
            if where.endswith("floating_network"):
                self.add(path, "unknown name", "no-such-network")
                self.add(path, "unknown name", "private")     # not external
            if name == "proxy_command":
                self.add(path, "unknown name", "nc %x %p")
                self.add(path, "unknown name", "nc '%h %p")
            if name == "fileio_dir":
                for value in ("var/tmp/vmct-fileio", "/", "/var/tmp/a\nb"):
                    self.add(path, "out of range", value)
        if name == "boot_args":
            for key in validators.RESERVED_BOOT_ARGS:
                self.add(path, "unknown name", {key: "x"}, key)
        if name == "workloads":
            self.workloads(path)

    def object(self, schema, good, path):
        properties = schema.get("properties")
        if properties:
            self.add(path, "empty", {})
        for key in schema.get("required", ()) if path else ():
            self.add(path, "empty", {k: v for k, v in good.items() if k != key}, key)
        if schema.get("additionalProperties") is False:
            self.add(path, "unknown name", dict(good, **{UNKNOWN: 1}), UNKNOWN)
        for key, sub in (properties or {}).items():
            self.walk(sub, good[key] if key in good else synthesise(sub, key), path + (key,))

    def workloads(self, path):
        entries = [{"sysbench": test} for test in sysbench.TESTS]
        entries = [dict(e, test_mode=sysbench.FILE_TEST_MODES[0]) if e["sysbench"] == "fileio"
                   else e for e in entries]
        entries += [{"netperf": test} for test in netperf.TESTS]
        for value in ("cpu", ["cpu"], [7], [[]], [{}], [{"stress": "cpu"}],
                      [{"sysbench": "cpu", "netperf": "TCP_RR"}]):
            self.add(path, "wrong type" if value in ("cpu", [7], [[]]) else "unknown name",
                     value)
        for tool in plan_lib.TOOLS:
            for test in ("no-such-test", "", 7):
                self.add(path, "unknown name", [{tool: test}])
        for entry in entries:
            tool = next(t for t in plan_lib.TOOLS if t in entry)
            self.add(path, "unknown name", [dict(entry, **{UNKNOWN: 1})], UNKNOWN)
            if not self.parameters:
                continue
            parameters = (sysbench.accepted_parameters(entry[tool]) if tool == "sysbench"
                          else plan_lib.NETPERF_PARAMETERS)
            for parameter in parameters:
                for value in BAD_PARAMETER_VALUES:
                    self.add(path, "out of range" if value == -1 else "wrong type",
                             [dict(entry, **{parameter: value})], parameter)


def argument_cases(plugin, schema, required=(), parameters=True):
    """Every Case of every property of ``schema`` (a plugin's arguments).

    :param parameters: generate the bad values of every workload parameter too
    """
    cases = []
    for argument, sub in schema.get("properties", {}).items():
        generator = Generator(argument, parameters)
        good = synthesise(sub, argument)
        generator.walk(sub, good)
        seen = set()
        for path, category, value, names in generator.values:
            key = (path, json.dumps(value, sort_keys=True))
            if key in seen or (category == "wrong type" and jsonschema.Draft4Validator(
                    sub).is_valid(set_at(good, path, value))):
                continue    # a duplicate; or a "wrong type" another alternative takes
            seen.add(key)
            cases.append(Case(plugin, argument, path, category, set_at(good, path, value),
                              (argument,) + names))
        cases.append(Case(plugin, argument, None, "control", good, ()))
    for argument in required:
        cases.append(Case(plugin, argument, (), "empty", MISSING, (argument,)))
    cases.append(Case(plugin, UNKNOWN, (), "unknown name", 1, (UNKNOWN,)))
    return cases


def package_plugins():
    """Every plugin of rally_vmct in Rally's registry, by kind."""
    plugins.load()
    found = collections.defaultdict(list)
    for plugin in rally_plugin.Plugin.get_all(allow_hidden=True):
        if plugin.__module__.split(".")[0] != "rally_vmct":
            continue
        for base, kind in ((rally_scenario.Scenario, "scenario"),
                           (rally_context.BaseContext, "context"),
                           (exporter.TaskExporter, "exporter"),
                           (validation.Validator, "validator"),
                           (rally_sla.SLA, "sla"),
                           (rally_types.ResourceType, "type")):
            if issubclass(plugin, base):
                found[kind].append(plugin)
                break
        else:
            raise AssertionError("%s (%s) is a kind of plugin this test does not know: teach "
                                 "it to generate its bad input" % (plugin.get_name(), plugin))
    return found


def scenario_contexts(cls):
    """A scenario's contexts: users and their key for those that boot servers."""
    if cls.get_platform() == "openstack":
        return {"users": {"tenants": 1, "users_per_tenant": 1}, "keypair": {}}
    return {}


def scenario_args(cls):
    """The scenario's required arguments, each with a good value."""
    schema = cls.get_info()["schema"]
    return {name: synthesise(schema["properties"][name], name)
            for name in schema.get("required", ())}


def task_of(case, found):
    """The task (a dict, as in a task file) that validates ``case``."""
    if case.plugin.startswith("VMCT."):
        cls = rally_scenario.Scenario.get(case.plugin)
        args = scenario_args(cls)
        contexts = scenario_contexts(cls)
        if case.value is MISSING:
            args.pop(case.argument)
        else:
            args.update(COMPANIONS.get(case.argument, {}), **{case.argument: case.value})
        contexts.update(CONTEXT_COMPANIONS.get(case.argument, {}))
    else:
        cls = rally_scenario.Scenario.get(CONTEXT_HOST)
        args = scenario_args(cls)
        sla = case.plugin in [p.get_name() for p in found["sla"]]
        schema = (rally_sla.SLA if sla else rally_context.Context).get(
            case.plugin).CONFIG_SCHEMA
        config = {name: synthesise(schema["properties"][name], name)
                  for name in schema.get("required", ())}
        if case.value is MISSING:
            config.pop(case.argument)
        else:
            config[case.argument] = case.value
        contexts = scenario_contexts(cls)
        if not sla:
            contexts[case.plugin] = config
    workload = {"scenario": {cls.get_name(): args}, "contexts": contexts,
                "runner": {"constant": {"times": 1, "concurrency": 1}}}
    if case.plugin in [p.get_name() for p in found["sla"]]:
        workload["sla"] = {case.plugin: config}
    return {"version": 2, "title": "bad input", "subtasks": [{
        "title": case.plugin, "workloads": [workload]}]}


def reason(error):
    """What the validators said (Rally's message repeats the whole workload first)."""
    return error.split("Reason(s):", 1)[-1]


def named(name, text):
    """Does ``text`` name ``name`` (as a word: ``host`` is not in ``hosts``)?"""
    return re.search(r"(?<![\w])%s(?![\w])" % re.escape(name), text) is not None


class _Handler(samples._Handler):
    """test_samples_validate's fake OpenStack, plus the zones a user sees."""

    def do_GET(self):
        if self.path.split("?")[0].rstrip("/") == "/compute/v2.1/os-availability-zone":
            return self.reply(200, {"availabilityZoneInfo": [
                {"zoneName": zone, "zoneState": {"available": True}, "hosts": None}
                for zone in self.server.zones]})
        return super().do_GET()


def generate():
    """``(plugins by kind, cases)``: every bad value of every scenario and context."""
    found = package_plugins()
    cases = []
    parameters = True
    for cls in found["scenario"]:
        schema = cls.get_info()["schema"]
        cases += argument_cases(cls.get_name(), schema, schema.get("required", ()), parameters)
        # Every scenario's workloads go through one parser (vmct_workloads): the bad
        # value of every parameter of every test once, the other bad plans everywhere.
        parameters = parameters and "workloads" not in schema["properties"]
    for cls in found["context"] + found["sla"]:
        cases += argument_cases(cls.get_name(), cls.CONFIG_SCHEMA,
                                cls.CONFIG_SCHEMA.get("required", ()))
    return found, cases


class BadInputTestCase(testtools.TestCase):
    """One Rally home, env and validation run for the class; the tests read the results."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cloud = samples.FakeOpenStack([IMAGE], [FLAVOR], [ZONE])
        cls.cloud.RequestHandlerClass = _Handler
        cls.thread = threading.Thread(target=cls.cloud.serve_forever, daemon=True)
        cls.thread.start()
        cls.home = rally_home.RallyHome()
        cls.home.setUp()
        try:
            user = {"username": "demo", "password": "secret", "project_name": "demo",
                    "user_domain_name": "Default", "project_domain_name": "Default"}
            spec = {"existing@openstack": {"auth_url": cls.cloud.url + "/identity/v3",
                                           "region_name": "RegionOne", "users": [user],
                                           "admin": dict(user, username="admin")}}
            spec_file = os.path.join(cls.home.path, "spec.json")
            with open(spec_file, "w") as f:
                json.dump(spec, f)
            cls.home.rally("env", "create", "--name", ENV, "--spec", spec_file)
            cls.found, cls.cases = generate()
            cls.results = rally_validate.validate_many(
                cls.home, ENV, [task_of(case, cls.found) for case in cls.cases])
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.home.cleanUp()
        cls.cloud.shutdown()
        cls.cloud.server_close()
        cls.thread.join(10)
        super().tearDownClass()

    def test_every_plugin_kind_and_validator_is_covered(self):
        self.assertEqual({"scenario", "context", "exporter", "validator", "type", "sla"},
                         set(self.found))
        self.assertIn("vmct_percentile", [c.get_name() for c in self.found["sla"]])
        self.assertIn("VMCT.native_benchmark", [c.get_name() for c in self.found["scenario"]])
        self.assertIn("vmct_netperf_peer", [c.get_name() for c in self.found["context"]])
        # every validator of the package guards an argument whose bad values are generated
        used = {name for cls in self.found["scenario"] + self.found["context"]
                + self.found["exporter"]
                for name, _, _ in cls._meta_get("validators", default=[])}
        self.assertEqual([], [v.get_name() for v in self.found["validator"]
                              if v.get_name() not in used])

    def test_every_bad_value_is_rejected_naming_the_argument(self):
        problems, counts, unnamed = [], collections.Counter(), collections.Counter()
        for case, result in zip(self.cases, self.results):
            why = reason(result["error"])
            where = "%s %s=%r" % (case.plugin, dotted(case.argument, case.path or ()),
                                  case.value)
            if case.category == "control":
                if not result["valid"]:
                    problems.append("%s: the good value is rejected: %s" % (where, why))
                continue
            counts[case.plugin] += 1
            if result["valid"]:
                problems.append("%s (%s) is accepted" % (where, case.category))
            elif "Traceback" in why:
                problems.append("%s: a traceback, not a message: %s" % (where, why[-600:]))
            elif not all(named(name, why) for name in case.names):
                problems.append("%s: the reason does not name %s: %s"
                                % (where, "/".join(case.names), why.strip()))
            leaf = [p for p in (case.path or ()) if isinstance(p, str)]
            if leaf and not named(leaf[-1], why):
                unnamed[case.plugin] += 1
        counts.update(self.exporter_cases(self.found["exporter"], problems))
        self.print_summary(self.cases, counts, unnamed)
        if problems:
            self.fail("%d of the bad values:\n%s" % (len(problems), "\n".join(problems)))

    def test_rally_task_validate_cli_says_the_same(self):
        # the first nested bad value of a scenario and of a context the API rejects naming
        # the argument, through the real CLI
        picked = [next(i for i, (c, r) in enumerate(zip(self.cases, self.results))
                       if c.plugin.startswith(prefix) and c.category == "out of range"
                       and c.path and named(c.argument, reason(r["error"])))
                  for prefix in ("VMCT.", "vmct_")]
        for index in picked:
            case, result = self.cases[index], self.results[index]
            path = os.path.join(self.home.path, "bad.json")
            with open(path, "w") as f:
                json.dump(task_of(case, self.found), f)
            proc = self.home.rally("task", "validate", path, "--env", ENV, check=False)
            self.assertNotEqual(0, proc.returncode, proc.stdout)
            self.assertNotIn(samples.VALID, proc.stdout)
            said = reason(proc.stdout)
            self.assertTrue(named(case.argument, said), said)
            first = reason(result["error"]).strip().splitlines()[0]
            self.assertIn(first, proc.stdout)

    def exporter_cases(self, exporters, problems):
        """The exporters' --to options, validated as `rally task export` does."""
        bad = {"baseline": [""], "confidence": ["", "x", "0", "1", "-1", "1.5"]}
        self.assertEqual(set(comparison_plugin.OPTIONS), set(bad))
        queries = [(UNKNOWN, "%s=1" % UNKNOWN)] + [
            (option, "%s=%s" % (option, value)) for option, values in bad.items()
            for value in values]
        counts = collections.Counter()
        for cls in exporters:
            for option, query in queries:
                errors = exporter.TaskExporter.validate(
                    cls.get_name(), context={}, config={},
                    plugin_cfg={"destination": "cmp.html?" + query}, vtype="syntax")
                counts[cls.get_name()] += 1
                if not errors or not named(option, " ".join(errors)):
                    problems.append("%s --to 'cmp.html?%s': %s"
                                    % (cls.get_name(), query, errors or "accepted"))
        return counts

    @staticmethod
    def print_summary(cases, counts, unnamed):
        arguments = collections.Counter(c.plugin for c in cases if c.category == "control")
        for plugin in counts:
            arguments.setdefault(plugin, len(comparison_plugin.OPTIONS))
        print("\nBad input, generated, each rejected naming the argument:")
        print("  %-28s %9s %10s %s" % ("plugin", "arguments", "bad values",
                                       "(nested, the field itself not named)"))
        for plugin in sorted(counts):
            print("  %-28s %9d %10d (%d)"
                  % (plugin, arguments[plugin], counts[plugin], unnamed[plugin]))
        print("  %-28s %9d %10d (%d)"
              % ("total: %d plugins" % len(counts), sum(arguments.values()),
                 sum(counts.values()), sum(unnamed.values())))
