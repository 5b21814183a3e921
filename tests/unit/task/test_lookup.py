"""lookup: images, flavors and external networks found without guessing."""

import types

import testtools

from rally_vmct.task import lookup
from tests.unit.timing import fakes


def image(image_id, name, disk_format="qcow2", container_format="bare"):
    # glanceclient v2 images are dicts with attribute access (warlock)
    return {"id": image_id, "name": name, "disk_format": disk_format,
            "container_format": container_format}


def flavor(flavor_id, name):
    return types.SimpleNamespace(id=flavor_id, name=name)


class FakeImages:
    def __init__(self, cloud):
        self.cloud = cloud

    def list(self, filters=None):
        self.cloud.calls.append(("images.list", dict(filters or {})))
        return list(self.cloud.images)

    def get(self, image_id):
        self.cloud.calls.append(("images.get", image_id))
        for found in self.cloud.images:
            if found["id"] == image_id:
                return found
        raise fakes.NotFound()


class FakeNeutron:
    def __init__(self, cloud):
        self.cloud = cloud

    def list_networks(self, **filters):
        self.cloud.calls.append(("list_networks", filters))
        return {"networks": list(self.cloud.networks)}


class FakeCloud:
    """osclients look-alike: glance("2").images, nova().flavors, neutron() networks."""

    def __init__(self, images=(), flavors=(), networks=()):
        self.images = list(images)
        self.flavors = list(flavors)
        self.networks = list(networks)
        self.calls = []
        self._glance = types.SimpleNamespace(images=FakeImages(self))
        self._nova = types.SimpleNamespace(flavors=types.SimpleNamespace(
            list=lambda: list(self.flavors),
            get=lambda flavor_id: [f for f in self.flavors if f.id == flavor_id][0]))
        self._neutron = FakeNeutron(self)

    def glance(self, version=None):
        return self._glance

    def nova(self):
        return self._nova

    def neutron(self):
        return self._neutron


def standard_cloud():
    return FakeCloud(
        images=[image("i-disk", "vmct-qemu"),
                image("i-kernel", "vmct-qemu-kernel", "aki", "aki"),
                image("i-ramdisk", "vmct-qemu-ramdisk", "ari", "ari"),
                image("i-docker", "vmct-docker", "raw", "docker")],
        flavors=[flavor("f1", "m1.small"), flavor("f2", "m1.small-2")],
        networks=[{"id": "n-ext", "name": "public", "router:external": True},
                  {"id": "n-int", "name": "private", "router:external": False},
                  {"id": "n-a", "name": "twin", "router:external": True},
                  {"id": "n-b", "name": "twin", "router:external": True}])


class PickTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.cloud = standard_cloud()

    def test_exact_name_wins_over_the_regex(self):
        self.assertEqual("i-disk", lookup.image(self.cloud, {"name": "vmct-qemu"}).id)
        self.assertEqual("f1", lookup.flavor(self.cloud, {"name": "m1.small"}).id)

    def test_a_regex_matching_several_is_refused_naming_them_and_the_fix(self):
        e = self.assertRaises(lookup.ResourceError, lookup.image, self.cloud,
                              {"regex": "^vmct-qemu"})
        text = str(e)
        self.assertIn("kind.image: '^vmct-qemu' matches 3 images", text)
        for name in ("vmct-qemu (i-disk)", "vmct-qemu-kernel (i-kernel)",
                     "vmct-qemu-ramdisk (i-ramdisk)"):
            self.assertIn(name, text)
        self.assertIn("give its id (kind.image: {id: ...})", text)
        e = self.assertRaises(lookup.ResourceError, lookup.flavor, self.cloud,
                              {"regex": "small"})
        self.assertIn("kind.flavor: 'small' matches 2 flavors: m1.small (f1), "
                      "m1.small-2 (f2)", str(e))

    def test_a_name_used_twice_is_refused(self):
        cloud = FakeCloud(images=[image("a", "same"), image("b", "same")])
        e = self.assertRaises(lookup.ResourceError, lookup.image, cloud, {"name": "same"})
        self.assertIn("name 'same' matches 2 images: same (a), same (b)", str(e))

    def test_nothing_matches_lists_what_there_is(self):
        e = self.assertRaises(lookup.ResourceError, lookup.image, self.cloud,
                              {"name": "nope", "accurate": True})
        self.assertIn("no image named 'nope' (accurate: true)", str(e))
        e = self.assertRaises(lookup.ResourceError, lookup.flavor, self.cloud,
                              {"regex": "^x"})
        self.assertIn("no flavor matches '^x'; the flavors: m1.small (f1)", str(e))
        e = self.assertRaises(lookup.ResourceError, lookup.flavor, self.cloud,
                              {"regex": "("})
        self.assertIn("is not a regular expression", str(e))

    def test_kernel_and_ramdisk_images_cannot_boot(self):
        e = self.assertRaises(lookup.ResourceError, lookup.image, self.cloud,
                              {"regex": "kernel$"})
        self.assertIn("image vmct-qemu-kernel (i-kernel) is a kernel image (aki)", str(e))
        e = self.assertRaises(lookup.ResourceError, lookup.image, self.cloud,
                              {"id": "i-ramdisk"})
        self.assertIn("is a ramdisk image (ari), not a bootable disk", str(e))
        self.assertEqual("i-docker", lookup.image(self.cloud, {"id": "i-docker"}).id)

    def test_an_id_the_cloud_does_not_have_names_the_argument(self):
        e = self.assertRaises(lookup.ResourceError, lookup.image, self.cloud, {"id": "nope"})
        self.assertIn("kind.image: no image with id 'nope'", str(e))

    def test_images_are_listed_once_per_cache(self):
        cache = {}
        for _ in range(3):
            lookup.image(self.cloud, {"name": "vmct-docker"}, cache)
        self.assertEqual([("images.list", {"status": "active"})], self.cloud.calls)


class ExternalNetworkTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.neutron = standard_cloud().neutron()

    def test_by_name_or_id(self):
        self.assertEqual("n-ext", lookup.external_network(self.neutron, "public").id)
        self.assertEqual("n-ext", lookup.external_network(self.neutron, "n-ext").id)
        self.assertEqual("n-a", lookup.external_network(self.neutron, "n-a").id)

    def test_missing_internal_and_ambiguous_networks_are_refused(self):
        e = self.assertRaises(lookup.ResourceError, lookup.external_network, self.neutron,
                              "nope")
        self.assertIn("kind.floating_network: no network 'nope'", str(e))
        self.assertIn("public (n-ext)", str(e))
        e = self.assertRaises(lookup.ResourceError, lookup.external_network, self.neutron,
                              "private")
        self.assertIn("network private (n-int) is not external (router:external is false)",
                      str(e))
        self.assertIn("leave floating_network out", str(e))
        e = self.assertRaises(lookup.ResourceError, lookup.external_network, self.neutron,
                              "twin")
        self.assertIn("name 'twin' matches 2 networks", str(e))
