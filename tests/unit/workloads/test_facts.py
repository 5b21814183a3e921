"""Instance facts script and parser, and the virtualisation classifier.

The classifier is tested on evidence captured for real (tests/fixtures/facts,
README.md there says on which machine each file was captured) and, for the
classes this machine cannot show (bare metal, Xen, Hyper-V, podman...), on
evidence edited from those captures.
"""

import os
import subprocess

import testtools

from rally_vmct.workloads import facts
from rally_vmct.workloads import guest_tools

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "facts")


def captured(name, **changes):
    """Parsed facts of a captured fixture, with ``changes`` applied."""
    with open(os.path.join(FIXTURES, name)) as f:
        result = facts.parse_facts(f.read())
    result.update(changes)
    return result


DEBIAN_OUTPUT = """\
kernel=6.1.0-28-cloud-amd64
arch=x86_64
cpu_model=QEMU Virtual CPU version 2.5+
vcpus=1
memory_kb=233876
boot_id=5b1e8a1c-58a0-4b8f-9d8c-2a4b7c0f1d11
uptime_s=12.43
sysbench=sysbench 1.0.20
netperf=Netperf version 2.7.0
netserver=/usr/bin/netserver
"""


class FactsTestCase(testtools.TestCase):

    def test_parse(self):
        result = facts.parse_facts(DEBIAN_OUTPUT)
        self.assertEqual(1, result["vcpus"])
        self.assertEqual(233876, result["memory_kb"])
        self.assertEqual("QEMU Virtual CPU version 2.5+", result["cpu_model"])
        self.assertEqual("sysbench 1.0.20", result["sysbench"])
        self.assertEqual([], guest_tools.missing(["sysbench", "netperf"], result))

    def test_missing_tools_and_message(self):
        result = facts.parse_facts(DEBIAN_OUTPUT.replace("sysbench=sysbench 1.0.20",
                                                         "sysbench="))
        missing = guest_tools.missing(["sysbench", "netperf"], result)
        self.assertEqual(["sysbench"], missing)
        message = guest_tools.missing_message(missing, "instance vmct-1 (kvm)")
        self.assertIn("sysbench is not installed on instance vmct-1 (kvm)", message)
        self.assertIn("apt-get install sysbench", message)

    def test_unparseable_numbers_are_none_not_zero(self):
        result = facts.parse_facts("vcpus=\nmemory_kb=lots\nnoise line\n")
        self.assertIsNone(result["vcpus"])
        self.assertIsNone(result["memory_kb"])
        self.assertNotIn("noise line", result)

    def test_script_runs_on_this_host(self):
        # The script is plain POSIX sh: run it for real and check what it finds.
        proc = subprocess.run(["sh", "-c", facts.FACTS_SCRIPT], stdout=subprocess.PIPE,
                              text=True, timeout=30, check=True)
        result = facts.parse_facts(proc.stdout)
        self.assertGreaterEqual(result["vcpus"], 1)
        self.assertGreater(result["memory_kb"], 0)
        self.assertTrue(result["kernel"])
        self.assertEqual(36, len(result["boot_id"]))
        for key in facts.EVIDENCE_KEYS:
            self.assertIn(key, result)
        self.assertIn(result["cpu_flag_hypervisor"], ("yes", "no"))
        verdict = facts.classify_virtualization(result)
        self.assertIn(verdict["emulated"], ("yes", "no", "unknown"))
        self.assertTrue(verdict["virtualization"])


class ClassifyTestCase(testtools.TestCase):

    def classify(self, name, **changes):
        return facts.classify_virtualization(captured(name, **changes))

    def test_this_firecracker_kvm_guest_is_kvm_despite_its_dockerenv(self):
        # This development machine: a Firecracker (KVM) guest whose root file system
        # came from a Docker image, so /.dockerenv exists; kthreadd is visible and
        # PID 1's cgroups are at the root: not a container.
        result = self.classify("firecracker-kvm-host.facts")
        self.assertEqual("KVM (hardware-assisted)", result["virtualization"])
        self.assertEqual("no", result["emulated"])
        self.assertIn("clocksource kvm-clock", result["virtualization_evidence"])
        self.assertIn("/.dockerenv ignored", result["virtualization_evidence"])

    def test_qemu_tcg_guest_is_emulated(self):
        # libvirt virt_type=qemu, no <cpu>: QEMU's default model, hypervisor flag,
        # no kvm-clock and no "Hypervisor detected" line; DMI says OpenStack Nova.
        result = self.classify("qemu-tcg-guest.facts")
        self.assertEqual("QEMU TCG (emulated)", result["virtualization"])
        self.assertEqual("yes", result["emulated"])
        evidence = result["virtualization_evidence"]
        self.assertIn("CPU model 'QEMU Virtual CPU version 2.5+'", evidence)
        self.assertIn("no kvm-clock clocksource", evidence)
        self.assertIn("no 'Hypervisor detected' in dmesg", evidence)

    def test_kvm_guest_with_qemu_cpu_model_is_still_kvm(self):
        # The same guest under KVM (cpu_mode none keeps the model name): kvm-clock decides.
        result = self.classify("qemu-tcg-guest.facts", clocksources="kvm-clock tsc hpet acpi_pm",
                               dmesg_hypervisor="Hypervisor detected: KVM")
        self.assertEqual(("KVM (hardware-assisted)", "no"),
                         (result["virtualization"], result["emulated"]))
        self.assertIn("dmesg: Hypervisor detected: KVM", result["virtualization_evidence"])

    def test_tcg_without_readable_dmesg(self):
        result = self.classify("qemu-tcg-guest.facts", dmesg_hypervisor=facts.DMESG_UNREADABLE)
        self.assertEqual("QEMU TCG (emulated)", result["virtualization"])
        self.assertNotIn("dmesg", result["virtualization_evidence"])

    def test_docker_container_on_this_kvm_host(self):
        result = self.classify("docker-container-on-firecracker.facts")
        self.assertEqual("container (docker), host: KVM guest", result["virtualization"])
        self.assertEqual("no", result["emulated"])
        self.assertIn("/proc/1/cgroup 9:name=systemd:/docker/<id>",
                      result["virtualization_evidence"])

    def test_docker_on_cgroup_v2_is_told_by_dockerenv_and_pid_namespace(self):
        # cgroup v2 with a private cgroup namespace shows "0::/" in the container.
        result = self.classify("docker-container-on-firecracker.facts", cgroup_container="")
        self.assertEqual("container (docker), host: KVM guest", result["virtualization"])
        self.assertIn("/.dockerenv; own PID namespace (no kthreadd)",
                      result["virtualization_evidence"])

    def test_docker_cgroup_v1_evidence_and_a_tcg_host(self):
        result = self.classify("qemu-tcg-guest.facts", dockerenv="no", pid2_comm="sshd",
                               cgroup_container="12:cpu,cpuacct:/docker/0123abcd")
        self.assertEqual("container (docker), host: QEMU TCG guest (emulated)",
                         result["virtualization"])
        self.assertEqual("yes", result["emulated"])
        self.assertIn("/proc/1/cgroup 12:cpu,cpuacct:/docker/0123abcd",
                      result["virtualization_evidence"])

    def test_podman_and_environment_named_engines(self):
        podman = self.classify("firecracker-kvm-host.facts", containerenv="yes")
        self.assertEqual("container (podman), host: KVM guest", podman["virtualization"])
        nspawn = self.classify("firecracker-kvm-host.facts", dockerenv="no",
                               container_env="systemd-nspawn")
        self.assertEqual("container (systemd-nspawn), host: KVM guest",
                         nspawn["virtualization"])

    def test_bare_metal(self):
        result = self.classify("firecracker-kvm-host.facts", cpu_flag_hypervisor="no",
                               clocksources="tsc hpet acpi_pm", dockerenv="no")
        self.assertEqual(("none (bare metal)", "no"),
                         (result["virtualization"], result["emulated"]))
        self.assertEqual("no hypervisor CPU flag", result["virtualization_evidence"])

    def test_container_on_bare_metal(self):
        result = self.classify("docker-container-on-firecracker.facts",
                               cpu_flag_hypervisor="no", clocksources="tsc hpet acpi_pm")
        self.assertEqual("container (docker), host: bare metal", result["virtualization"])

    def test_other_hypervisors_are_named(self):
        cases = [
            ({"clocksources": "tsc hyperv_clocksource_tsc_page acpi_pm"}, "Microsoft Hyper-V"),
            ({"clocksources": "xen tsc", "sys_hypervisor_type": "xen"}, "Xen"),
            ({"clocksources": "tsc acpi_pm", "dmi_sys_vendor": "VMware, Inc."}, "VMware"),
            ({"clocksources": "tsc", "dmesg_hypervisor": "Hypervisor detected: ACRN"}, "ACRN"),
        ]
        for changes, name in cases:
            result = self.classify("firecracker-kvm-host.facts", dockerenv="no", **changes)
            self.assertEqual("VM (hypervisor %s)" % name, result["virtualization"], changes)
            self.assertEqual("no", result["emulated"])

    def test_unknown_hypervisor_is_not_called_bare_metal_nor_emulated(self):
        result = self.classify("firecracker-kvm-host.facts", dockerenv="no",
                               clocksources="tsc")
        self.assertEqual(("VM (hypervisor unknown)", "unknown"),
                         (result["virtualization"], result["emulated"]))

    def test_other_architectures_without_evidence(self):
        result = self.classify("firecracker-kvm-host.facts", arch="aarch64", dockerenv="no",
                               cpu_flag_hypervisor="no", clocksources="arch_sys_counter")
        self.assertIn("unknown (no hypervisor evidence; aarch64", result["virtualization"])


class PathsAndVersionsTestCase(testtools.TestCase):

    def test_native_netperf_path(self):
        self.assertEqual("loopback on the host (127.0.0.1)",
                         facts.native_netperf_path("127.0.0.1"))
        self.assertEqual("loopback on the host (::1)", facts.native_netperf_path("::1"))
        self.assertEqual("loopback on the host (localhost)",
                         facts.native_netperf_path("localhost"))
        self.assertEqual("host 192.0.2.7", facts.native_netperf_path("192.0.2.7"))
        self.assertEqual("host peer.example", facts.native_netperf_path("peer.example"))

    def test_instance_netperf_path(self):
        base = "instance -> netserver instance 10.0.0.9 over the cloud network (Neutron)"
        self.assertEqual(base, facts.instance_netperf_path("10.0.0.9", True))
        self.assertEqual(base + ", same compute host",
                         facts.instance_netperf_path("10.0.0.9", True, True))
        self.assertEqual(base + ", another compute host",
                         facts.instance_netperf_path("10.0.0.9", True, False))
        self.assertEqual("instance -> host 198.51.100.7",
                         facts.instance_netperf_path("198.51.100.7", False))

    def test_nova_version_text(self):
        self.assertEqual("7002022 (7.2.22)", facts.nova_version_text(7002022))
        self.assertEqual("20010024 (20.10.24)", facts.nova_version_text(20010024))
        self.assertEqual("unknown", facts.nova_version_text(None))
        self.assertEqual("x", facts.nova_version_text("x"))
