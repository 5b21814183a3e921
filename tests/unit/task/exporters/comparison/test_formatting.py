"""Numbers as the comparison shows them (formatting.fmt, fmt_p)."""

import testtools

from rally_vmct.task.exporters.comparison import formatting


class TestFormatting(testtools.TestCase):

    def test_fmt(self):
        self.assertEqual("n/a", formatting.fmt(None))
        self.assertEqual("n/a", formatting.fmt(float("nan")))
        self.assertEqual("0", formatting.fmt(0.0))
        self.assertEqual("6", formatting.fmt(6.0))
        self.assertEqual("2.100", formatting.fmt(2.1))
        self.assertEqual("20.85 s", formatting.fmt(20.846, "s"))
        self.assertEqual("1256", formatting.fmt(1256.4))
        self.assertEqual("12,346", formatting.fmt(12345.6))
        self.assertEqual("0.000123", formatting.fmt(0.0001234))
        self.assertEqual("-3.500", formatting.fmt(-3.5))
        self.assertEqual("5.283 M", formatting.fmt(5283367.0))
        self.assertEqual("-12.50 G ops/s", formatting.fmt(-12.5e9, "ops/s"))
        self.assertEqual("999,999", formatting.fmt(999999.0))

    def test_a_value_below_1_never_reads_as_1(self):
        # a ratio beside a mark: "×1 p<0.0001" would contradict itself
        self.assertEqual("0.9999", formatting.fmt(0.99986))
        self.assertEqual("0.9999999", formatting.fmt(0.99999986))
        self.assertEqual("-0.9999", formatting.fmt(-0.99986))
        self.assertEqual("0.447", formatting.fmt(0.44712))

    def test_fmt_p(self):
        self.assertEqual("n/a", formatting.fmt_p(None))
        self.assertEqual("<0.0001", formatting.fmt_p(1.2e-7))
        self.assertEqual("0.0496", formatting.fmt_p(0.04961))
        self.assertEqual("1", formatting.fmt_p(1.0))
