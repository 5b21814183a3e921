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
"""netperf command builders and output parsers (netperf 2.6/2.7 omni tests).

Pure Python, no Rally or OpenStack import. Three output forms are understood:

* ``keyval``: ``-k SELECTORS`` prints ``NAME=value`` lines (what we run);
* ``csv``: ``-o SELECTORS`` prints a header line and a value line;
* ``classic``: the default tables of TCP_STREAM / *_RR without selectors.

The data connection uses a fixed *remote* port (``-- -P ,PORT``) so security groups
can allow it. A fixed local port too (``-P PORT``) would make client and server bind
the same port when both run on one host, and the test then silently measures nothing.
"""

import csv
import shlex

from rally_vmct.workloads.metrics import Metric
from rally_vmct.workloads.metrics import ParseError

TOOL = "netperf"
TESTS = ("TCP_STREAM", "TCP_RR", "UDP_RR")
OUTPUT_FORMS = ("keyval", "csv", "classic")
DEFAULT_CONTROL_PORT = 12865

STREAM_SELECTORS = ("THROUGHPUT", "THROUGHPUT_UNITS", "ELAPSED_TIME", "PROTOCOL",
                    "DIRECTION")
RR_SELECTORS = ("THROUGHPUT", "THROUGHPUT_UNITS", "TRANSACTION_RATE", "MEAN_LATENCY",
                "P50_LATENCY", "P90_LATENCY", "P99_LATENCY", "STDDEV_LATENCY",
                "ELAPSED_TIME", "PROTOCOL")

# Omni selector -> (metric name, unit); units of latencies are fixed by netperf.
_SELECTOR_METRICS = {
    "TRANSACTION_RATE": ("transaction_rate", "trans/s"),
    "MEAN_LATENCY": ("latency_mean", "us"),
    "P50_LATENCY": ("latency_p50", "us"),
    "P90_LATENCY": ("latency_p90", "us"),
    "P99_LATENCY": ("latency_p99", "us"),
    "STDDEV_LATENCY": ("latency_stddev", "us"),
    "ELAPSED_TIME": ("elapsed_time", "s"),
}

# The column titles ``-o`` prints for the selectors above.
_CSV_TITLES = {
    "Throughput": "THROUGHPUT",
    "Throughput Units": "THROUGHPUT_UNITS",
    "Transaction Rate Tran/s": "TRANSACTION_RATE",
    "Mean Latency Microseconds": "MEAN_LATENCY",
    "50th Percentile Latency Microseconds": "P50_LATENCY",
    "90th Percentile Latency Microseconds": "P90_LATENCY",
    "99th Percentile Latency Microseconds": "P99_LATENCY",
    "Stddev Latency Microseconds": "STDDEV_LATENCY",
    "Elapsed Time (sec)": "ELAPSED_TIME",
    "Protocol": "PROTOCOL",
    "Direction": "DIRECTION",
}

_THROUGHPUT_UNITS = {"10^6bits/s": "Mbit/s", "10^6bits/sec": "Mbit/s",
                     "10^9bits/s": "Gbit/s", "10^3bits/s": "kbit/s",
                     "Trans/s": "trans/s"}


def _missing(field, text):
    return ParseError("netperf output has no %s" % field, text, field)


def is_rr(test):
    return test.endswith("_RR")


def default_selectors(test):
    return RR_SELECTORS if is_rr(test) else STREAM_SELECTORS


def _check_port(name, port):
    if port is None:
        return
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ValueError("netperf %s must be an integer port 1-65535, got %r"
                         % (name, port))


def _check_size(name, size):
    if size is None:
        return
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError("netperf %s must be an integer number of bytes >= 1, got %r"
                         % (name, size))


def build_command(test, host, duration=10, control_port=None, data_port=None,
                  output="keyval", selectors=None, request_size=None,
                  response_size=None, message_size=None):
    """argv of one netperf run against netserver on ``host``.

    :param test: TCP_STREAM, TCP_RR or UDP_RR
    :param host: netserver address (``-H``)
    :param duration: seconds (``-l``), > 0
    :param control_port: netserver control port (``-p``), default netperf's 12865
    :param data_port: fixed remote data port (``-- -P ,PORT``)
    :param output: keyval (``-k``), csv (``-o``, with its header line) or classic
    :param selectors: omni output selectors, default per test kind
    :param request_size, response_size: bytes per transaction (``-r``), RR tests;
        integers >= 1
    :param message_size: bytes per send (``-m``), STREAM tests; an integer >= 1
    """
    if test not in TESTS:
        raise ValueError("netperf test must be one of %s, got %r"
                         % (", ".join(TESTS), test))
    if output not in OUTPUT_FORMS:
        raise ValueError("netperf output must be one of %s, got %r"
                         % (", ".join(OUTPUT_FORMS), output))
    if not host:
        raise ValueError("netperf host (-H) is required: the netserver address")
    if not isinstance(duration, (int, float)) or duration <= 0:
        raise ValueError("netperf duration must be > 0 seconds, got %r" % (duration,))
    _check_port("control_port", control_port)
    _check_port("data_port", data_port)
    for name, size in (("request_size", request_size), ("response_size", response_size),
                       ("message_size", message_size)):
        _check_size(name, size)

    argv = ["netperf", "-H", str(host), "-t", test, "-l", "%g" % duration]
    if control_port:
        argv += ["-p", str(control_port)]
    if output == "keyval":
        # No banner; -o keeps it because -P 0 would also drop the CSV header.
        argv += ["-P", "0"]
    test_args = []
    if output != "classic":
        test_args += ["-k" if output == "keyval" else "-o",
                      ",".join(selectors or default_selectors(test))]
    if data_port:
        test_args += ["-P", ",%d" % data_port]
    if is_rr(test) and (request_size or response_size):
        test_args += ["-r", "%d,%d" % (request_size or 1, response_size or 1)]
    if not is_rr(test) and message_size:
        test_args += ["-m", str(int(message_size))]
    if test_args:
        argv += ["--"] + test_args
    return argv


def netserver_command(port=DEFAULT_CONTROL_PORT, listen=None, foreground=False):
    """argv that starts netserver on control ``port`` (``-D``: stay in foreground)."""
    _check_port("port", port)
    argv = ["netserver", "-p", str(port)]
    if listen:
        argv += ["-L", str(listen)]
    if foreground:
        argv.append("-D")
    return argv


def shell_command(argv):
    """Shell-safe command line, in the C locale so numbers parse the same everywhere."""
    return "LC_ALL=C " + shlex.join(argv)


def parse_keyval(text):
    """``NAME=value`` lines of ``-k`` output as a dict of strings."""
    values = {}
    for line in (text or "").splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip().isupper():
            values[name.strip()] = value.strip()
    return values


def parse_csv(text):
    """Header and value line of ``-o`` output as a dict keyed by selector."""
    lines = [line for line in (text or "").splitlines() if "," in line]
    for index in range(len(lines) - 1):
        header = next(csv.reader([lines[index]]))
        if "Throughput" in header:
            row = next(csv.reader([lines[index + 1]]))
            return {_CSV_TITLES.get(title.strip(), title.strip()): value.strip()
                    for title, value in zip(header, row)}
    raise _missing("CSV header line with 'Throughput'", text)


def _classic_rows(text):
    """Numeric rows of a classic table (lines made only of numbers)."""
    rows = []
    for line in (text or "").splitlines():
        fields = line.split()
        try:
            rows.append([float(field) for field in fields])
        except ValueError:
            continue
    return [row for row in rows if row]


def parse_classic(test, text):
    """The figures of the default (classic) TCP_STREAM / *_RR table."""
    if "Throughput" not in (text or "") and "Trans." not in (text or ""):
        raise _missing("a classic result table", text)
    rows = _classic_rows(text)
    if is_rr(test):
        full = [row for row in rows if len(row) >= 6]
        if not full:
            raise _missing("the transaction rate row", text)
        rate = full[0][5]
        return {"THROUGHPUT": str(rate), "THROUGHPUT_UNITS": "Trans/s",
                "TRANSACTION_RATE": str(rate), "ELAPSED_TIME": str(full[0][4])}
    full = [row for row in rows if len(row) >= 5]
    if not full:
        raise _missing("the throughput row", text)
    units = "10^6bits/sec"
    for unit in _THROUGHPUT_UNITS:
        if unit in text:
            units = unit
            break
    return {"THROUGHPUT": str(full[0][4]), "THROUGHPUT_UNITS": units,
            "ELAPSED_TIME": str(full[0][3])}


def _number(raw, selector, text):
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise _missing("a number for %s (got %r)" % (selector, raw), text)


def to_metrics(test, raw, text=""):
    """Named metrics with units from raw selector values (any output form).

    Throughput is required; other selectors become metrics when present.
    netperf prints -1 for a selector it could not compute: such values are dropped
    rather than reported as figures.
    """
    if "THROUGHPUT" not in raw:
        raise _missing("THROUGHPUT", text)
    metrics = {}
    unit = _THROUGHPUT_UNITS.get(raw.get("THROUGHPUT_UNITS", ""),
                                 raw.get("THROUGHPUT_UNITS") or
                                 ("trans/s" if is_rr(test) else "Mbit/s"))
    metrics["throughput"] = Metric(_number(raw["THROUGHPUT"], "THROUGHPUT", text), unit)
    for selector, (name, unit) in _SELECTOR_METRICS.items():
        if selector in raw:
            value = _number(raw[selector], selector, text)
            if value >= 0:
                metrics[name] = Metric(value, unit)
    if is_rr(test) and "transaction_rate" not in metrics:
        metrics["transaction_rate"] = Metric(metrics["throughput"].value, "trans/s")
    return metrics


def parse(test, output, form="keyval"):
    """Metrics of one netperf run: ``{name: Metric(value, unit)}``.

    Raises :class:`ParseError` naming the missing field when the output lacks it
    (netperf prints its errors on the same stream, e.g. no netserver listening).
    """
    if test not in TESTS:
        raise ValueError("netperf test must be one of %s, got %r"
                         % (", ".join(TESTS), test))
    if form == "keyval":
        raw = parse_keyval(output)
    elif form == "csv":
        raw = parse_csv(output)
    elif form == "classic":
        raw = parse_classic(test, output)
    else:
        raise ValueError("netperf output form must be one of %s, got %r"
                         % (", ".join(OUTPUT_FORMS), form))
    return to_metrics(test, raw, output)
