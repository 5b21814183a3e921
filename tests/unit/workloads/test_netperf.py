"""netperf command builders and parsers, on outputs captured from real runs."""

import os
import shlex

import testtools

from rally_vmct.workloads import metrics
from rally_vmct.workloads import netperf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "netperf")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


class BuildCommandTestCase(testtools.TestCase):

    def test_tcp_rr_keyval_with_ports(self):
        argv = netperf.build_command("TCP_RR", "10.0.0.5", duration=10,
                                     control_port=12865, data_port=12866)
        self.assertEqual(
            ["netperf", "-H", "10.0.0.5", "-t", "TCP_RR", "-l", "10", "-p", "12865",
             "-P", "0", "--", "-k", ",".join(netperf.RR_SELECTORS), "-P", ",12866"],
            argv)

    def test_stream_csv_message_size(self):
        argv = netperf.build_command("TCP_STREAM", "h", duration=2.5, output="csv",
                                     message_size=65536)
        self.assertEqual(["netperf", "-H", "h", "-t", "TCP_STREAM", "-l", "2.5",
                          "--", "-o", ",".join(netperf.STREAM_SELECTORS),
                          "-m", "65536"], argv)

    def test_headerless_csv_is_an_error(self):
        # "-P 0 -- -o" prints values without the header: not parseable by name.
        text = fixture("tcp_rr.csv").splitlines()[-1]
        self.assertRaises(metrics.ParseError, netperf.parse, "TCP_RR", text, "csv")

    def test_classic_has_no_selectors_nor_banner_switch(self):
        argv = netperf.build_command("UDP_RR", "h", output="classic",
                                     request_size=64, response_size=1024)
        self.assertNotIn("-k", argv)
        self.assertNotIn("-o", argv)
        self.assertNotIn("-P", argv)
        self.assertEqual(["--", "-r", "64,1024"], argv[-3:])

    def test_data_port_is_remote_only(self):
        # "-P PORT" would pin the local port too and break same-host runs.
        argv = netperf.build_command("TCP_STREAM", "h", data_port=5001)
        self.assertEqual(",5001", argv[argv.index("-P", argv.index("--")) + 1])

    def test_custom_selectors(self):
        argv = netperf.build_command("TCP_RR", "h", selectors=["THROUGHPUT", "P99_LATENCY"])
        self.assertIn("THROUGHPUT,P99_LATENCY", argv)

    def test_bad_arguments_name_the_argument(self):
        cases = [
            (dict(test="SCTP_RR", host="h"), "netperf test must be one of"),
            (dict(test="TCP_RR", host=""), "netperf host"),
            (dict(test="TCP_RR", host="h", duration=0), "duration"),
            (dict(test="TCP_RR", host="h", duration="10"), "duration"),
            (dict(test="TCP_RR", host="h", control_port=70000), "control_port"),
            (dict(test="TCP_RR", host="h", data_port="12866"), "data_port"),
            (dict(test="TCP_RR", host="h", output="json"), "netperf output"),
        ]
        for kwargs, message in cases:
            error = self.assertRaises(ValueError, netperf.build_command, **kwargs)
            self.assertIn(message, str(error))

    def test_shell_command_quotes_every_argument(self):
        argv = netperf.build_command("TCP_RR", "h; rm -rf /")
        line = netperf.shell_command(argv)
        self.assertTrue(line.startswith("LC_ALL=C netperf "))
        self.assertEqual(argv, shlex.split(line)[1:])

    def test_netserver_command(self):
        self.assertEqual(["netserver", "-p", "12865", "-L", "127.0.0.1", "-D"],
                         netperf.netserver_command(12865, listen="127.0.0.1",
                                                   foreground=True))
        self.assertRaises(ValueError, netperf.netserver_command, 0)


class ParseTestCase(testtools.TestCase):

    def test_tcp_stream_keyval(self):
        result = netperf.parse("TCP_STREAM", fixture("tcp_stream.keyval"))
        self.assertEqual(metrics.Metric(16742.52, "Mbit/s"), result["throughput"])
        self.assertEqual(metrics.Metric(1.0, "s"), result["elapsed_time"])
        self.assertNotIn("transaction_rate", result)

    def test_tcp_rr_keyval(self):
        result = netperf.parse("TCP_RR", fixture("tcp_rr.keyval"))
        self.assertEqual(metrics.Metric(57719.84, "trans/s"), result["throughput"])
        self.assertEqual(metrics.Metric(57719.844, "trans/s"), result["transaction_rate"])
        self.assertEqual(metrics.Metric(17.27, "us"), result["latency_mean"])
        self.assertEqual(16.0, result["latency_p50"].value)
        self.assertEqual(17.0, result["latency_p90"].value)
        self.assertEqual(31.0, result["latency_p99"].value)
        self.assertEqual(metrics.Metric(27.2, "us"), result["latency_stddev"])

    def test_udp_rr_keyval(self):
        result = netperf.parse("UDP_RR", fixture("udp_rr.keyval"))
        self.assertEqual(60938.334, result["transaction_rate"].value)
        self.assertEqual(99.51, result["latency_stddev"].value)

    def test_tcp_stream_csv(self):
        result = netperf.parse("TCP_STREAM", fixture("tcp_stream.csv"), "csv")
        self.assertEqual(metrics.Metric(15447.68, "Mbit/s"), result["throughput"])

    def test_tcp_rr_csv(self):
        result = netperf.parse("TCP_RR", fixture("tcp_rr.csv"), "csv")
        self.assertEqual(59721.072, result["transaction_rate"].value)
        self.assertEqual(16.69, result["latency_mean"].value)
        self.assertEqual(28.0, result["latency_p99"].value)
        self.assertEqual(14.18, result["latency_stddev"].value)

    def test_tcp_stream_classic(self):
        result = netperf.parse("TCP_STREAM", fixture("tcp_stream.classic"), "classic")
        self.assertEqual(metrics.Metric(17057.27, "Mbit/s"), result["throughput"])
        self.assertEqual(1.0, result["elapsed_time"].value)

    def test_rr_classic(self):
        tcp = netperf.parse("TCP_RR", fixture("tcp_rr.classic"), "classic")
        udp = netperf.parse("UDP_RR", fixture("udp_rr.classic"), "classic")
        self.assertEqual(metrics.Metric(60072.19, "trans/s"), tcp["transaction_rate"])
        self.assertEqual(66510.96, udp["transaction_rate"].value)

    def test_no_netserver_is_a_parse_error_quoting_output(self):
        for form in netperf.OUTPUT_FORMS:
            error = self.assertRaises(metrics.ParseError, netperf.parse, "TCP_RR",
                                      fixture("no_netserver.txt"), form)
            self.assertIn("are you sure there is a netserver", str(error))

    def test_missing_throughput_names_the_field(self):
        text = "\n".join(line for line in fixture("tcp_rr.keyval").splitlines()
                         if not line.startswith("THROUGHPUT="))
        error = self.assertRaises(metrics.ParseError, netperf.parse, "TCP_RR", text)
        self.assertEqual("THROUGHPUT", error.field)

    def test_garbled_number_is_an_error_not_zero(self):
        text = fixture("tcp_rr.keyval").replace("MEAN_LATENCY=17.27", "MEAN_LATENCY=abc")
        error = self.assertRaises(metrics.ParseError, netperf.parse, "TCP_RR", text)
        self.assertIn("MEAN_LATENCY", str(error))

    def test_unavailable_selector_is_dropped(self):
        text = fixture("tcp_rr.keyval").replace("P99_LATENCY=31", "P99_LATENCY=-1")
        self.assertNotIn("latency_p99", netperf.parse("TCP_RR", text))

    def test_unknown_test_or_form(self):
        self.assertRaises(ValueError, netperf.parse, "TCP_CRR", "")
        self.assertRaises(ValueError, netperf.parse, "TCP_RR", "", "xml")
