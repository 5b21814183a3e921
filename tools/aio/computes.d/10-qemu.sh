# shellcheck shell=bash  # registered with register_compute (lib/services.sh)
# nova-compute with the libvirt driver, QEMU in TCG mode (this kind of machine has no usable KVM:
# /dev/kvm only runs special PVM guest kernels). Set VMCT_AIO_VIRT_TYPE=kvm where KVM works.
# its host is the cloud host: it shares the main OVS agent
register_compute qemu host="$AIO_HOST" az="$VMCT_KVM_AZ" kind=kvm \
    about="libvirt compute, QEMU TCG here (no usable KVM on this machine)" \
    image="$VMCT_QEMU_IMAGE" flavor="$VMCT_FLAVOR_NAME"
compute_qemu_enabled() { [ "${VMCT_AIO_QEMU:-1}" = 1 ]; }
compute_qemu_prepare() { start_libvirt; }
compute_qemu_images() { "$VMCT_ROOT/tools/images/build-qemu-guest" --upload; }
# Capacity (lib/services.sh, aio_cpu_allocation_ratio): at least $AIO_CAPACITY vmct.tiny guests
# (1 VCPU, 256 MB, 1 GB). VCPU: ratio 16 on this project's 2-CPU machine, so 32 guests share 2
# cores: a 16th of a core each when all run, and QEMU TCG emulates every instruction, so boots
# at the high levels are slow (that contention is what the timings then show). MEMORY_MB stays
# at ratio 1.0: libvirt reports its NUMA node's memory (11865 MB on that 24 GB machine), minus
# 512 MB reserved = 44 guests of 256 MB; a TCG guest takes about 240 MB RSS, 32 about 7.7 GB.
# DISK_GB stays at 1.0: 251 GB holds 251 (the guests' disks are sparse qcow2 overlays).
compute_qemu_overlay() {
    cat <<EOF
[DEFAULT]
compute_driver = libvirt.LibvirtDriver
# at least $AIO_CAPACITY guests of $VMCT_FLAVOR_VCPUS VCPU on $(getconf _NPROCESSORS_ONLN) CPUs (Nova's initial ratio: 4.0)
cpu_allocation_ratio = $(aio_cpu_allocation_ratio)
vif_plugging_is_fatal = true
vif_plugging_timeout = 120
# the guest reads its SSH key from the config drive (no metadata service in the AIO)
force_config_drive = $VMCT_FORCE_CONFIG_DRIVE
config_drive_format = iso9660
mkisofs_cmd = genisoimage
[libvirt]
virt_type = ${VMCT_AIO_VIRT_TYPE:-qemu}
cpu_mode = none
connection_uri = $LIBVIRT_URI
# soft reboot = ACPI shutdown, then a hard reboot after this many seconds; our guest handles
# ACPI in about a second, so a short timeout only shortens the fallback for guests that do not
wait_soft_reboot_seconds = $VMCT_LIBVIRT_WAIT_SOFT_REBOOT_SECONDS
EOF
}
