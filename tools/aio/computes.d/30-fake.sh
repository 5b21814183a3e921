# shellcheck shell=bash  # registered with register_compute (lib/services.sh)
# nova-compute with Nova's fake driver (nova.virt.fake.FakeDriverWithoutFakeNodes): servers
# without a hypervisor, so a boot or delete costs what the control plane costs (API, scheduler,
# placement, conductor, the compute manager, Neutron's port binding) and nothing more: the floor
# the other kinds are judged against (samples/tasks/scale.yaml boots it as fake_kind).
# Its own host, so its own OVS agent and integration bridge br-int-fake (patched to br-ex like
# every other host): ML2/OVS binds a port only to a host with a live agent, so its ports get a
# real binding (binding:vif_type ovs) while the driver plugs nothing and waits for no event.
# Inventory: the driver's own, 1000 VCPU (ratio 4.0), 800000 MB, 600000 GB: 3123 vmct.tiny.
# Its image is a 1 MiB placeholder (VMCT_FAKE_IMAGE, img_hv_type=fake: no other host runs it).
# VMCT_AIO_FAKE=0 leaves it out (no process, no fake_kind in task-args.yaml).
register_compute fake host=vmct-aio-fake az="$VMCT_FAKE_AZ" kind=fake \
    about="Nova's fake driver: no hypervisor, nothing to reach (probe none)" \
    image="$VMCT_FAKE_IMAGE" flavor="$VMCT_FLAVOR_NAME"

compute_fake_enabled() { [ "${VMCT_AIO_FAKE:-1}" = 1 ]; }

compute_fake_prepare() { :; }

compute_fake_overlay() {
    cat <<EOF
[DEFAULT]
compute_driver = $VMCT_FAKE_COMPUTE_DRIVER
EOF
}

compute_fake_images() {
    local props
    read -r -a props <<<"$VMCT_FAKE_IMAGE_PROPERTIES"
    aio_py placeholder-image "$VMCT_FAKE_IMAGE" "${props[@]}" \
        || die "upload of $VMCT_FAKE_IMAGE failed"
}
