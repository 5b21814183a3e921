"""Read tools/vmct-values (the cloud names every path shares) from Python.

The file is plain ``NAME=VALUE`` lines that bash and sh source; this reader takes exactly
that subset (shlex words, no expansions) so both languages see the same values. A value set in
the environment wins (devstack's local.conf may override any of them), as it does in bash.
"""

import os
import shlex

VALUES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vmct-values")


def read_values(path=VALUES):
    """The NAME=VALUE assignments of a vmct-values file as a dict."""
    values = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = shlex.split(line, comments=True)
            if not words:
                continue
            name, sep, value = words[0].partition("=")
            if len(words) != 1 or not sep or not name.isidentifier():
                raise ValueError("%s:%d: expected NAME=VALUE, got %r"
                                 % (path, number, line.strip()))
            if "$" in value or "`" in value:
                # bash would expand it, Python would not: the file must mean one thing
                raise ValueError("%s:%d: no expansions allowed in %s" % (path, number, name))
            values[name] = value
    return values


def effective_values(path=VALUES, environ=None):
    """The file's values, each overridden by a non-empty variable of the same name.

    ``environ`` defaults to os.environ.
    """
    environ = os.environ if environ is None else environ
    values = read_values(path)
    values.update({name: environ[name] for name in values if environ.get(name)})
    return values
