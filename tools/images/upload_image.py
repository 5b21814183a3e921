"""Upload the vmct QEMU guest to Glance (AIO venv python, admin credentials in the environment).

  upload_image.py DIR      DIR holds vmlinuz, initrd.img, disk.qcow2, build-id (qemu_guest.py)

Three public images: vmct-qemu-kernel (aki), vmct-qemu-initrd (ari) and vmct-qemu-guest (qcow2,
a small empty disk) whose kernel_id/ramdisk_id make libvirt boot the kernel directly, and whose
img_hv_type=qemu keeps it on libvirt/QEMU computes (ImagePropertiesFilter). hw_cdrom_bus=scsi
with a virtio-scsi controller: the cloud kernel has no AHCI driver for q35's SATA CD-ROM, which
is where the config drive (SSH key) would otherwise go. Nothing is done when the images of the
same build are already there; images of another build are replaced.
"""

import os
import sys

import openstack

NAMES = ("vmct-qemu-guest", "vmct-qemu-kernel", "vmct-qemu-initrd")


def main(d):
    with open(os.path.join(d, "build-id")) as f:
        build = f.read().strip()
    conn = openstack.connect(
        auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
        password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
        user_domain_name="Default", project_domain_name="Default", region_name="RegionOne")
    img = conn.image
    existing = [i for i in img.images() if i.name in NAMES]
    guest = [i for i in existing if i.name == NAMES[0]]
    if (len(guest) == 1 and guest[0].properties.get("vmct_build") == build
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

    k = upload("vmct-qemu-kernel", "aki", "vmlinuz")
    r = upload("vmct-qemu-initrd", "ari", "initrd.img")
    g = upload("vmct-qemu-guest", "qcow2", "disk.qcow2", kernel_id=k.id, ramdisk_id=r.id,
               os_command_line="console=ttyS0 loglevel=3", img_hv_type="qemu",
               hw_cdrom_bus="scsi", hw_scsi_model="virtio-scsi", os_type="linux")
    print("[build-qemu-guest] uploaded build %s: vmct-qemu-guest %s" % (build, g.id))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
