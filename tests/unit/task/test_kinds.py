"""kinds: one spec (typed argument and context schema), one resolver."""

from unittest import mock

import jsonschema
import testtools

from rally_vmct.task import kinds
from rally_vmct.task import lookup
from tests.unit.task import test_lookup

KIND = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}


class ResolveTestCase(testtools.TestCase):

    def resolve(self, kind, context=None, cache=None, cloud=None):
        cloud = cloud or test_lookup.standard_cloud()
        with mock.patch.object(lookup, "clients_of", return_value=cloud) as clients_of:
            got = kinds.resolve(kind, context or {"users": []}, cache)
        return got, cloud, clients_of

    def test_looks_up_what_is_missing_in_the_given_context(self):
        ctx, cache = {"users": [{"id": "u"}]}, {}
        kind = dict(KIND, image={"name": "vmct-docker"}, flavor={"name": "m1.small"})
        got, cloud, clients_of = self.resolve(kind, ctx, cache)
        self.assertEqual(dict(kind, image_id="i-docker", flavor_id="f1"), got)
        clients_of.assert_called_once_with(ctx)
        self.assertEqual([("images.list", {"status": "active"})], cloud.calls)
        self.assertIn(("vmct_images", (("status", "active"),)), cache)

    def test_floating_network_is_resolved_to_an_external_network(self):
        kind = dict(KIND, image_id="i", flavor_id="f", floating_network="public")
        got, cloud, _ = self.resolve(kind)
        self.assertEqual("n-ext", got["floating_network_id"])
        e = self.assertRaises(kinds.KindError, self.resolve,
                              dict(kind, floating_network="private"))
        self.assertIn("kind 'kvm': kind.floating_network: network private (n-int) is not "
                      "external", str(e))

    def test_ambiguous_or_unbootable_images_name_the_kind(self):
        e = self.assertRaises(kinds.KindError, self.resolve,
                              dict(KIND, image={"regex": "^vmct-qemu"}))
        self.assertIn("kind 'kvm': kind.image: '^vmct-qemu' matches 3 images", str(e))
        e = self.assertRaises(kinds.KindError, self.resolve,
                              dict(KIND, image={"name": "vmct-qemu-ramdisk"}))
        self.assertIn("kind 'kvm': kind.image: image vmct-qemu-ramdisk (i-ramdisk) is a "
                      "ramdisk image", str(e))

    def test_ids_already_there_are_kept(self):
        got, cloud, clients_of = self.resolve(dict(KIND, image_id="img-1", flavor_id="flv-1"))
        self.assertEqual(("img-1", "flv-1"), (got["image_id"], got["flavor_id"]))
        self.assertEqual([], cloud.calls)
        clients_of.assert_not_called()

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
