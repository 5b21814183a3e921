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
"""Numbers for people, as the comparison page shows them. Pure Python."""

import math

NA = "n/a"
_SI = ("", "k", "M", "G", "T", "P", "E")


def fmt(value, unit=None):
    """A number for people: 4 significant digits, thousands grouped; n/a for None."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return NA
    a = abs(value)
    if a >= 1e6:
        # Keeps wide tables narrow: 5.283 M instead of 5,283,367.
        power = min(int(math.log10(a)) // 3, len(_SI) - 1)
        text = fmt(value / 1000 ** power) + " " + _SI[power]
        return "%s %s" % (text, unit) if unit else text
    if a >= 10000 or value == int(value):
        text = "{:,.0f}".format(value)
    elif a >= 1:
        text = "%.*f" % (3 - int(math.floor(math.log10(a))), value)
    else:
        text = "%.3g" % value
        digits = 3
        # a value below 1 never reads as 1 (0.99986 is "0.9999", not "1")
        while abs(float(text)) >= 1 and digits < 15:
            digits += 1
            text = "%.*g" % (digits, value)
    return "%s %s" % (text, unit) if unit else text


def fmt_tick(value):
    """An axis label: as :func:`fmt` from a million, else as short as exact."""
    if abs(value) >= 1e6:
        return fmt(value)
    if abs(value) >= 10000:
        return "{:,.0f}".format(value)
    return "%g" % value


def fmt_p(p):
    """A p-value for people: 3 significant digits, ``<0.0001`` below that."""
    if p is None:
        return NA
    if p < 0.0001:
        return "<0.0001"
    return "%.3g" % p
