"""The host monitor's SSH relay: lines, clocks, its spec (streaming: the functional test)."""

import io
import json
import os

import testtools

from rally_vmct.hostcost import remote as relay


class FakeClient:

    def __init__(self, answers, clock):
        self.answers = list(answers)
        self.clock = clock
        self.commands = []

    def execute(self, command, timeout=None):
        self.commands.append(command)
        self.clock[0] += 0.02
        return self.answers.pop(0)


class LinesTestCase(testtools.TestCase):

    def test_lines_are_written_whole_with_the_host_time_kept(self):
        out, err = io.StringIO(), io.StringIO()
        lines = relay.Lines(out, offset=2.5, err=err)
        lines.write('{"t": 102.5, "type": "start"}\n{"t": 103.5, "ty')
        lines.write('pe": "sample"}\nnot json\n{"t": 104')
        records = [json.loads(line) for line in out.getvalue().splitlines()]
        self.assertEqual([{"t": 100.0, "type": "start", "host_t": 102.5, "clock_offset": 2.5},
                          {"t": 101.0, "type": "sample", "host_t": 103.5}], records)
        self.assertEqual("agent: not json\n", err.getvalue())
        self.assertEqual('{"t": 104', lines.pending)


class ClockTestCase(testtools.TestCase):

    def test_offset_is_measured_at_the_round_trips_middle(self):
        now = [1000.0]
        client = FakeClient([(0, "1003.01\n", "")], now)
        offset, round_trip = relay.clock_offset(client, now=lambda: now[0])
        self.assertAlmostEqual(3.0, offset)
        self.assertAlmostEqual(0.02, round_trip)
        self.assertEqual(["date +%s.%N"], client.commands)

    def test_busybox_date_falls_back_to_python(self):
        now = [1000.0]
        client = FakeClient([(0, "1000.%N\n", ""), (0, "1000.03\n", "")], now)
        offset, _ = relay.clock_offset(client, now=lambda: now[0])
        self.assertAlmostEqual(0.0, offset)
        self.assertIn("python3", client.commands[1])

    def test_no_clock_at_all(self):
        now = [0.0]
        client = FakeClient([(127, "", "not found"), (127, "", "not found")], now)
        self.assertEqual((None, None), relay.clock_offset(client, now=lambda: now[0]))

    def test_only_a_measurable_difference_is_corrected(self):
        self.assertEqual(0.0, relay.correction(0.05, 0.02))
        self.assertEqual(0.0, relay.correction(0.3, 0.5))
        self.assertEqual(-4.0, relay.correction(-4.0, 0.5))
        self.assertEqual(0.0, relay.correction(None, None))


class SpecTestCase(testtools.TestCase):

    def test_spec_line_read_in_pieces(self):
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        line = json.dumps({"host": {"host": "h" * 70000}}).encode() + b"\n"
        pid = os.fork()
        if pid == 0:
            os.close(r)
            for i in range(0, len(line), 5000):
                os.write(w, line[i:i + 5000])
            os._exit(0)
        os.close(w)
        self.assertEqual({"host": {"host": "h" * 70000}}, relay.read_spec(r))
        os.waitpid(pid, 0)

    def test_no_spec(self):
        r, w = os.pipe()
        os.close(w)
        self.addCleanup(os.close, r)
        self.assertRaises(ValueError, relay.read_spec, r)

    def test_client_of_a_host_spec(self):
        client = relay.AgentSSH.of_spec({"host": "h", "key_file": "/k", "proxy_command": ""},
                                        connect_timeout=7.0)
        self.assertEqual(("root", "h", 22, "/k", None, None, 7.0),
                         (client.user, client.host, client.port, client.key_filename,
                          client.password, client.proxy_command, client.connect_timeout))
        client = relay.AgentSSH.of_spec({"host": "h", "user": "u", "port": 2222, "password": "p",
                                         "proxy_command": "nc %h %p"})
        self.assertEqual(("u", 2222, "p", "nc %h %p", 5.0),
                         (client.user, client.port, client.password, client.proxy_command,
                          client.connect_timeout))
