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
"""Types shared by the workload parsers: a value with its unit, and parse errors."""

import collections

Metric = collections.namedtuple("Metric", ["value", "unit"])
Metric.__doc__ = "One parsed figure, e.g. ``Metric(1234.5, 'events/s')``."

_HEAD_LINES = 12
_HEAD_CHARS = 800


def output_head(output):
    """The first non-blank lines of a tool's output, indented, for error messages."""
    lines = [line for line in (output or "").splitlines() if line.strip()]
    head = "\n".join("    " + line for line in lines[:_HEAD_LINES])
    if len(head) > _HEAD_CHARS:
        head = head[:_HEAD_CHARS] + " ..."
    return head or "    (empty output)"


class ParseError(ValueError):
    """Tool output lacked a field the parser needs (never reported as a zero).

    ``field`` names what was missing; the message quotes the head of ``output``.
    """

    def __init__(self, message, output="", field=None):
        self.field = field
        self.output = output
        super().__init__("%s; output starts with:\n%s" % (message, output_head(output)))
