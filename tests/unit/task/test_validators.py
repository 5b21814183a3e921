"""Argument validation of the lifecycle scenarios through Rally's own machinery.

``Scenario.validate(..., vtype="syntax")`` is what ``rally task validate`` runs
first (args-spec with the typed ``run()`` schema, then our syntax validators);
tests/functional/test_samples_validate.py runs the real CLI.
"""

from unittest import mock

from oslo_config import cfg
from rally import plugins
from rally.task import scenario
from rally.task import types
import testtools

from rally_vmct import opts
from rally_vmct.task import kinds

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
        with mock.patch("rally_openstack.task.types.GlanceImage") as image, \
                mock.patch("rally_openstack.task.types.Flavor") as flavor:
            image.return_value.pre_process.return_value = "img-id"
            flavor.return_value.pre_process.return_value = "flv-id"
            args = types.preprocess("VMCT.boot_and_reboot_server", {"users": []},
                                    {"kind": dict(KIND), "reboots": 2})
        self.assertEqual(dict(KIND, image_id="img-id", flavor_id="flv-id"), args["kind"])
        self.assertEqual(2, args["reboots"])
        image.return_value.pre_process.assert_called_once_with({"name": "cirros"}, config={})
        flavor.return_value.pre_process.assert_called_once_with({"name": "m1.tiny"}, config={})

    def test_kind_helpers(self):
        self.assertEqual(("kvm", "root", 22), (kinds.label(KIND), kinds.ssh_user(KIND),
                                               kinds.ssh_port(KIND)))
        self.assertEqual(["kind must be a mapping like {name: kvm, image: {name: ...}, "
                          "flavor: {name: ...}}"], kinds.problems("kvm"))
