"""kinds: one spec (typed argument and context schema), one resolver."""

from unittest import mock

import jsonschema
import testtools

from rally_vmct.task import kinds

KIND = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}


class ResolveTestCase(testtools.TestCase):

    def resolve(self, kind, context=None, cache=None):
        with mock.patch("rally_openstack.task.types.GlanceImage") as image, \
                mock.patch("rally_openstack.task.types.Flavor") as flavor:
            image.return_value.pre_process.return_value = "img-9"
            flavor.return_value.pre_process.return_value = "flv-9"
            got = kinds.resolve(kind, context or {"users": []}, cache)
        return got, image, flavor

    def test_looks_up_what_is_missing_in_the_given_context(self):
        ctx, cache = {"users": [{"id": "u"}]}, {}
        got, image, flavor = self.resolve(dict(KIND), ctx, cache)
        self.assertEqual(dict(KIND, image_id="img-9", flavor_id="flv-9"), got)
        image.assert_called_once_with(ctx, cache)
        image.return_value.pre_process.assert_called_once_with({"name": "cirros"}, config={})
        flavor.return_value.pre_process.assert_called_once_with({"name": "m1.tiny"},
                                                                config={})

    def test_ids_already_there_are_kept(self):
        got, image, flavor = self.resolve(dict(KIND, image_id="img-1", flavor_id="flv-1"))
        self.assertEqual(("img-1", "flv-1"), (got["image_id"], got["flavor_id"]))
        image.assert_not_called()
        flavor.assert_not_called()

    def test_bad_spec_is_a_kind_error(self):
        e = self.assertRaises(kinds.KindError, kinds.resolve,
                              dict(KIND, name="native"), {})
        self.assertIn("reserved for the bare-metal baseline", str(e))
        e = self.assertRaises(kinds.KindError, kinds.resolve, dict(KIND, image={}), {})
        self.assertIn("kind.image needs one of", str(e))

    def test_lookup_context_of_a_user(self):
        ctx = {"admin": {"id": "a"}, "users": [{"id": "u1"}, {"id": "u2"}]}
        self.assertEqual({"admin": {"id": "a"}, "users": [{"id": "u2"}]},
                         kinds.lookup_context(ctx, {"id": "u2"}))
        self.assertEqual({"users": [{"id": "u2"}]},
                         kinds.lookup_context({"users": []}, {"id": "u2"}))
        self.assertIs(ctx, kinds.lookup_context(ctx))


class SchemaTestCase(testtools.TestCase):

    def test_context_schema_is_the_typed_spec(self):
        jsonschema.Draft4Validator.check_schema(kinds.KIND_SCHEMA)
        jsonschema.validate(dict(KIND, ssh_port=2222, availability_zone="docker"),
                            kinds.KIND_SCHEMA)
        for bad in (dict(KIND, imag="x"), {"name": "kvm", "image": {"name": "g"}},
                    dict(KIND, image={"nam": "g"}), dict(KIND, ssh_port=0),
                    dict(KIND, name="a:b"), dict(KIND, name="")):
            self.assertRaises(jsonschema.ValidationError, jsonschema.validate, bad,
                              kinds.KIND_SCHEMA)
        self.assertEqual(set(kinds.KindSpec.__annotations__),
                         set(kinds.KIND_SCHEMA["properties"]))
