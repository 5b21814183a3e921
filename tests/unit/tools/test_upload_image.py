"""tools/images/upload_image.py: when Glance already has the guest, and when it is replaced."""

import os
from unittest import mock

import fixtures
import testtools

from tests.unit import tools

upload_mod = tools.load("upload_image", os.path.join(tools.TOOLS, "images", "upload_image.py"))
V = upload_mod.V


class FakeImage(object):
    def __init__(self, name, build, command_line):
        self.name, self.status, self.id = name, "active", name + "-id"
        self.properties = {"vmct_build": build}
        self.os_command_line = command_line


class UploadImageTestCase(testtools.TestCase):

    def run_upload(self, images):
        d = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(d, "build-id"), "w") as f:
            f.write("b1\n")
        proxy = mock.Mock()
        proxy.images.return_value = images
        proxy.create_image.side_effect = lambda name, **kw: FakeImage(name, "b1", None)
        with mock.patch.object(upload_mod.openstack, "connect") as connect:
            connect.return_value.image = proxy
            self.assertEqual(0, upload_mod.main(d))
        return proxy

    def guest_images(self, command_line):
        return [FakeImage(n, "b1", command_line if n == V["VMCT_QEMU_IMAGE"] else None)
                for n in upload_mod.NAMES]

    def test_same_build_and_command_line_is_left_alone(self):
        proxy = self.run_upload(self.guest_images(V["VMCT_QEMU_COMMAND_LINE"]))
        proxy.delete_image.assert_not_called()
        proxy.create_image.assert_not_called()

    def test_a_changed_command_line_replaces_the_images(self):
        proxy = self.run_upload(self.guest_images("console=ttyS0 loglevel=3"))
        self.assertEqual(3, proxy.delete_image.call_count)
        guest = [c for c in proxy.create_image.call_args_list
                 if c.kwargs["name"] == V["VMCT_QEMU_IMAGE"]]
        self.assertEqual(V["VMCT_QEMU_COMMAND_LINE"], guest[0].kwargs["os_command_line"])
