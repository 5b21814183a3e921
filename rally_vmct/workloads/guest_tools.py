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
"""Benchmark tools in a guest or host: which are missing, what to do then, how to install.

The one place that decides a tool is missing and that says how to get it:

* :data:`TABLE`: per tool, its package, the shell line showing its version (or path)
  and the hint every missing-tool error gives for it;
* :func:`facts_command` (the tool lines of the runner's facts script) and
  :func:`check_tools_command` (the helper servers' check) test presence the same way
  (``command -v``); :func:`missing` reads the facts, :func:`parse_missing` the check;
* :func:`missing_message` is the error text (each tool's hint, then how to get an image
  with the tools) and :func:`require` raises it as :class:`ToolMissing`.

Pure: scripts are strings for ``execute(command, timeout)`` (SSH into an
instance), outputs are parsed here. Used by the runner (every benchmark), the
``vmct_workload_image`` context (check an image, or prepare one with the guest's
package manager) and the ``vmct_netperf_peer`` context (netserver on the peer).
"""

import collections
import shlex

Tool = collections.namedtuple("Tool", ["package", "shows", "hint"])
Tool.__doc__ = """``package``: its name with every manager of :data:`MANAGERS`; ``shows``:
shell printing what the facts record of it (version or path); ``hint``: how to install it."""

# Debian has netperf in "non-free", Ubuntu in "multiverse", Fedora/EL in EPEL, Alpine in
# community/testing; netserver ships with netperf everywhere.
TABLE = collections.OrderedDict([
    ("sysbench", Tool("sysbench", "sysbench --version 2>&1 | head -n 1",
                      "package sysbench (Debian/Ubuntu: apt-get install sysbench)")),
    ("netperf", Tool("netperf", "netperf -V 2>&1 | head -n 1",
                     "package netperf (Debian: apt-get install netperf, from the non-free "
                     "component; Ubuntu: multiverse; Fedora/EL: EPEL)")),
    ("netserver", Tool("netperf", "command -v netserver",
                       "package netperf (netserver ships with it)")),
])
TOOLS = tuple(TABLE)
DEFAULT_TOOLS = TOOLS
PACKAGES = {tool: spec.package for tool, spec in TABLE.items()}
MANAGERS = ("apt-get", "dnf", "yum", "apk")

MISSING_PREFIX = "vmct-missing="
MANAGER_PREFIX = "vmct-package-manager="

IMAGES_DOC = ("tools/images in the rally-vmct repository (tools/images/build-qemu-guest for "
              "a qcow2 (KVM), tools/images/docker/README.md for the Docker image)")
PREPARE_HINT = ("or let the vmct_workload_image context with prepare: true install them with "
                "the guest's package manager and snapshot the result (the guest needs access "
                "to its package repositories)")


class ToolMissing(RuntimeError):
    """An instance or host lacks a benchmark tool; the message says how to get it."""


def _known(tools):
    unknown = [tool for tool in tools if tool not in TABLE]
    if unknown:
        raise ValueError("unknown tool(s) %s; known: %s" % (", ".join(unknown), ", ".join(TOOLS)))
    return tools


def _present(word):
    """Shell test: the tool named by ``word`` is on PATH (the only presence test)."""
    return "command -v %s >/dev/null 2>&1" % word


def facts_command(tools=TOOLS):
    """Shell lines printing ``<tool>=<version or path>`` per tool, ``<tool>=`` when absent."""
    return "\n".join('if %s; then echo "%s=$(%s)"; else echo "%s="; fi'
                     % (_present(tool), tool, TABLE[tool].shows, tool)
                     for tool in _known(tools))


def missing(tools, found):
    """Tools of ``tools`` absent from ``found`` (facts: tool -> version or path), in order."""
    return [tool for tool in _known(tools) if not found.get(tool)]


def check_tools_command(tools):
    """Shell line printing ``vmct-missing=<tool>`` for each absent tool."""
    words = " ".join(shlex.quote(tool) for tool in _known(tools))
    return ("for t in %s; do %s || echo %s\"$t\"; done; true"
            % (words, _present('"$t"'), MISSING_PREFIX))


def parse_missing(output):
    """Tools the output of :func:`check_tools_command` lists as missing, in order."""
    return [line[len(MISSING_PREFIX):].strip() for line in (output or "").splitlines()
            if line.startswith(MISSING_PREFIX)]


def _names(tools):
    """``a``, ``a and b``, ``a, b and c``."""
    if len(tools) == 1:
        return tools[0]
    return "%s and %s" % (", ".join(tools[:-1]), tools[-1])


def missing_message(missing, where, prepare_hint=True):
    """The error for tools absent from ``where`` (an instance, an image or a host).

    ``prepare_hint``: mention the vmct_workload_image context's ``prepare: true``.
    """
    text = ("%s %s not installed on %s. To install: %s. Image with the tools: build one "
            "with %s" % (_names(missing), "is" if len(missing) == 1 else "are", where,
                         "; ".join("%s: %s" % (tool, TABLE[tool].hint) for tool in missing),
                         IMAGES_DOC))
    if prepare_hint:
        text += ", " + PREPARE_HINT
    return text


def require(tools, found, where, prepare_hint=True):
    """Raise :class:`ToolMissing` naming every tool of ``tools`` that ``found`` lacks."""
    absent = missing(tools, found)
    if absent:
        raise ToolMissing(missing_message(absent, where, prepare_hint))


def packages(tools):
    """Package names for ``tools``, without duplicates, in order."""
    names = []
    for tool in tools:
        name = PACKAGES[tool]
        if name not in names:
            names.append(name)
    return names


def install_script(tools):
    """POSIX shell script: detect the package manager, install the packages of ``tools``.

    Prints ``vmct-package-manager=<name>`` (or ``none``) first; exits non-zero when no
    known manager exists or the installation fails.
    """
    names = " ".join(shlex.quote(name) for name in packages(tools))
    branches = []
    for manager in MANAGERS:
        if manager == "apt-get":
            install = ("export DEBIAN_FRONTEND=noninteractive; apt-get update -q && "
                       "apt-get install -y -q --no-install-recommends %s" % names)
        elif manager == "apk":
            install = "apk add --no-cache %s" % names
        else:
            install = "%s install -y %s" % (manager, names)
        branches.append("if %s; then\n    echo %s%s\n    %s\n    exit $?\nfi"
                        % (_present(manager), MANAGER_PREFIX, manager, install))
    return ("set -u\n%s\necho %snone\necho 'no known package manager (%s) in the guest' >&2\n"
            "exit 3\n" % ("\n".join(branches), MANAGER_PREFIX, ", ".join(MANAGERS)))


def parse_manager(output):
    """The package manager :func:`install_script` found, or None."""
    for line in (output or "").splitlines():
        if line.startswith(MANAGER_PREFIX):
            value = line[len(MANAGER_PREFIX):].strip()
            return None if value == "none" else value
    return None
