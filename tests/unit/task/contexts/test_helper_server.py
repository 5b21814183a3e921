"""The vmct_* contexts' config schema (helper_server.config_schema)."""

import testtools

from rally_vmct.task.contexts import netperf_peer
from rally_vmct.task.contexts import workload_image


class ConfigSchemaTestCase(testtools.TestCase):

    def test_schemas_are_valid_draft4_and_check_configs(self):
        import jsonschema

        kind = {"name": "kvm", "image": {"name": "g"}, "flavor": {"name": "f"}}
        for cls in (netperf_peer.NetperfPeer, workload_image.WorkloadImage):
            jsonschema.Draft4Validator.check_schema(cls.CONFIG_SCHEMA)
            jsonschema.validate({"kind": kind, "proxy_command": "nc %h %p",
                                 "boot_args": {"nics": []}, "command_timeout": 30},
                                cls.CONFIG_SCHEMA)
            for bad in ({}, {"kind": dict(kind, imag="x")}, {"kind": kind, "port": 1}):
                self.assertRaises(jsonschema.ValidationError, jsonschema.validate, bad,
                                  cls.CONFIG_SCHEMA)
        self.assertRaises(jsonschema.ValidationError, jsonschema.validate,
                          {"kind": kind, "tools": ["fio"]},
                          workload_image.WorkloadImage.CONFIG_SCHEMA)


class ServerNamesTestCase(testtools.TestCase):

    def test_names_are_in_the_scenarios_format_of_the_owner(self):
        from rally.common import utils as rally_utils
        from rally.task import scenario

        from rally_vmct.task.contexts import helper_server

        owner = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        name = helper_server.ServerNames(
            {"task": {"uuid": "task-uuid"}, "owner_id": owner}).generate_random_name()
        self.assertTrue(name.startswith("s_rally_0f1e2d3c_"), name)
        # cleanup@openstack deletes what a scenario of this task would have named.
        self.assertTrue(rally_utils.name_matches_object(name, scenario.Scenario,
                                                        task_id=owner))
        self.assertFalse(rally_utils.name_matches_object(
            name, scenario.Scenario, task_id="11111111-2222-3333-4444-555555555555"))
