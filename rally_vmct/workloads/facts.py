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
"""What an instance (or host) is: kernel, CPU, memory, tool versions.

One POSIX shell script prints ``key=value`` lines; it works with busybox as well as
with a full Debian userland. The parser turns them into a dict, and
:func:`missing_tools` says which benchmark tools an instance lacks.
"""

FACTS_SCRIPT = r"""
export LC_ALL=C
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)"
echo "vcpus=$(nproc 2>/dev/null || grep -c '^processor' /proc/cpuinfo)"
echo "memory_kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
echo "uptime_s=$(cut -d ' ' -f 1 /proc/uptime)"
if command -v sysbench >/dev/null 2>&1; then
    echo "sysbench=$(sysbench --version 2>&1 | head -n 1)"
else
    echo "sysbench="
fi
if command -v netperf >/dev/null 2>&1; then
    echo "netperf=$(netperf -V 2>&1 | head -n 1)"
else
    echo "netperf="
fi
echo "netserver=$(command -v netserver 2>/dev/null)"
"""

# Tool -> how to get it, for the error an iteration reports when it is missing.
TOOL_HINTS = {
    "sysbench": "install it in the image (Debian/Ubuntu: apt-get install sysbench) or "
                "build the project's workload images (tools/images)",
    "netperf": "install it in the image (Debian: apt-get install netperf, from the "
               "non-free component) or build the project's workload images (tools/images)",
    "netserver": "netserver ships with netperf: install netperf in the peer's image",
}

_INT_FACTS = ("vcpus", "memory_kb")


def parse_facts(text):
    """``key=value`` lines of :data:`FACTS_SCRIPT` output as a dict."""
    facts = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition("=")
        if not sep or not key.isidentifier():
            continue
        value = value.strip()
        if key in _INT_FACTS:
            value = int(value) if value.isdigit() else None
        facts[key] = value
    return facts


def missing_tools(facts, tools):
    """The tools of ``tools`` that the facts show absent, in order."""
    return [tool for tool in tools if not facts.get(tool)]


def missing_tools_message(tools, where):
    """One clear error for tools absent from ``where`` (an instance or host)."""
    return "; ".join("%s is not installed on %s: %s" % (tool, where, TOOL_HINTS[tool])
                     for tool in tools)
