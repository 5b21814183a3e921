"""The exported comparison page in a real headless Chromium.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
NUL-separated JSON on fds 3 and 4, no port opened). The test loads the page from
``file://``, collects console messages, exceptions, log entries and every network
request, checks that charts and tables are laid out and that nothing needs sideways
scrolling, and saves a full-page screenshot to ``$VMCT_RESULTS`` (``/tmp/vmct-results``
when unset).

Chromium comes from Debian's ``chromium`` package; when it is missing and the test
runs as root with apt-get available, the test installs it (once).
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import fixtures
import testtools

from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import render
from rally_vmct.task import output
from tests.unit.task.exporters.comparison import sample_results

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--remote-debugging-pipe",
                  "--hide-scrollbars", "--mute-audio")
_install_lock = threading.Lock()


def find_chromium():
    """Path of the chromium binary, installing Debian's package if needed."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    with _install_lock:
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            raise RuntimeError("chromium is not installed; install Debian's package: "
                               "apt-get install --no-install-recommends chromium")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                   "chromium"]
        if subprocess.run(install, env=env, capture_output=True).returncode:
            subprocess.run(["apt-get", "update", "-qq"], env=env, check=True,
                           capture_output=True)
            subprocess.run(install, env=env, check=True, capture_output=True)
    return shutil.which("chromium")


class Browser(object):
    """Headless Chromium over the DevTools pipe; a context manager."""

    def __init__(self, timeout=60):
        self.timeout = timeout
        self.events = []
        self._replies = {}
        self._cond = threading.Condition()
        self._next_id = 0
        self._profile = tempfile.mkdtemp(prefix="vmct-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Chromium expects the pipe on fds 3 (commands) and 4 (replies).
        argv = ["bash", "-c", 'exec 3<&"$1" 4>&"$2"; shift 2; exec "$@"', "vmct",
                str(to_child_r), str(from_child_w), find_chromium()]
        argv += list(CHROMIUM_FLAGS) + ["--user-data-dir=" + self._profile,
                                        "about:blank"]
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, pass_fds=(to_child_r, from_child_w),
                                     stdin=subprocess.DEVNULL, stdout=self._stderr,
                                     stderr=self._stderr)
        os.close(to_child_r)
        os.close(from_child_w)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = None

    def _read(self):
        buf = b""
        while True:
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                break
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                message = json.loads(raw)
                with self._cond:
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self.events.append(message)
                    self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    _closed = False

    def send(self, method, params=None, session=True):
        with self._cond:
            self._next_id += 1
            msg_id = self._next_id
        message = {"id": msg_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while msg_id not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise RuntimeError("chromium gave no reply to %s; its output: %s"
                                       % (method, self.output()))
                self._cond.wait(left)
            reply = self._replies.pop(msg_id)
        if "error" in reply:
            raise RuntimeError("%s failed: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def wait_event(self, method, start=0):
        deadline = time.monotonic() + self.timeout
        with self._cond:
            while True:
                for event in self.events[start:]:
                    if event.get("method") == method:
                        return event
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise RuntimeError("no %s event from chromium" % method)
                self._cond.wait(left)

    def output(self):
        self._stderr.seek(0)
        return self._stderr.read()[-2000:].decode(errors="replace")

    def open_page(self, url, width=1280, height=900):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(domain + ".enable")
        self.resize(width, height)
        start = len(self.events)
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", start)

    def resize(self, width, height):
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": False})

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError("page script failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, path, width=1280, max_height=20000):
        height = self.evaluate("document.documentElement.scrollHeight")
        height = min(int(height), max_height)
        self.resize(width, height)
        data = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        with open(path, "wb") as f:
            f.write(base64.b64decode(data["data"]))
        return height

    def problems(self):
        """Console errors/warnings, uncaught exceptions, error log entries."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in (
                    "error", "warning", "assert"):
                found.append("console.%s: %s" % (params["type"], " ".join(
                    str(a.get("value", a.get("description"))) for a in params["args"])))
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                found.append("exception: %s %s" % (details.get("text"), details.get(
                    "exception", {}).get("description", "")))
            elif method == "Log.entryAdded" and params["entry"]["level"] in (
                    "error", "warning"):
                found.append("log %s: %s" % (params["entry"]["level"],
                                             params["entry"]["text"]))
        return found

    def requests(self):
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close", session=False)
                except RuntimeError:
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            os.close(self._to_child)
            self._reader.join(timeout=5)
            os.close(self._from_child)
            self._stderr.close()
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


LAYOUT_PROBE = """(() => {
  const box = e => e.getBoundingClientRect();
  const charts = [...document.querySelectorAll('svg.chart')];
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    charts: charts.length,
    chartsDrawn: charts.filter(s => box(s).width > 300 && box(s).height > 100 &&
                               s.querySelectorAll('circle, rect').length > 0).length,
    lifecycle: document.querySelectorAll('svg.lifecycle rect[fill]').length,
    scaleCharts: [...document.querySelectorAll('svg.scale')].map(s => ({
        width: box(s).width, height: box(s).height, right: box(s).right,
        markers: s.querySelectorAll('circle, rect').length,
        title: s.querySelector('title').textContent,
        desc: s.querySelector('desc').textContent})),
    scaleRows: document.querySelectorAll('table.quantiles tbody tr').length,
    summaryRows: document.querySelectorAll('#summary-table tbody tr').length,
    statsTables: document.querySelectorAll('table.stats').length,
    widestTable: Math.max(0, ...[...document.querySelectorAll('table')].map(
        t => box(t).right)),
    text: document.body.innerText.slice(0, 20000)
  };
})()"""


SECTIONS_PROBE = """(() => {
  const seen = sel => {
    const e = document.querySelector(sel);
    if (!e) return null;
    const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    return {top: r.top + window.scrollY, width: r.width, height: r.height,
            display: cs.display, visibility: cs.visibility, text: e.innerText};
  };
  const rows = sel => [...document.querySelectorAll(sel)].map(
      tr => [...tr.cells].map(td => td.innerText));
  return {
    title: document.title,
    h1: document.querySelector('h1').innerText,
    innerHeight: window.innerHeight,
    warnings: seen('#warnings'),
    environment: seen('#environment-table'),
    environmentRows: rows('#environment-table tr'),
    seedCheck: seen('#seed-check-table'),
    seedRoles: seen('#seed-roles'),
    seedRows: rows('#seed-check-table tbody tr'),
    summary: seen('#summary')
  };
})()"""


def check_sections(test, sections, data):
    """The disclosure table, the emulation warning and the seed check are shown."""
    for name in ("warnings", "environment", "seedCheck", "seedRoles"):
        box = sections[name]
        test.assertIsNotNone(box, name)
        test.assertGreater(box["width"], 300, name)
        test.assertGreater(box["height"], 10, name)
        test.assertNotEqual("none", box["display"], name)
        test.assertEqual("visible", box["visibility"], name)
    test.assertEqual("rally-vmct comparison: " + data["title"], sections["title"])
    test.assertEqual("Instance kinds compared: " + data["title"], sections["h1"])
    # The warning is plain text above the fold, before anything else.
    for warning in data["warnings"]:
        test.assertIn("Warning: %s." % warning["text"], sections["warnings"]["text"])
    test.assertLess(sections["warnings"]["top"], sections["innerHeight"])
    test.assertLess(sections["environment"]["top"], sections["summary"]["top"])
    head = sections["environmentRows"][0]
    test.assertEqual(["fact"] + [
        e["kind"] + (" (emulated)" if e["emulated"] else "") for e in data["environment"]],
        [cell.strip() for cell in head])
    labels = [row[0] for row in sections["environmentRows"][2:]]
    test.assertEqual([label for _, label in output.DISCLOSED_FACTS], labels)
    for row, key in zip(sections["environmentRows"][2:], output.DISCLOSED_FACTS):
        facts = [{f["key"]: f["text"] for f in e["facts"]}[key[0]]
                 for e in data["environment"]]
        test.assertEqual(facts, row[1:])
    checks = data["seed_check"]["checks"]
    test.assertEqual(len(checks), len(sections["seedRows"]))
    for row, check in zip(sections["seedRows"], checks):
        test.assertTrue(row[0].startswith("(%s) %s" % (check["id"], check["claim"])), row)
        test.assertTrue(row[-1].startswith(check["verdict"]), row)
        test.assertIn(check["reason"], row[-1])


def results_dir():
    """Where screenshots go: $VMCT_RESULTS, else one fixed dir under /tmp."""
    path = os.environ.get("VMCT_RESULTS") or os.path.join(tempfile.gettempdir(),
                                                          "vmct-results")
    os.makedirs(path, exist_ok=True)
    return path


class TestComparisonPageInChromium(testtools.TestCase):

    def setUp(self):
        super(TestComparisonPageInChromium, self).setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def _page(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return "file://" + path

    def test_detector_sees_console_errors_and_network(self):
        # The checks below can fail: a page with a script error, console.error and a
        # request off the machine must be caught.
        url = self._page("bad.html", "<html><body><img src='http://127.0.0.1:9/x.png'>"
                                     "<script>console.error('broken'); nope();"
                                     "</script></body></html>")
        with Browser() as browser:
            browser.open_page(url)
            time.sleep(0.3)
            problems = browser.problems()
            requests = browser.requests()
        self.assertTrue(any("broken" in p for p in problems), problems)
        self.assertTrue(any("nope" in p for p in problems), problems)
        self.assertIn("http://127.0.0.1:9/x.png", requests)

    @staticmethod
    def _look(url, shot, first_probe=None):
        """Layout at 1280 and 1024 px wide, console problems, requests, ``first_probe``.

        ``first_probe`` runs before the layout probe, at 1280 px.
        """
        with Browser() as browser:
            browser.open_page(url, width=1280)
            time.sleep(0.2)
            first = browser.evaluate(first_probe) if first_probe else None
            wide = browser.evaluate(LAYOUT_PROBE)
            browser.resize(1024, 800)
            narrow = browser.evaluate(LAYOUT_PROBE)
            browser.screenshot(shot)
            return wide, narrow, browser.problems(), browser.requests(), first

    def _look_clean(self, name, data, first_probe=None):
        """:meth:`_look` at ``data``'s page (``name``.html, screenshot ``name``.png).

        No console problem, nothing loaded but the page itself; returns the layouts,
        the first probe's answer and the screenshot's path.
        """
        url = self._page(name + ".html", render.render_html(data, "test"))
        shot = os.path.join(results_dir(), name + ".png")
        wide, narrow, problems, requests, first = self._look(url, shot, first_probe)
        self.assertEqual([], problems)
        self.assertEqual([url], requests, "the page must load nothing but itself")
        return wide, narrow, first, shot

    def test_comparison_page(self):
        data = analyse.compare(sample_results.demo_tasks())
        wide, narrow, _, shot = self._look_clean("comparison-export", data)
        metrics = len(data["metrics"])
        # + lifecycle breakdown + a scale chart per phase (build, network wait, delete)
        self.assertEqual(metrics + 1 + 3, wide["charts"])
        self.assertEqual(wide["charts"], wide["chartsDrawn"])
        self.assertEqual(metrics, wide["statsTables"])
        self.assertEqual(len(data["headlines"]), wide["summaryRows"])
        # 3 phases x (kvm, docker x 2 concurrencies) bars + 3 legend squares;
        # native has no lifecycle.
        self.assertEqual(3 * 4 + 3, wide["lifecycle"])
        for layout in (wide, narrow):
            self.assertLessEqual(layout["scrollWidth"], layout["innerWidth"], layout)
            self.assertLessEqual(layout["widestTable"], layout["innerWidth"])
        for words in ("Summary: ratios to the baseline", "Lifecycle breakdown",
                      "Reboot paths", "vmct.build [s]", "events/s", "Mbit/s"):
            self.assertIn(words, wide["text"])
        with open(shot, "rb") as f:
            self.assertEqual(b"\x89PNG", f.read(4))

    def test_scale_section(self):
        # samples/tasks/scale.yaml's shape: boot and delete per kind at 1 to 256
        data = analyse.compare(sample_results.scale_tasks())
        wide, narrow, _, _ = self._look_clean("comparison-export-scale", data)
        # a marker per kind, level and quantile (2 x 6 x 3), plus the legends'
        # (2 kinds, 3 quantiles)
        points = [sum(1 for entry in phase["kinds"] for level in entry["levels"]
                      for field in ("p50", "p95", "p99") if level[field] is not None)
                  for phase in data["scale"]]
        self.assertEqual([2 * 6 * 3] * 2, points)
        for layout in (wide, narrow):
            self.assertEqual(["vmct.build [s]", "vmct.delete [s]"],
                             [chart["title"] for chart in layout["scaleCharts"]])
            for chart, n in zip(layout["scaleCharts"], points):
                self.assertEqual(2 + 3 + n, chart["markers"])
                self.assertGreater(chart["height"], 150, layout["innerWidth"])
                self.assertGreater(chart["width"], 0.8 * layout["innerWidth"] - 80)
                self.assertLessEqual(chart["right"], layout["innerWidth"])
                self.assertIn("at concurrency 1, 8, 32, 64, 128, 256", chart["desc"])
            self.assertEqual(2 * 2 * 6, layout["scaleRows"])
            self.assertLessEqual(layout["scrollWidth"], layout["innerWidth"], layout)
            self.assertLessEqual(layout["widestTable"], layout["innerWidth"])
        self.assertIn("Scale: latency against concurrency", wide["text"])

    def test_disclosure_warning_and_seed_check(self):
        # Results as the scenarios make them now: facts tables ("kvm" is QEMU TCG),
        # O_DIRECT fileio, the lifecycle chart with build + network.
        data = analyse.compare(sample_results.demo_tasks(times=6, facts=True))
        wide, narrow, sections, _ = self._look_clean("comparison-export-disclosure", data,
                                                     SECTIONS_PROBE)
        check_sections(self, sections, data)
        self.assertEqual("native vs kvm (emulated) vs docker", data["title"])
        self.assertEqual(2, len(data["warnings"]))
        self.assertIn("kvm is named kvm, but its detected virtualization is QEMU TCG "
                      "(emulated)", sections["warnings"]["text"])
        self.assertIn("2 values: 1012345 (10), 2048000 (2)",   # c=1 and c=4
                      [row for row in sections["environmentRows"]
                       if row[0] == "memory (kB)"][0])
        self.assertIn("kvm = VM (from facts: virtualization 'QEMU TCG (emulated)')",
                      sections["seedRoles"]["text"])
        self.assertEqual(list("abcdef"),
                         sorted({row[0][1] for row in sections["seedRows"]}))
        for layout in (wide, narrow):
            self.assertLessEqual(layout["scrollWidth"], layout["innerWidth"], layout)
            self.assertLessEqual(layout["widestTable"], layout["innerWidth"])
