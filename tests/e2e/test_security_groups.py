"""End-to-end: the all-in-one cloud enforces security groups, on every instance kind.

For each kind of task-args.yaml, a server of the admin project boots on the instance network
with a security group of its own that allows TCP 22 from anywhere. Reached from the access
namespace (the SSH banner arrives), the rule is removed: a new connection to port 22 then gets
no answer; the rule comes back: it answers again. The enforcer is the cloud's, not a setting of
ours, so a kind whose ports bypass it (a plug it never sees) fails here: under ML2/OVN its ACLs
(VMCT_AIO_NEUTRON=ovn), under ML2/OVS its firewall driver (VMCT_AIO_FIREWALL): openvswitch, or
iptables_hybrid (the ports bound for a hybrid plug: a Linux bridge per port, whose iptables
rules enforce the group; the Docker driver plugs it too). The e2e stage runs it on the
default cloud among the other tests, then on the other backend's.
"""

import configparser
import json
import os
import subprocess
import time
import uuid

import yaml

from tests.e2e import faults
from tests.e2e import test_demo_task

ACCESS_NS = os.environ.get("VMCT_ACCESS_NS", "vmct-access")   # tools/aio/lib/common.sh
# how long a blocked connection may go unanswered, and a rule change may take to apply
CONNECT_TIMEOUT = 3
APPLY_TIMEOUT = 60


def banner(address, port=22):
    """The first bytes port ``port`` of ``address`` sends, from the access namespace; or ''."""
    proc = subprocess.run(
        ["ip", "netns", "exec", ACCESS_NS, "timeout", str(CONNECT_TIMEOUT + 1),
         "nc", "-w", str(CONNECT_TIMEOUT), address, str(port)],
        input=b"", capture_output=True)
    # the banner, then sshd's binary key exchange
    return proc.stdout.decode("ascii", "replace")


def aio_firewall():
    """What enforces the cloud's security groups: "ovn", or ML2/OVS's firewall_driver.

    ML2/OVN's ACLs when the mechanism driver is ovn (tools/aio/lib/configs.sh writes both).
    """
    ini = configparser.ConfigParser()
    ini.read(os.path.join(faults.AIO_DIR, "etc", "neutron", "plugins", "ml2", "ml2_conf.ini"))
    if ini.get("ml2", "mechanism_drivers", fallback="") == "ovn":
        return "ovn"
    return ini.get("securitygroup", "firewall_driver", fallback="(none)")


class SecurityGroupTest(test_demo_task.ArtifactTest):
    """For the firewall FIREWALL, which the cloud must run while the test does."""

    FIREWALL = None
    HYBRID = False      # Neutron binds the ports for a hybrid plug (ovs_hybrid_plug)

    @classmethod
    def load_artifacts(cls):
        with open(os.path.join(faults.AIO_DIR, "task-args.yaml")) as f:
            cls.args = yaml.safe_load(f)

    def setUp(self):
        super().setUp()
        down = faults.aio_down_reason()
        if down:
            self.fail(down)
        self.assertEqual(self.FIREWALL, aio_firewall(), "the cloud runs another firewall")

    def group_with_ssh(self):
        name = "vmct-e2e-sg-" + uuid.uuid4().hex[:8]
        faults.openstack("security", "group", "create", name)
        self.addCleanup(faults.openstack, "security", "group", "delete", name)
        return name, self.allow_ssh(name)

    def allow_ssh(self, group):
        return faults.openstack("security", "group", "rule", "create", "--ingress",
                                "--protocol", "tcp", "--dst-port", "22", "-f", "value",
                                "-c", "id", group).strip()

    def until_banner(self, address, wanted, what):
        end = time.monotonic() + APPLY_TIMEOUT
        while True:
            got = banner(address).startswith("SSH-")
            if got == wanted:
                return
            if time.monotonic() > end:
                self.fail("%s (for %d s)" % (what, APPLY_TIMEOUT))

    def check_kind(self, kind):
        group, rule = self.group_with_ssh()
        server = faults.Server("vmct-e2e-sg-" + kind["name"], kind, self.args["network_id"],
                               security_groups=[group])
        self.addCleanup(server.delete)
        address = server.address()
        port = json.loads(faults.openstack("port", "list", "--server", server.id, "-f", "json",
                                           "--long", "-c", "ID"))[0]["ID"]
        details = json.loads(faults.openstack("port", "show", port, "-f", "json",
                                              "-c", "binding_vif_details"))
        self.assertEqual(self.HYBRID, bool(details["binding_vif_details"].get("ovs_hybrid_plug")),
                         "%s: port binding %s" % (kind["name"], details))
        self.until_banner(address, True, "%s: no SSH banner with port 22 allowed" % kind["name"])
        faults.openstack("security", "group", "rule", "delete", rule)
        self.until_banner(address, False, "%s: port 22 still answers without a rule allowing "
                          "it: the security group is not enforced" % kind["name"])
        self.allow_ssh(group)
        self.until_banner(address, True, "%s: port 22 blocked after it was allowed again"
                          % kind["name"])

    def test_every_kind_enforces_its_security_group(self):
        kinds = self.args["kinds"]
        self.assertTrue(kinds)
        faults.together(*[lambda k=k: self.check_kind(k) for k in kinds])


@test_demo_task.needs_e2e
class OpenvswitchFirewallTest(SecurityGroupTest):
    FIREWALL = "openvswitch"

    def setUp(self):
        # CI runs the smoke and the lifecycle sample under this firewall (the ML2/OVS profile),
        # and this test under iptables_hybrid, whose plug is the Docker driver's own
        if os.environ.get("VMCT_E2E_FULL") != "1":
            self.skipTest("VMCT_E2E_FULL unset: the long suite checks the openvswitch "
                          "firewall's enforcement (about 2.5 min)")
        super().setUp()


@test_demo_task.needs_e2e
class IptablesHybridFirewallTest(SecurityGroupTest):
    FIREWALL = "iptables_hybrid"
    HYBRID = True


@test_demo_task.needs_e2e
class OvnAclTest(SecurityGroupTest):
    FIREWALL = "ovn"


def load_tests(loader, tests, pattern):
    """The class of the enforcer the cloud runs now (the openvswitch one for any other).

    The e2e stage runs this module twice: on the default cloud among the other e2e tests, then
    on the other backend's cloud; each class runs at most once.
    """
    chosen = {c.FIREWALL: c for c in (OpenvswitchFirewallTest, IptablesHybridFirewallTest,
                                      OvnAclTest)}
    return loader.loadTestsFromTestCase(chosen.get(aio_firewall(), OpenvswitchFirewallTest))
