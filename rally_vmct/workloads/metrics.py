"""Types shared by the workload parsers: a value with its unit, and parse errors."""

import collections

Metric = collections.namedtuple("Metric", ["value", "unit"])
Metric.__doc__ = "One parsed figure, e.g. ``Metric(1234.5, 'events/s')``."

_HEAD_CHARS = 400


class ParseError(ValueError):
    """Tool output lacked a field the parser needs (never reported as a zero)."""

    def __init__(self, tool, field, output):
        self.tool = tool
        self.field = field
        head = (output or "")[:_HEAD_CHARS]
        super().__init__(
            "%s output has no %s; output starts with: %r" % (tool, field, head))
