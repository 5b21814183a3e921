"""netperf builders and parsers against the real netperf/netserver binaries.

netserver listens on 127.0.0.1 on a free port for the duration of the test class.
"""

import socket
import subprocess
import time

import testtools

from rally_vmct.workloads import netperf


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class NetserverTestCase(testtools.TestCase):
    """Base class: a real netserver on 127.0.0.1 for the test class's lifetime."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.control_port = free_port()
        cls.data_port = free_port()
        argv = netperf.netserver_command(cls.control_port, listen="127.0.0.1",
                                         foreground=True) + ["-4"]
        cls.netserver = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", cls.control_port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        cls.tearDownClass()
        raise RuntimeError("netserver did not listen on port %d" % cls.control_port)

    @classmethod
    def tearDownClass(cls):
        cls.netserver.terminate()
        cls.netserver.wait(10)
        super().tearDownClass()


class RealNetperfTestCase(NetserverTestCase):

    def run_netperf(self, test, output):
        argv = netperf.build_command(test, "127.0.0.1", duration=1,
                                     control_port=self.control_port,
                                     data_port=self.data_port, output=output)
        proc = subprocess.run(["sh", "-c", netperf.shell_command(argv)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=30)
        self.assertEqual(0, proc.returncode, proc.stdout)
        return netperf.parse(test, proc.stdout, output)

    def test_tcp_stream_all_forms(self):
        for output in netperf.OUTPUT_FORMS:
            result = self.run_netperf("TCP_STREAM", output)
            self.assertEqual("Mbit/s", result["throughput"].unit)
            # Loopback moves at least 100 Mbit/s on any machine; 0 means the
            # data connection never carried anything.
            self.assertGreater(result["throughput"].value, 100, output)
            self.assertAlmostEqual(1.0, result["elapsed_time"].value, delta=0.5)

    def test_rr_all_forms(self):
        for test in ("TCP_RR", "UDP_RR"):
            for output in netperf.OUTPUT_FORMS:
                result = self.run_netperf(test, output)
                self.assertGreater(result["transaction_rate"].value, 100, (test, output))
                if output != "classic":
                    mean = result["latency_mean"].value
                    self.assertGreater(mean, 0)
                    self.assertLessEqual(result["latency_p50"].value,
                                         result["latency_p99"].value)
                    # Rate and mean latency of a single stream are reciprocal.
                    self.assertAlmostEqual(1e6 / mean,
                                           result["transaction_rate"].value,
                                           delta=0.25 * result["transaction_rate"].value)

    def test_netserver_stopped_gives_parse_error(self):
        argv = netperf.build_command("TCP_RR", "127.0.0.1", duration=1,
                                     control_port=free_port())
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=30)
        self.assertNotEqual(0, proc.returncode)
        self.assertRaises(netperf.ParseError, netperf.parse, "TCP_RR", proc.stdout)
