"""Upload the vmct QEMU guest to Glance (a Python with openstacksdk, admin credentials in the
environment: the AIO's admin-openrc, or OS_CLOUD=devstack-admin in devstack's plugin).

  upload_image.py DIR      DIR holds vmlinuz, initrd.img, disk.qcow2, build-id (qemu_guest.py)

Three public images named in tools/vmct-values: the kernel (aki), the initramfs (ari) and the
guest (qcow2, a small empty disk) whose kernel_id/ramdisk_id make libvirt boot the kernel
directly, and whose img_hv_type=qemu keeps it on libvirt/QEMU computes (ImagePropertiesFilter),
with the other properties of VMCT_QEMU_IMAGE_PROPERTIES. hw_cdrom_bus=scsi
with a virtio-scsi controller: the cloud kernel has no AHCI driver for q35's SATA CD-ROM, which
is where the config drive (SSH key) would otherwise go. Nothing is done when the images of the
same build and kernel command line are already there; any others are replaced.
"""

import os
import sys

import openstack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import vmct_values  # noqa: E402

V = vmct_values.effective_values()
NAMES = (V["VMCT_QEMU_IMAGE"], V["VMCT_QEMU_KERNEL_IMAGE"], V["VMCT_QEMU_RAMDISK_IMAGE"])
PROPERTIES = dict(p.split("=", 1) for p in V["VMCT_QEMU_IMAGE_PROPERTIES"].split())


def main(d):
    with open(os.path.join(d, "build-id")) as f:
        build = f.read().strip()
    # OS_CLOUD (a clouds.yaml entry) or the OS_* variables
    conn = openstack.connect(cloud=os.environ.get("OS_CLOUD") or None)
    img = conn.image
    existing = [i for i in img.images() if i.name in NAMES]
    guest = [i for i in existing if i.name == NAMES[0]]
    # the command line is checked too: a change of it alone must reach Glance
    if (len(guest) == 1 and guest[0].properties.get("vmct_build") == build
            and guest[0].os_command_line == V["VMCT_QEMU_COMMAND_LINE"]
            and guest[0].status == "active"):
        print("[build-qemu-guest] Glance has build %s already" % build)
        return 0
    for i in existing:
        img.delete_image(i)

    def upload(name, fmt, path, **props):
        return img.create_image(
            name=name, filename=os.path.join(d, path), disk_format=fmt,
            container_format=fmt if fmt in ("aki", "ari") else "bare", visibility="public",
            wait=True, vmct_build=build, **props)

    k = upload(NAMES[1], "aki", "vmlinuz")
    r = upload(NAMES[2], "ari", "initrd.img")
    g = upload(NAMES[0], "qcow2", "disk.qcow2", kernel_id=k.id, ramdisk_id=r.id,
               os_command_line=V["VMCT_QEMU_COMMAND_LINE"], **PROPERTIES)
    print("[build-qemu-guest] uploaded build %s: %s %s" % (build, NAMES[0], g.id))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
