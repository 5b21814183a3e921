"""Argument validation of the lifecycle scenarios through Rally's own machinery.

``Scenario.validate(..., vtype="syntax")`` is what ``rally task validate`` runs
first (args-spec with the typed ``run()`` schema, then our syntax validators);
tests/functional/test_samples_validate.py runs the real CLI.
"""

import types as types_lib
from unittest import mock

from oslo_config import cfg
from rally.common import validation
from rally import exceptions
from rally import plugins
from rally.task import scenario
from rally.task import types
import testtools

from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.task import lookup
from rally_vmct.task import validators
from tests.unit.timing import fakes
from tests.unit.task import test_lookup

KIND = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}
SCENARIOS = ("VMCT.boot_and_delete_server", "VMCT.boot_and_reboot_server",
             "VMCT.boot_stop_start_server")


def errors(name, args, contexts=None):
    return scenario.Scenario.validate(
        name=name, context=None, config={"args": args, "contexts": contexts or {}},
        plugin_cfg=None, vtype="syntax")


class TestSyntax(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()

    def assertRejected(self, name, args, *fragments, contexts=None):
        found = errors(name, args, contexts)
        self.assertTrue(found, "%s accepted %r" % (name, args))
        text = "\n".join(found)
        for fragment in fragments:
            self.assertIn(fragment, text)
        return text

    def test_good_arguments_pass(self):
        for name in SCENARIOS:
            self.assertEqual([], errors(name, {"kind": dict(KIND)}))
        self.assertEqual([], errors("VMCT.boot_and_reboot_server", {
            "kind": dict(KIND, availability_zone="kvm", scheduler_hints={"a": 1},
                         ssh_user="debian", ssh_port=2222, ssh_key_file="/k"),
            "reboot_type": "hard", "reboots": 3, "soft_reboot_fallback_seconds": 30,
            "probe": "ssh", "wait_for_ssh": True,
            "proxy_command": "ip netns exec ns nc %h %p",
            "boot_args": {"nics": [{"net-name": "private"}]}}))

    def test_unknown_kind_key(self):
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": dict(KIND, imag="x")},
                            "Argument 'kind' is invalid", "'imag' was unexpected")

    def test_missing_image_and_flavor(self):
        kind = dict(KIND)
        del kind["image"]
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": kind},
                            "Argument 'kind' is invalid", "'image' is a required property")

    def test_missing_kind(self):
        self.assertRejected("VMCT.boot_stop_start_server", {},
                            "Argument(s) 'kind' should be specified")

    def test_unknown_key_in_image_ref(self):
        self.assertRejected("VMCT.boot_and_delete_server",
                            {"kind": dict(KIND, image={"nmae": "x"})},
                            "Argument 'kind' is invalid", "'nmae' was unexpected")

    def test_empty_image_ref(self):
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": dict(KIND, image={})},
                            "Argument 'kind' is invalid",
                            "kind.image needs one of 'name', 'id' or 'regex'")

    def test_kind_name_cannot_break_chart_titles_or_be_native(self):
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": dict(KIND, name="a:b")},
                            "Argument 'kind' is invalid", "does not match")
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": dict(KIND, name="native")},
                            "Argument 'kind' is invalid", "reserved for the bare-metal")

    def test_negative_counts(self):
        self.assertRejected("VMCT.boot_and_reboot_server", {"kind": KIND, "reboots": -1},
                            "Argument 'reboots' is invalid", "less than the minimum of 1")
        self.assertRejected("VMCT.boot_stop_start_server", {"kind": KIND, "cycles": 0},
                            "Argument 'cycles' is invalid")
        self.assertRejected("VMCT.boot_and_reboot_server",
                            {"kind": KIND, "soft_reboot_fallback_seconds": 0},
                            "Argument 'soft_reboot_fallback_seconds' is invalid")
        self.assertRejected("VMCT.boot_and_delete_server",
                            {"kind": dict(KIND, ssh_port=0)}, "Argument 'kind' is invalid")

    def test_unknown_reboot_type_and_probe(self):
        self.assertRejected("VMCT.boot_and_reboot_server", {"kind": KIND, "reboot_type": "warm"},
                            "Argument 'reboot_type' is invalid", "'warm' is not one of")
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": KIND, "probe": "http"},
                            "Argument 'probe' is invalid")

    def test_unknown_argument(self):
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": KIND, "reboots": 2},
                            "Unexpected argument(s) found ['reboots']")

    def test_ssh_needs_a_key_source(self):
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": KIND, "wait_for_ssh": True},
                            "'wait_for_ssh: true' needs an SSH key", "keypair")
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": KIND, "probe": "ssh"},
                            "'probe: ssh' needs an SSH key")
        self.assertEqual([], errors("VMCT.boot_and_delete_server",
                                    {"kind": KIND, "probe": "ssh"},
                                    contexts={"keypair@openstack": {}}))

    def test_probe_none_is_a_lifecycle_probe_without_ssh(self):
        for name in SCENARIOS:
            self.assertEqual([], errors(name, {"kind": KIND, "probe": "none"}))
            text = self.assertRejected(name, {"kind": KIND, "probe": "none",
                                              "wait_for_ssh": True},
                                       "'probe: none'", "'wait_for_ssh: true'",
                                       contexts={"keypair": {}})
            self.assertIn("set wait_for_ssh: false", text)
        # the benchmark needs SSH: "none" is not one of its probes
        self.assertRejected("VMCT.boot_and_benchmark", {"kind": KIND, "probe": "none"},
                            "Argument 'probe' is invalid", "'none' is not one of",
                            contexts={"keypair": {}})
        info = scenario.Scenario.get("VMCT.boot_and_benchmark").get_info()
        self.assertIn('not "none"', info["schema"]["properties"]["probe"]["description"])

    def test_proxy_command(self):
        self.assertRejected("VMCT.boot_and_delete_server",
                            {"kind": KIND, "proxy_command": "nc %h %q"},
                            "Argument 'proxy_command' is invalid", "unknown token '%q'")
        self.assertRejected("VMCT.boot_and_delete_server",
                            {"kind": KIND, "proxy_command": "nc 'x"},
                            "Argument 'proxy_command' is invalid")
        self.assertRejected("VMCT.boot_and_delete_server",
                            {"kind": KIND, "probe": "ping", "proxy_command": "nc %h %p"},
                            "Argument 'probe' is 'ping'", "use probe 'tcp' or 'ssh'")

    def test_proxy_command_option(self):
        opts.register()
        cfg.CONF.set_override("ssh_proxy_command", "nc %z", opts.GROUP)
        self.addCleanup(cfg.CONF.clear_override, "ssh_proxy_command", opts.GROUP)
        self.assertRejected("VMCT.boot_and_delete_server", {"kind": KIND},
                            "Option [vmct] ssh_proxy_command is invalid")
        # an explicit empty proxy_command turns the option off
        self.assertEqual([], errors("VMCT.boot_and_delete_server",
                                    {"kind": KIND, "proxy_command": ""}))

    def test_boot_args_cannot_override_the_kind(self):
        self.assertRejected("VMCT.boot_and_delete_server",
                            {"kind": KIND, "boot_args": {"availability_zone": "x"}},
                            "Argument 'boot_args' must not set 'availability_zone'")

    def test_docstring_documents_every_argument(self):
        for name in SCENARIOS:
            info = scenario.Scenario.get(name).get_info()
            for arg, prop in info["schema"]["properties"].items():
                self.assertTrue(prop.get("description"), "%s: %s undocumented" % (name, arg))
            self.assertTrue(info["title"].startswith("Boot a server of a kind"))


class TestKindResourceType(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()

    def test_preprocess_resolves_image_and_flavor_once(self):
        cloud = test_lookup.FakeCloud(images=[test_lookup.image("img-id", "cirros")],
                                      flavors=[test_lookup.flavor("flv-id", "m1.tiny")])
        with mock.patch.object(lookup, "clients_of", return_value=cloud):
            args = types.preprocess("VMCT.boot_and_reboot_server", {"users": []},
                                    {"kind": dict(KIND), "reboots": 2})
        self.assertEqual(dict(KIND, image_id="img-id", flavor_id="flv-id"), args["kind"])
        self.assertEqual(2, args["reboots"])
        self.assertEqual([("images.list", {"status": "active"})], cloud.calls)

    def test_preprocess_refuses_an_ambiguous_image_naming_the_kind(self):
        cloud = test_lookup.standard_cloud()
        with mock.patch.object(lookup, "clients_of", return_value=cloud):
            e = self.assertRaises(exceptions.InvalidScenarioArgument, types.preprocess,
                                  "VMCT.boot_and_reboot_server", {"users": []},
                                  {"kind": dict(KIND, image={"regex": "^vmct-qemu"})})
        self.assertIn("kind 'kvm': kind.image: '^vmct-qemu' matches 3 images", str(e))

    def test_kind_helpers(self):
        self.assertEqual(("kvm", "root", 22), (kinds.label(KIND), kinds.ssh_user(KIND),
                                               kinds.ssh_port(KIND)))
        self.assertEqual(["kind must be a mapping like {name: kvm, image: {name: ...}, "
                          "flavor: {name: ...}}"], kinds.problems("kvm"))


class FakeCloud:
    """Nova (flavors, limits, default quotas, zones, hypervisors) and placement for vmct_capacity.

    Two compute nodes in zone "fake" (8 VCPU x 16, 4096 MB, 40 GB each; one node's RAM half
    used), one in zone "docker"; quota 10 instances.
    """

    def __init__(self):
        self.limits = {"maxTotalInstances": 10, "totalInstancesUsed": 0, "maxTotalCores": 20,
                       "totalCoresUsed": 0, "maxTotalRAMSize": 51200, "totalRAMUsed": 0}
        self.defaults = {"instances": 10, "cores": 20, "ram": 51200}
        self.zones = [{"zoneName": "fake", "hosts": {"f1": {"nova-compute": {}},
                                                     "f2": {"nova-compute": {}}}},
                      {"zoneName": "docker", "hosts": {"d1": {"nova-compute": {}}}}]
        self.hypervisors = [{"hypervisor_hostname": name, "status": "enabled", "state": "up",
                             "service": {"host": name}} for name in ("f1", "f2", "d1")]
        node = {"VCPU": {"total": 8, "reserved": 0, "allocation_ratio": 16.0, "max_unit": 8},
                "MEMORY_MB": {"total": 4096, "reserved": 0, "allocation_ratio": 1.0,
                              "max_unit": 4096},
                "DISK_GB": {"total": 40, "reserved": 0, "allocation_ratio": 1.0,
                            "max_unit": 40}}
        self.placement = {"/resource_providers": {"resource_providers": [
            {"name": name, "uuid": "uuid-" + name} for name in ("f1", "f2", "d1")]}}
        for name in ("f1", "f2", "d1"):
            self.placement["/resource_providers/uuid-%s/inventories" % name] = {
                "inventories": node}
            self.placement["/resource_providers/uuid-%s/usages" % name] = {
                "usages": {"MEMORY_MB": 2048 if name == "f2" else 0}}
        self.extra_specs = {}
        self.asked = []
        self.broken = set()       # names of the reads that fail

    def read(self, what, answer):
        self.asked.append(what)
        if what in self.broken or what.split("/")[1] in self.broken:
            raise fakes.APIError(403, "Policy does not allow " + what)
        return answer

    def nova(self):
        obj = fakes.Obj
        flavor = obj(name="m1.tiny", vcpus=1, ram=512, disk=1, swap="",
                     get_keys=lambda: self.read("/os-extra-specs", self.extra_specs),
                     **{"OS-FLV-EXT-DATA:ephemeral": 0})
        return obj(
            flavors=obj(get=lambda fid: self.read("/flavors", flavor)),
            limits=obj(get=lambda: self.read("/limits", obj(absolute=[
                obj(name=k, value=v) for k, v in self.limits.items()]))),
            quotas=obj(defaults=lambda tenant: self.read("/os-quota-sets/defaults",
                                                         obj(**self.defaults))),
            availability_zones=obj(list=lambda detailed: self.read(
                "/os-availability-zone", [obj(**z) for z in self.zones])),
            hypervisors=obj(list=lambda detailed: self.read(
                "/os-hypervisors", [obj(**h) for h in self.hypervisors])))

    def credential(self, name):
        cloud = self
        session = fakes.Obj(get=lambda path, endpoint_filter: fakes.Obj(
            json=lambda: cloud.read("/placement" + path, cloud.placement[path])))
        clients = fakes.Obj(nova=lambda version=None: cloud.nova(),
                            keystone=fakes.Obj(get_session=lambda: (session, None)))
        credential = fakes.Obj(name=name, region_name="RegionOne", endpoint_type=None,
                               clients=lambda: clients)
        clients.credential = credential
        return credential


class TestCapacity(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        self.cloud = FakeCloud()
        flavor = mock.patch("rally_openstack.task.types.Flavor").start()
        self.addCleanup(mock.patch.stopall)
        flavor.return_value.pre_process.return_value = "flv-1"

    def context(self, admin=True):
        found = {"users": [{"credential": self.cloud.credential("demo"), "tenant_id": "p1"}]}
        if admin:
            found["admin"] = {"credential": self.cloud.credential("admin")}
        return found

    def check(self, level, zone="fake", contexts=None, admin=True,
              name="VMCT.boot_and_delete_server"):
        kind = dict(KIND, availability_zone=zone) if zone else dict(KIND)
        config = {"args": {"kind": kind}, "runner": {"times": 2 * level, "concurrency": level},
                  "contexts": contexts if contexts is not None else {"users": {}}}
        with mock.patch.object(validators.LOG, "debug") as debug:
            try:
                validators.CapacityValidator().validate(
                    self.context(admin), config, scenario.Scenario.get(name), None)
            except validation.ValidationError as e:
                return e.message, debug
        return None, debug

    def test_every_scenario_that_boots_a_kind_checks_it_semantically(self):
        for name in SCENARIOS + ("VMCT.boot_and_benchmark",):
            found = [v for v in scenario.Scenario.get(name)._meta_get("validators")
                     if v[0] == "vmct_capacity"]
            self.assertEqual(1, len(found), name)
        self.assertEqual([], errors("VMCT.boot_and_delete_server", {"kind": KIND}))

    def test_a_level_that_fits_passes(self):
        quotas = {"users": {}, "quotas": {"nova": {"instances": 12, "cores": -1, "ram": -1}}}
        message, debug = self.check(12, contexts=quotas)
        self.assertIsNone(message)
        self.assertEqual([], debug.call_args_list)
        self.assertIn("/placement/resource_providers/uuid-f1/usages", self.cloud.asked)
        self.assertNotIn("/placement/resource_providers/uuid-d1/usages", self.cloud.asked)

    def test_quota_of_the_users_project(self):
        message, _ = self.check(11)
        self.assertIn("VMCT.boot_and_delete_server at concurrency 11 on kind 'kvm' (flavor "
                      "'m1.tiny': 1 VCPU, 512 MB RAM, 1 GB disk) cannot run: the users' "
                      "project p1 may start 10 more such servers (quota instances 10, 0 in "
                      "use), the workload runs 11 at once", message)
        self.assertIn("add rally-openstack's quotas context", message)
        self.assertIn("lower the concurrency to 10", message)
        self.assertNotIn("hold", message)             # 11 fit on the hosts (8 + 4)

    def test_new_projects_have_the_default_quotas(self):
        self.cloud.defaults["cores"] = 4
        message, _ = self.check(8, contexts={"users": {"tenants": 1, "users_per_tenant": 1}})
        self.assertIn("a new project of the users context (default quotas) may start 4 more "
                      "such servers (quota cores 4, 0 in use)", message)
        self.assertNotIn("/limits", self.cloud.asked)

    def test_hosts_of_the_zone_hold_fewer(self):
        quotas = {"users": {}, "quotas": {"nova": {"instances": -1, "cores": -1, "ram": -1}}}
        message, _ = self.check(32, contexts=quotas)
        self.assertIn("VMCT.boot_and_delete_server at concurrency 32 on kind 'kvm'", message)
        self.assertIn("the compute hosts of availability zone 'fake' hold 12 such servers at "
                      "once, the workload needs 32 at once: f2 holds 4 (MEMORY_MB: (4096 "
                      "total - 0 reserved) x allocation ratio 1, 2048 used, 512 a server); "
                      "f1 holds 8 (MEMORY_MB", message)
        self.assertIn("Lower the concurrency to 12, or raise the allocation ratio of MEMORY_MB "
                      "(nova.conf [DEFAULT] ram_allocation_ratio", message)
        self.assertNotIn("quota", message.split("cannot run:")[1])
        # without a zone every node counts: 12 + 8
        message, _ = self.check(32, zone=None, contexts=quotas)
        self.assertIn("the cloud's compute hosts hold 20", message)

    def test_both_problems_in_one_message(self):
        message, _ = self.check(64)
        self.assertIn("quota instances 10", message)
        self.assertIn("; and the compute hosts of availability zone 'fake' hold 12", message)

    def test_flavor_extra_specs_set_what_a_server_takes(self):
        quotas = {"users": {}, "quotas": {"nova": {"instances": -1, "cores": -1, "ram": -1}}}
        self.cloud.extra_specs = {"resources:MEMORY_MB": "0", "resources:DISK_GB": "0"}
        # RAM and disk no longer count: 2 x 8 VCPU x 16
        message, _ = self.check(300, contexts=quotas)
        self.assertIn("(flavor 'm1.tiny': 1 VCPU) cannot run", message)
        self.assertIn("hold 256 such servers", message)
        self.assertIsNone(self.check(256, contexts=quotas)[0])

    def test_netperf_peers_count(self):
        contexts = {"users": {"tenants": 2, "users_per_tenant": 1}, "vmct_netperf_peer": {},
                    "quotas": {"nova": {"instances": -1, "cores": -1, "ram": -1}}}
        message, _ = self.check(11, contexts=contexts, name="VMCT.boot_and_benchmark")
        self.assertIn("VMCT.boot_and_benchmark at concurrency 11", message)
        self.assertIn("hold 12 such servers at once, the workload needs 13 at once + 2 helper "
                      "servers", message)
        self.assertIn("Lower the concurrency to 10", message)

    def test_what_cannot_be_read_is_skipped_with_a_debug_log(self):
        # no admin: no placement, the users' own quota still counts
        message, debug = self.check(64, admin=False)
        self.assertIn("quota instances 10", message)
        self.assertNotIn("hold", message)
        self.assertIn("no admin credential", debug.call_args[0][0])
        # placement refuses: skipped; Nova's limits refused: skipped; nothing blocks
        self.cloud.broken = {"placement", "limits"}
        message, debug = self.check(64)
        self.assertIsNone(message)
        logged = " ".join(call[0][0] for call in debug.call_args_list)
        self.assertIn("vmct_capacity: placement not checked (APIError", logged)
        self.assertIn("vmct_capacity: the quotas not checked (APIError", logged)
        self.cloud.broken = {"flavors"}
        self.assertIsNone(self.check(64)[0])


class TestFloatingNetwork(testtools.TestCase):

    def check(self, neutron):
        clients = types_lib.SimpleNamespace(neutron=lambda: neutron)
        validator = validators.KindResourcesValidator()
        return validator._floating_network("Argument 'kind' (kind 'kvm')", clients, "public")

    def test_external_network_passes_others_fail_naming_the_kind(self):
        self.assertIsNone(self.check(test_lookup.standard_cloud().neutron()))
        neutron = mock.Mock()
        neutron.list_networks.return_value = {"networks": [
            {"id": "n1", "name": "public", "router:external": False}]}
        e = self.assertRaises(validation.ValidationError, self.check, neutron)
        self.assertIn("Argument 'kind' (kind 'kvm'): kind.floating_network: network public "
                      "(n1) is not external", e.message)

    def test_neutron_that_does_not_answer_is_refused_with_the_fix(self):
        neutron = mock.Mock()
        neutron.list_networks.side_effect = fakes.APIError(503, "no neutron")
        e = self.assertRaises(validation.ValidationError, self.check, neutron)
        self.assertIn("kind.floating_network 'public' could not be checked", e.message)
        self.assertIn("leave floating_network out", e.message)
