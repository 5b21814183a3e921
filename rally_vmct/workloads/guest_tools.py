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
"""Benchmark tools in a guest: which are missing, and a script that installs them.

Pure: scripts are strings for ``execute(command, timeout)`` (SSH into an
instance), outputs are parsed here. Used by the ``vmct_workload_image`` context
(check an image, or prepare one with the guest's package manager) and by the
``vmct_netperf_peer`` context (netserver on the peer).
"""

import shlex

TOOLS = ("sysbench", "netperf", "netserver")
DEFAULT_TOOLS = TOOLS

# Tool -> package, the same name with every manager below: netserver ships with
# netperf everywhere; Debian has netperf in "non-free", Ubuntu in "multiverse",
# Fedora/EL in EPEL, Alpine in community/testing.
PACKAGES = {"sysbench": "sysbench", "netperf": "netperf", "netserver": "netperf"}
MANAGERS = ("apt-get", "dnf", "yum", "apk")

MISSING_PREFIX = "vmct-missing="
MANAGER_PREFIX = "vmct-package-manager="

IMAGES_DOC = ("tools/images in the rally-vmct repository: tools/images/build-qemu-guest for "
              "a qcow2 (KVM), tools/images/docker/README.md for the Docker image")


def check_tools_command(tools):
    """Shell line printing ``vmct-missing=<tool>`` for each absent tool (``command -v``)."""
    unknown = [tool for tool in tools if tool not in TOOLS]
    if unknown:
        raise ValueError("unknown tool(s) %s; known: %s" % (", ".join(unknown), ", ".join(TOOLS)))
    words = " ".join(shlex.quote(tool) for tool in tools)
    return ("for t in %s; do command -v \"$t\" >/dev/null 2>&1 || echo %s\"$t\"; done; true"
            % (words, MISSING_PREFIX))


def parse_missing(output):
    """Tools the output of :func:`check_tools_command` lists as missing, in order."""
    return [line[len(MISSING_PREFIX):].strip() for line in (output or "").splitlines()
            if line.startswith(MISSING_PREFIX)]


def missing_message(missing, where, prepare_hint=True):
    """One clear error for tools absent from an image."""
    text = ("%s lacks %s: use an image with the benchmark tools (build one with %s)"
            % (where, ", ".join(missing), IMAGES_DOC))
    if prepare_hint:
        text += ("; or set prepare: true in the vmct_workload_image context to install them "
                 "with the guest's package manager and snapshot the result (the guest needs "
                 "access to its package repositories)")
    return text


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
        branches.append("if command -v %s >/dev/null 2>&1; then\n    echo %s%s\n    %s\n"
                        "    exit $?\nfi" % (manager, MANAGER_PREFIX, manager, install))
    return ("set -u\n%s\necho %snone\necho 'no known package manager (%s) in the guest' >&2\n"
            "exit 3\n" % ("\n".join(branches), MANAGER_PREFIX, ", ".join(MANAGERS)))


def parse_manager(output):
    """The package manager :func:`install_script` found, or None."""
    for line in (output or "").splitlines():
        if line.startswith(MANAGER_PREFIX):
            value = line[len(MANAGER_PREFIX):].strip()
            return None if value == "none" else value
    return None
