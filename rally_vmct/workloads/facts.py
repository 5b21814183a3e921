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
"""What an instance (or host) is: kernel, CPU, memory, tool versions, virtualisation.

One POSIX shell script prints ``key=value`` lines; it works with busybox as well as
with a full Debian userland. The parser turns them into a dict; the benchmark tools'
lines (version or path, empty when absent) come from :mod:`guest_tools`, which also
decides from them which tools are missing.

The script also prints raw virtualisation evidence (:data:`EVIDENCE_KEYS`);
:func:`classify_virtualization` decides from it, never from what a kind is called:
``virtualization`` ("KVM (hardware-assisted)", "QEMU TCG (emulated)", "container
(docker), host: KVM guest", "none (bare metal)", "VM (hypervisor Xen)", ...),
``emulated`` ("yes" / "no") and ``virtualization_evidence`` (what decided it).
"""

import ipaddress
import re

from rally_vmct.workloads import guest_tools

FACTS_SCRIPT = r"""
export LC_ALL=C
echo "kernel=$(uname -r)"
echo "arch=$(uname -m)"
echo "cpu_model=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)"
echo "vcpus=$(nproc 2>/dev/null || grep -c '^processor' /proc/cpuinfo)"
echo "memory_kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)"
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"
echo "uptime_s=$(cut -d ' ' -f 1 /proc/uptime)"
""" + guest_tools.facts_command() + r"""
if grep -qw hypervisor /proc/cpuinfo 2>/dev/null; then
    echo "cpu_flag_hypervisor=yes"
else
    echo "cpu_flag_hypervisor=no"
fi
cs=/sys/devices/system/clocksource/clocksource0
echo "clocksources=$(cat $cs/available_clocksource 2>/dev/null)"
echo "clocksource=$(cat $cs/current_clocksource 2>/dev/null)"
echo "dmi_sys_vendor=$(cat /sys/class/dmi/id/sys_vendor 2>/dev/null)"
echo "dmi_product_name=$(cat /sys/class/dmi/id/product_name 2>/dev/null)"
echo "sys_hypervisor_type=$(cat /sys/hypervisor/type 2>/dev/null)"
if dmesg >/dev/null 2>&1; then
    hv=$(dmesg 2>/dev/null | sed -n 's/.*\(Hypervisor detected: .*\)/\1/p' | head -n 1)
    echo "dmesg_hypervisor=$hv"
else
    echo "dmesg_hypervisor=(dmesg not readable)"
fi
if [ -e /.dockerenv ]; then echo "dockerenv=yes"; else echo "dockerenv=no"; fi
if [ -e /run/.containerenv ]; then echo "containerenv=yes"; else echo "containerenv=no"; fi
cg='docker|containerd|kubepods|libpod|crio|lxc'
echo "cgroup_container=$(grep -E "$cg" /proc/1/cgroup 2>/dev/null | head -n 1)"
env1=$(tr '\000' '\n' 2>/dev/null </proc/1/environ | sed -n 's/^container=//p')
echo "container_env=$(echo "$env1" | head -n 1)"
echo "pid2_comm=$(cat /proc/2/comm 2>/dev/null)"
echo "root_fs=$(sed -n 's|^[^ ]* / \([^ ]*\) .*|\1|p' /proc/mounts 2>/dev/null | tail -n 1)"
"""

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


# ---------------------------------------------------------------- virtualisation

# Raw evidence FACTS_SCRIPT prints; classify_virtualization reads only these (and
# arch, cpu_model).
EVIDENCE_KEYS = ("cpu_flag_hypervisor", "clocksources", "clocksource", "dmi_sys_vendor",
                 "dmi_product_name", "sys_hypervisor_type", "dmesg_hypervisor", "dockerenv",
                 "containerenv", "cgroup_container", "container_env", "pid2_comm", "root_fs")

KVM = "KVM (hardware-assisted)"
TCG = "QEMU TCG (emulated)"
BARE_METAL = "none (bare metal)"
DMESG_UNREADABLE = "(dmesg not readable)"

# Paravirtual clocksources -> the hypervisor that offers them. QEMU's TCG offers none.
_CLOCKSOURCES = {"kvm-clock": "KVM", "xen": "Xen", "hyperv_clocksource_tsc_page":
                 "Microsoft Hyper-V", "hyperv_clocksource_msr": "Microsoft Hyper-V"}
# DMI sys_vendor (lower case, prefix) -> hypervisor. "QEMU" is not here: KVM guests
# show it as well (and Nova's libvirt driver writes "OpenStack Foundation").
_DMI_VENDORS = (("vmware", "VMware"), ("microsoft corporation", "Microsoft Hyper-V"),
                ("xen", "Xen"), ("innotek", "VirtualBox"), ("parallels", "Parallels"),
                ("bochs", "Bochs"))
# Words of /proc/1/cgroup -> container engine, first match wins.
_CGROUP_ENGINES = (("docker", "docker"), ("libpod", "podman"), ("crio", "cri-o"),
                   ("containerd", "containerd"), ("kubepods", "kubernetes"), ("lxc", "lxc"))


def _dmesg_hypervisor(facts):
    """X of dmesg's ``Hypervisor detected: X`` line ("" when absent or unreadable)."""
    text = facts.get("dmesg_hypervisor") or ""
    return text.partition("Hypervisor detected:")[2].strip()


def _named_hypervisor(facts):
    """``(name, evidence)`` of a hypervisor the kernel or firmware names, else (None, None)."""
    detected = _dmesg_hypervisor(facts)
    if detected:
        return detected, "dmesg: Hypervisor detected: %s" % detected
    for clock in (facts.get("clocksources") or "").split():
        if clock in _CLOCKSOURCES:
            return _CLOCKSOURCES[clock], "clocksource %s" % clock
    xen = (facts.get("sys_hypervisor_type") or "").strip()
    if xen:
        return xen.capitalize(), "/sys/hypervisor/type %s" % xen
    vendor = (facts.get("dmi_sys_vendor") or "").strip()
    for prefix, name in _DMI_VENDORS:
        if vendor.lower().startswith(prefix):
            return name, "DMI sys_vendor %r" % vendor
    return None, None


def _qemu_signature(facts):
    """Why the machine looks like QEMU (CPU model or DMI), else None."""
    model = facts.get("cpu_model") or ""
    if "QEMU" in model or "TCG" in model:
        return "CPU model %r" % model
    for key in ("dmi_sys_vendor", "dmi_product_name"):
        if "QEMU" in (facts.get(key) or ""):
            return "DMI %s %r" % (key[4:], facts[key])
    return None


def _machine(facts):
    """``(virtualization, emulated, [evidence])`` of the kernel's machine (not containers)."""
    evidence = []
    flag = facts.get("cpu_flag_hypervisor") == "yes"
    if flag:
        evidence.append("CPU flag hypervisor")
    name, why = _named_hypervisor(facts)
    if name:
        evidence.append(why)
        if name == "KVM":
            return KVM, "no", evidence
        return "VM (hypervisor %s)" % name, "no", evidence
    qemu = _qemu_signature(facts)
    if qemu:
        evidence += [qemu, "no kvm-clock clocksource"]
        if facts.get("dmesg_hypervisor") not in (None, DMESG_UNREADABLE):
            evidence.append("no 'Hypervisor detected' in dmesg")
        return TCG, "yes", evidence
    if flag:
        evidence.append("no paravirtual clocksource, DMI or dmesg naming it")
        return "VM (hypervisor unknown)", "unknown", evidence
    if (facts.get("arch") or "").startswith(("x86", "i686", "i386", "amd64")):
        return BARE_METAL, "no", ["no hypervisor CPU flag"]
    return ("unknown (no hypervisor evidence; %s has no hypervisor CPU flag)"
            % (facts.get("arch") or "this architecture"), "unknown", [])


def _container(facts):
    """``(engine or None, [evidence])`` from container evidence."""
    if facts.get("containerenv") == "yes":
        return "podman", ["/run/.containerenv"]
    line = facts.get("cgroup_container") or ""
    for word, engine in _CGROUP_ENGINES:
        if word in line:
            # the container id varies per instance; the evidence should not
            short = re.sub(r"\b[0-9a-f]{64}\b", "<id>", line)
            return engine, ["/proc/1/cgroup %s" % short]
    engine = facts.get("container_env")
    if engine:
        return engine, ["PID 1 environment container=%s" % engine]
    own_pids = facts.get("pid2_comm") not in (None, "kthreadd")
    if facts.get("dockerenv") == "yes":
        if own_pids:
            return "docker", ["/.dockerenv", "own PID namespace (no kthreadd)"]
        return None, ["/.dockerenv ignored: kthreadd visible (host PID namespace), "
                      "cgroups at the root"]
    if own_pids and facts.get("root_fs") == "overlay":
        return "unknown engine", ["root file system overlay", "own PID namespace"]
    return None, []


def _host_words(virtualization):
    if virtualization == KVM:
        return "KVM guest"
    if virtualization == TCG:
        return "QEMU TCG guest (emulated)"
    if virtualization == BARE_METAL:
        return "bare metal"
    return virtualization


def classify_virtualization(facts):
    """``{virtualization, emulated, virtualization_evidence}`` from the script's evidence.

    KVM: a kvm-clock clocksource (or dmesg's "Hypervisor detected: KVM"). QEMU TCG:
    a QEMU CPU model or DMI string without kvm-clock (TCG offers no paravirtual
    clock; libvirt virt_type=qemu shows "QEMU Virtual CPU version 2.5+"). Containers
    share the host's kernel, so the same evidence then describes their host.
    """
    virtualization, emulated, evidence = _machine(facts)
    engine, container_evidence = _container(facts)
    if engine:
        virtualization = "container (%s), host: %s" % (engine, _host_words(virtualization))
    return {"virtualization": virtualization, "emulated": emulated,
            "virtualization_evidence": "; ".join(container_evidence + evidence)}


# ---------------------------------------------------------------- network path

def is_loopback(host):
    """Whether ``host`` (an address or name) is this machine's loopback."""
    if (host or "").lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def native_netperf_path(host):
    """netperf_path of a host benchmark: loopback, or another host."""
    if is_loopback(host):
        return "loopback on the host (%s)" % host
    return "host %s" % host


def instance_netperf_path(peer_host, peer_is_instance, same_compute_host=None):
    """netperf_path of an instance benchmark.

    :param peer_is_instance: the peer is the vmct_netperf_peer instance
    :param same_compute_host: True/False when the admin API showed both hosts, else None
    """
    if not peer_is_instance:
        return "instance -> host %s" % peer_host
    where = {True: ", same compute host", False: ", another compute host"}.get(
        same_compute_host, "")
    return ("instance -> netserver instance %s over the cloud network (Neutron)%s"
            % (peer_host, where))


NO_NETPERF = "not measured (no netperf workload)"

NOT_NOVA = "none (not a Nova instance)"
NO_ADMIN = "unknown (no admin credential)"


def nova_version_text(value):
    """Nova's integer hypervisor_version as text: 7002022 -> "7002022 (7.2.22)"."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return "unknown" if value in (None, "") else str(value)
    major, rest = divmod(value, 1000000)
    minor, micro = divmod(rest, 1000)
    return "%d (%d.%d.%d)" % (value, major, minor, micro)
