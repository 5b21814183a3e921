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
"""sysbench command builders and output parsers (0.4.x, 0.5 and 1.0.x dialects).

Pure Python, no Rally or OpenStack import.

* :func:`detect_dialect` maps ``sysbench --version`` output to ``"1.0"``,
  ``"0.5"`` or ``"0.4"``.
* :func:`build` returns an argv list for ``cpu``, ``memory`` or ``fileio``
  (``prepare`` / ``run`` / ``cleanup``); :func:`render` makes the shell string
  (``LC_ALL=C`` prefix, every word quoted) for running it over SSH.
* :func:`parse` returns ``{name: Metric(value, unit)}`` and raises
  :class:`ParseError` naming the missing field, never a silent zero.
* :func:`describe` / :func:`comparable` record what a run measured: sysbench
  1.0 runs for a fixed time and reports events/s, 0.4 and 0.5 run a fixed
  number of events and report the total time. Results of different dialects
  or modes are never compared.

Units: sysbench 0.4/0.5 print ``Mb``/``MB`` for 2**20 bytes, so every size
below is MiB. Metrics that the dialect does not print are derived from the
printed counts and the total time; :data:`DERIVED` lists them.
"""

import re
import shlex

from rally_vmct.workloads import metrics
from rally_vmct.workloads.metrics import Metric

DIALECTS = ("1.0", "0.5", "0.4")
TESTS = ("cpu", "memory", "fileio")
COMMANDS = ("prepare", "run", "cleanup")

FIXED_TIME = "fixed-time"
FIXED_WORK = "fixed-work"
TIME_OR_WORK = "time-or-work"
UNBOUNDED = "bounded-by-size"

FILE_TEST_MODES = ("seqrd", "rndrd", "seqwr", "rndwr", "seqrewr", "rndrw")
FILE_IO_MODES = ("sync", "async", "mmap")
FILE_EXTRA_FLAGS = ("sync", "dsync", "direct")
FILE_FSYNC_MODES = ("fsync", "fdatasync")
MEMORY_OPERS = ("read", "write", "none")
MEMORY_SCOPES = ("global", "local")
MEMORY_ACCESS_MODES = ("seq", "rnd")

# What a dialect does when neither a time nor an event limit is given.
DEFAULT_LIMITS = {"1.0": {"time": 10, "events": 0},
                  "0.5": {"time": 0, "events": 10000},
                  "0.4": {"time": 0, "events": 10000}}

# Metrics computed here (from printed counts and the total time) because the
# dialect does not print them; everything else is read as printed.
DERIVED = {
    ("cpu", "1.0"): frozenset(),
    ("memory", "1.0"): frozenset(["events_per_second"]),
    ("fileio", "1.0"): frozenset(["events_per_second", "requests_per_second",
                                  "mib_per_second"]),
}
for _d in ("0.4", "0.5"):
    DERIVED[("cpu", _d)] = frozenset(["events_per_second"])
    DERIVED[("memory", _d)] = frozenset(["events_per_second"])
    DERIVED[("fileio", _d)] = frozenset([
        "events_per_second", "reads_per_second", "writes_per_second",
        "fsyncs_per_second", "read_mib_per_second", "written_mib_per_second"])
del _d

_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_SIZE_RE = re.compile(r"^[1-9]\d*[KMGT]?$")
_VERSION_RE = re.compile(r"\bsysbench\s+v?(\d+)\.(\d+)(?:\.(\d+))?([^\s:]*)")
# sysbench 0.4/0.5 size units (all binary), to MiB.
_LEGACY_UNITS = {"b": 1.0 / 2 ** 20, "Kb": 1.0 / 2 ** 10, "Mb": 1.0,
                 "Gb": 2.0 ** 10, "Tb": 2.0 ** 20}


class SysbenchError(ValueError):
    """Base of the errors this module raises."""


class ParameterError(SysbenchError):
    """A builder argument is missing, unknown or out of range."""


class ParseError(SysbenchError, metrics.ParseError):
    """sysbench output lacked a field (or reported an error)."""


# ---------------------------------------------------------------- versions

def version(version_text):
    """The version string (``"1.0.20"``, ``"0.4.12"``) in ``sysbench --version`` output."""
    match = _VERSION_RE.search(version_text or "")
    if not match:
        raise SysbenchError(
            "not sysbench version output (expected a line like 'sysbench 1.0.20'): %r"
            % (version_text or "")[:200])
    major, minor, patch, suffix = match.groups()
    text = "%s.%s" % (major, minor)
    if patch is not None:
        text += "." + patch
    return text + (suffix or "")


def detect_dialect(version_text):
    """``"1.0"``, ``"0.5"`` or ``"0.4"`` from ``sysbench --version`` output.

    Any 1.x is the ``"1.0"`` dialect (1.1 kept its command line and report).
    """
    text = version(version_text)
    major, minor = (int(part) for part in text.split(".")[:2])
    if major == 1:
        return "1.0"
    if (major, minor) == (0, 5):
        return "0.5"
    if (major, minor) == (0, 4):
        return "0.4"
    raise SysbenchError(
        "unsupported sysbench version %s: known dialects are 1.x, 0.5 and 0.4.x" % text)


def _check_dialect(dialect):
    if dialect not in DIALECTS:
        raise ParameterError("dialect=%r is not accepted; use one of: %s (see detect_dialect)"
                             % (dialect, ", ".join(DIALECTS)))


def _check_test(test):
    if test not in TESTS:
        raise ParameterError("test=%r is not accepted; use one of: %s"
                             % (test, ", ".join(TESTS)))


# ---------------------------------------------------------------- builders

def _int(minimum):
    def check(name, value):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ParameterError("%s=%r is not accepted; use an integer >= %d"
                                 % (name, value, minimum))
        return str(value)
    return check


def _positive_number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ParameterError("%s=%r is not accepted; use a number > 0" % (name, value))
    return str(value)


def _size(name, value):
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return str(value)
    text = str(value).strip().upper() if isinstance(value, str) else None
    if not text or not _SIZE_RE.match(text):
        raise ParameterError(
            "%s=%r is not accepted; use a size in bytes (int > 0) or a string like "
            "'16K', '1M', '2G' (suffixes K, M, G, T)" % (name, value))
    return text


def _choice(choices):
    def check(name, value):
        if value not in choices:
            raise ParameterError("%s=%r is not accepted; use one of: %s"
                                 % (name, value, ", ".join(choices)))
        return value
    return check


def _on_off(name, value):
    if not isinstance(value, bool):
        raise ParameterError("%s=%r is not accepted; use true or false" % (name, value))
    return "on" if value else "off"


def _extra_flags(dialect):
    def check(name, value):
        flags = [value] if isinstance(value, str) else value
        if not isinstance(flags, (list, tuple)) or not flags or any(
                flag not in FILE_EXTRA_FLAGS for flag in flags):
            raise ParameterError(
                "%s=%r is not accepted; use one of %s or (sysbench 1.0) a list of them"
                % (name, value, ", ".join(FILE_EXTRA_FLAGS)))
        if dialect != "1.0" and len(flags) > 1:
            raise ParameterError(
                "%s=%r is not accepted by sysbench %s, which takes one flag; use one of: %s"
                % (name, value, dialect, ", ".join(FILE_EXTRA_FLAGS)))
        return ",".join(flags)
    return check


# (parameter, option, check, commands it applies to); order = argv order.
_COMMON = (("threads", None, _int(1)), ("time", None, _int(0)), ("events", None, _int(0)))
_FILE_LAYOUT = ("prepare", "run", "cleanup")


def _test_options(test, dialect):
    if test == "cpu":
        return (("max_prime", "--cpu-max-prime", _int(2), ("run",)),)
    if test == "memory":
        return (("block_size", "--memory-block-size", _size, ("run",)),
                ("total_size", "--memory-total-size", _size, ("run",)),
                ("oper", "--memory-oper", _choice(MEMORY_OPERS), ("run",)),
                ("scope", "--memory-scope", _choice(MEMORY_SCOPES), ("run",)),
                ("access_mode", "--memory-access-mode", _choice(MEMORY_ACCESS_MODES),
                 ("run",)))
    return (("num", "--file-num", _int(1), _FILE_LAYOUT),
            ("total_size", "--file-total-size", _size, _FILE_LAYOUT),
            ("extra_flags", "--file-extra-flags", _extra_flags(dialect), ("prepare", "run")),
            ("test_mode", "--file-test-mode", _choice(FILE_TEST_MODES), ("run",)),
            ("block_size", "--file-block-size", _size, ("run",)),
            ("io_mode", "--file-io-mode", _choice(FILE_IO_MODES), ("run",)),
            ("rw_ratio", "--file-rw-ratio", _positive_number, ("run",)),
            ("fsync_freq", "--file-fsync-freq", _int(0), ("run",)),
            ("fsync_all", "--file-fsync-all", _on_off, ("run",)),
            ("fsync_end", "--file-fsync-end", _on_off, ("run",)),
            ("fsync_mode", "--file-fsync-mode", _choice(FILE_FSYNC_MODES), ("run",)))


def accepted_parameters(test):
    """Names :func:`build` accepts for ``test`` (besides ``command`` and ``executable``)."""
    _check_test(test)
    return tuple(p[0] for p in _COMMON) + tuple(p[0] for p in _test_options(test, "1.0"))


def limits(test, dialect, time=None, events=None):
    """``(time, events)`` after dialect defaults; both are always written to argv.

    One limit given alone turns the other off (0), so a run is exactly as long
    as asked whatever the dialect's own default.
    """
    _check_dialect(dialect)
    if time is None and events is None:
        default = DEFAULT_LIMITS[dialect]
        return default["time"], default["events"]
    time = 0 if time is None else time
    events = 0 if events is None else events
    _int(0)("time", time)
    _int(0)("events", events)
    if time == 0 and events == 0 and test != "memory":
        raise ParameterError(
            "time=0 and events=0 would make sysbench %s run without end; "
            "set time (seconds) > 0 or events > 0" % test)
    return time, events


def run_mode(test, dialect, time=None, events=None):
    """What bounds the run: fixed-time (report events/s) or fixed-work (report total time)."""
    time, events = limits(test, dialect, time, events)
    if time and events:
        return TIME_OR_WORK
    if time:
        return FIXED_TIME
    if events:
        return FIXED_WORK
    return UNBOUNDED


def build(test, dialect, command="run", executable="sysbench", **params):
    """argv for one sysbench command, e.g. ``build("cpu", "1.0", max_prime=20000, time=10)``.

    Parameters: ``threads``, ``time`` (seconds), ``events`` and the test's own
    (see :func:`accepted_parameters`): cpu ``max_prime``; memory
    ``block_size``, ``total_size``, ``oper``, ``scope``, ``access_mode``;
    fileio ``num``, ``total_size``, ``extra_flags``, ``test_mode``,
    ``block_size``, ``io_mode``, ``rw_ratio``, ``fsync_freq``, ``fsync_all``,
    ``fsync_end``, ``fsync_mode``. Sizes are bytes or strings like ``"16K"``.

    fileio ``prepare`` / ``cleanup`` accept the same parameters as ``run`` (so
    one dict serves all three) and write only the file layout options.
    """
    _check_test(test)
    _check_dialect(dialect)
    if command not in COMMANDS or (test != "fileio" and command != "run"):
        allowed = COMMANDS if test == "fileio" else ("run",)
        raise ParameterError("command=%r is not accepted for sysbench %s; use one of: %s"
                             % (command, test, ", ".join(allowed)))
    if not isinstance(executable, str) or not executable.strip():
        raise ParameterError("executable=%r is not accepted; use the sysbench path or name"
                             % (executable,))
    options = _test_options(test, dialect)
    known = accepted_parameters(test)
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ParameterError("unknown sysbench %s parameter(s) %s; accepted: %s"
                             % (test, ", ".join(unknown), ", ".join(known)))
    if test == "fileio" and command == "run" and params.get("test_mode") is None:
        raise ParameterError("sysbench fileio run needs test_mode; use one of: %s"
                             % ", ".join(FILE_TEST_MODES))

    legacy = dialect != "1.0"
    argv = [executable, "--test=%s" % test] if legacy else [executable, test]
    if command == "run":
        threads = params.get("threads")
        threads = 1 if threads is None else threads
        _int(1)("threads", threads)
        time, events = limits(test, dialect, params.get("time"), params.get("events"))
        if legacy:
            argv += ["--num-threads=%d" % threads, "--max-requests=%d" % events,
                     "--max-time=%d" % time]
        else:
            argv += ["--threads=%d" % threads, "--time=%d" % time, "--events=%d" % events]
    for name, option, check, commands in options:
        value = params.get(name)
        if value is None or command not in commands:
            continue
        argv.append("%s=%s" % (option, check(name, value)))
    argv.append(command)
    return argv


def env():
    """Environment additions for running sysbench (C locale: stable number format)."""
    return {"LC_ALL": "C"}


def render(argv, cwd=None):
    """Shell command line for ``argv``: ``[cd DIR && ]LC_ALL=C sysbench ...``, all quoted."""
    if (not isinstance(argv, (list, tuple)) or not argv
            or not all(isinstance(word, str) for word in argv)):
        raise ParameterError("argv=%r is not accepted; use a non-empty list of strings"
                             % (argv,))
    line = "LC_ALL=C " + shlex.join(argv)
    if cwd is not None:
        if not isinstance(cwd, str) or not cwd.startswith("/"):
            raise ParameterError("cwd=%r is not accepted; use an absolute directory path"
                                 % (cwd,))
        line = "cd %s && %s" % (shlex.quote(cwd), line)
    return line


# ------------------------------------------------------------ comparability

def describe(test, dialect, **params):
    """What a run measures, to store next to its metrics and to check comparability."""
    build(test, dialect, **params)  # validates
    time, events = limits(test, dialect, params.get("time"), params.get("events"))
    workload = {k: v for k, v in params.items() if v is not None}
    workload.setdefault("threads", 1)
    workload.update(time=time, events=events)
    mode = run_mode(test, dialect, params.get("time"), params.get("events"))
    return {"test": test, "dialect": dialect, "mode": mode,
            "primary_metric": primary_metric(mode), "params": workload}


def primary_metric(mode):
    """The figure a mode is judged by: events/s for fixed-time, total time for fixed-work."""
    return "events_per_second" if mode in (FIXED_TIME, TIME_OR_WORK) else "total_time"


def comparable(a, b):
    """``(True, "")`` when two :func:`describe` results may be compared, else ``(False, why)``.

    sysbench 1.0 measures a fixed time (events/s), 0.4/0.5 a fixed amount of
    work (total time); mixing them, or different workloads, misleads.
    """
    for key in ("test", "dialect", "mode"):
        if a.get(key) != b.get(key):
            return False, "%s differs: %s vs %s" % (key, a.get(key), b.get(key))
    if a.get("params") != b.get("params"):
        keys = sorted(set(a.get("params", {})) | set(b.get("params", {})))
        diff = [k for k in keys if a["params"].get(k) != b["params"].get(k)]
        return False, "workload parameters differ: %s" % ", ".join(diff)
    return True, ""


# ------------------------------------------------------------------ parsers

class _Output(object):
    def __init__(self, test, dialect, output):
        self.test = test
        self.dialect = dialect
        self.text = output

    def fail(self, field, example):
        raise ParseError("sysbench %s %s output has no %s (expected a line like %r)"
                         % (self.dialect, self.test, field, example), self.text, field)

    def search(self, field, pattern, example):
        match = re.search(pattern, self.text, re.MULTILINE)
        if not match:
            self.fail(field, example)
        return match

    def number(self, field, pattern, example, group=1):
        return float(self.search(field, pattern, example).group(group))

    def rate(self, count, seconds):
        # sysbench prints the total time to 0.0001 s: a run of a few events can print 0.0000
        # (one 4K read does), and a broken run does too. Refuse it rather than divide.
        if seconds <= 0:
            raise ParseError("sysbench %s %s output has total time %r s, so no rate can be "
                             "computed: the run was too short to time (give the workload "
                             "more 'events' or a 'time') or broken"
                             % (self.dialect, self.test, seconds), self.text, "total time")
        return count / seconds


def _check_header(out):
    fatal = re.search(r"^.*\bFATAL:.*$", out.text, re.MULTILINE)
    if fatal:
        raise ParseError("sysbench reported an error: %s" % fatal.group(0).strip(),
                         out.text, "FATAL")
    match = re.search(r"^\s*sysbench\s+v?\d+\.\d+\S*", out.text, re.MULTILINE)
    if match:
        found = detect_dialect(match.group(0))
        if found != out.dialect:
            raise ParseError("output is from sysbench %s (dialect %s), not dialect %s"
                             % (version(match.group(0)), found, out.dialect),
                             out.text, "version")


def _general(out):
    m = {}
    m["total_time"] = Metric(out.number(
        "total time", r"^\s*total time:\s+(%s)s\s*$" % _NUM,
        "total time:  10.0005s"), "s")
    m["events"] = Metric(int(out.number(
        "total number of events", r"^\s*total number of events:\s+(\d+)\s*$",
        "total number of events:  10000")), "events")
    if out.dialect == "1.0":
        out.search("latency section", r"^\s*Latency \(ms\):", "Latency (ms):")
        line = r"^\s*%s:\s+(" + _NUM + r")\s*$"
        pct = r"^\s*(\d+)th percentile:\s+(%s)\s*$" % _NUM
        pct_example = "95th percentile:  1.34"
    else:
        line = r"^\s*%s:\s+(" + _NUM + r")ms\s*$"
        pct = r"^\s*approx\.\s+(\d+) percentile:\s+(%s)ms\s*$" % _NUM
        pct_example = "approx.  95 percentile:  4.59ms"
    for stat in ("min", "avg", "max"):
        m["latency_" + stat] = Metric(out.number(
            "latency %s" % stat, line % stat, "%s:  1.10%s"
            % (stat, "" if out.dialect == "1.0" else "ms")), "ms")
    match = out.search("latency percentile", pct, pct_example)
    m["latency_p%s" % match.group(1)] = Metric(float(match.group(2)), "ms")
    return m


def _cpu(out, m):
    if out.dialect == "1.0":
        m["events_per_second"] = Metric(out.number(
            "events per second", r"^\s*events per second:\s+(%s)\s*$" % _NUM,
            "events per second:  1178.88"), "events/s")
    else:
        m["events_per_second"] = Metric(
            out.rate(m["events"].value, m["total_time"].value), "events/s")


# How sysbench 1.0 and 0.4/0.5 print a memory run: (field, pattern, example) of the operations
# line and of the transfer line, and the line saying that no memory operation was made.
_MEMORY_LINES = {
    "1.0": (("total operations", r"^Total operations:\s+(\d+)\s+\(\s*(%s) per second\)" % _NUM,
             "Total operations: 65536 (5470732.96 per second)"),
            ("MiB transferred", r"^(%s) MiB transferred \((%s) MiB/sec\)" % (_NUM, _NUM),
             "64.00 MiB transferred (5342.51 MiB/sec)"),
            r"^\s*operation:\s+none\s*$"),
    "legacy": (("operations performed",
                r"^Operations performed:\s+(\d+)\s+\(\s*(%s) ops/sec\)" % _NUM,
                "Operations performed: 10240 ( 4285.66 ops/sec)"),
               ("MiB transferred", r"^(%s) MB transferred \((%s) MB/sec\)" % (_NUM, _NUM),
                "10240.00 MB transferred (4285.66 MB/sec)"),
               r"^Memory operations type:\s+none\s*$"),
}


def _memory(out, m):
    ops_line, moved_line, no_oper = _MEMORY_LINES["1.0" if out.dialect == "1.0" else "legacy"]
    ops = out.search(*ops_line)
    m["operations"] = Metric(int(ops.group(1)), "operations")
    m["operations_per_second"] = Metric(float(ops.group(2)), "ops/s")
    if not re.search(no_oper, out.text, re.MULTILINE):
        match = out.search(*moved_line)
        m["mib_transferred"] = Metric(float(match.group(1)), "MiB")
        m["mib_per_second"] = Metric(float(match.group(2)), "MiB/s")
    m["events_per_second"] = Metric(
        out.rate(m["events"].value, m["total_time"].value), "events/s")


def _legacy_mib(value, unit):
    return float(value) * _LEGACY_UNITS[unit]


def _fileio(out, m):
    seconds = m["total_time"].value
    if out.dialect == "1.0":
        for field, name, unit in (("reads/s", "reads_per_second", "reads/s"),
                                  ("writes/s", "writes_per_second", "writes/s"),
                                  ("fsyncs/s", "fsyncs_per_second", "fsyncs/s"),
                                  ("read, MiB/s", "read_mib_per_second", "MiB/s"),
                                  ("written, MiB/s", "written_mib_per_second", "MiB/s")):
            m[name] = Metric(out.number(
                field, r"^\s*%s:\s+(%s)\s*$" % (re.escape(field), _NUM),
                "%s:  123.45" % field), unit)
        # 0.4/0.5 print "Requests/sec executed" as (reads + writes) / total time.
        m["requests_per_second"] = Metric(
            m["reads_per_second"].value + m["writes_per_second"].value, "requests/s")
        m["mib_per_second"] = Metric(
            m["read_mib_per_second"].value + m["written_mib_per_second"].value, "MiB/s")
    else:
        ops = out.search(
            "operations performed",
            r"^Operations performed:\s+(\d+) [Rr]eads?,\s+(\d+) [Ww]rites?,\s+(\d+) Other"
            r"\s+=\s+(\d+) Total",
            "Operations performed:  421740 Read, 281160 Write, 899653 Other = 1602553 Total")
        reads, writes, other = (int(ops.group(i)) for i in (1, 2, 3))
        unit = r"(b|Kb|Mb|Gb|Tb)"
        moved = out.search(
            "bytes transferred",
            r"^Read (%s)%s\s+Written (%s)%s\s+Total transferred (%s)%s\s+\((%s)%s/sec\)"
            % (_NUM, unit, _NUM, unit, _NUM, unit, _NUM, unit),
            "Read 6.4352Gb  Written 4.2902Gb  Total transferred 10.725Gb  (36.609Mb/sec)")
        read_mib = _legacy_mib(moved.group(1), moved.group(2))
        written_mib = _legacy_mib(moved.group(3), moved.group(4))
        m["read_mib"] = Metric(read_mib, "MiB")
        m["written_mib"] = Metric(written_mib, "MiB")
        m["mib_transferred"] = Metric(_legacy_mib(moved.group(5), moved.group(6)), "MiB")
        m["mib_per_second"] = Metric(_legacy_mib(moved.group(7), moved.group(8)), "MiB/s")
        m["requests_per_second"] = Metric(out.number(
            "requests/sec", r"^\s*(%s) Requests/sec executed\s*$" % _NUM,
            "2342.97 Requests/sec executed"), "requests/s")
        m["reads_per_second"] = Metric(out.rate(reads, seconds), "reads/s")
        m["writes_per_second"] = Metric(out.rate(writes, seconds), "writes/s")
        # fileio's "Other" operations are its fsync() calls.
        m["fsyncs_per_second"] = Metric(out.rate(other, seconds), "fsyncs/s")
        m["read_mib_per_second"] = Metric(out.rate(read_mib, seconds), "MiB/s")
        m["written_mib_per_second"] = Metric(out.rate(written_mib, seconds), "MiB/s")
    m["events_per_second"] = Metric(out.rate(m["events"].value, seconds), "events/s")


def _prepare(out):
    layout = out.search(
        "file layout", r"^(\d+) files, (\d+)Kb each, (\d+)Mb total\s*$",
        "128 files, 16384Kb each, 2048Mb total")
    out.search("creating files", r"^Creating files for the test\.\.\.\s*$",
               "Creating files for the test...")
    m = {"files": Metric(int(layout.group(1)), "files"),
         "file_total_mib": Metric(float(layout.group(3)), "MiB")}
    if out.dialect == "1.0":
        written = out.search(
            "bytes written", r"^(\d+) bytes written in (%s) seconds \((%s) MiB/sec\)\.?\s*$"
            % (_NUM, _NUM), "16777216 bytes written in 0.04 seconds (421.64 MiB/sec).")
        m["prepare_time"] = Metric(float(written.group(2)), "s")
        m["prepare_mib_per_second"] = Metric(float(written.group(3)), "MiB/s")
    return m


def parse(test, dialect, output, command="run"):
    """``{name: Metric(value, unit)}`` from one sysbench command's output.

    ``run`` gives total_time, events, events_per_second, latency_min/avg/max
    and latency_p95 (ms) for every test, plus memory operations,
    operations_per_second, mib_transferred, mib_per_second and fileio
    reads/writes/fsyncs/requests_per_second, read/written_mib_per_second,
    mib_per_second. fileio ``prepare`` gives the file layout (and the write
    rate on 1.0); ``cleanup`` only checks the output and gives ``{}``.
    """
    _check_test(test)
    _check_dialect(dialect)
    if command not in COMMANDS or (test != "fileio" and command != "run"):
        raise ParameterError("command=%r is not accepted for sysbench %s" % (command, test))
    if not isinstance(output, str):
        raise ParameterError("output=%r is not accepted; use the text sysbench printed"
                             % (output,))
    out = _Output(test, dialect, output)
    _check_header(out)
    if command == "prepare":
        return _prepare(out)
    if command == "cleanup":
        out.search("removing files", r"^Removing test files\.\.\.\s*$",
                   "Removing test files...")
        return {}
    metrics = _general(out)
    {"cpu": _cpu, "memory": _memory, "fileio": _fileio}[test](out, metrics)
    return metrics
