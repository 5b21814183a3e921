# shellcheck shell=bash  # registered with register_compute (lib/services.sh)
# nova-compute with the floor driver (nova-docker/nova_docker_vmct/floor.py, compute_driver
# docker.floor.FloorDriver): Nova's fake driver plus the network work every real driver does.
# Servers without a hypervisor, so a boot or delete costs what the control plane costs (API,
# scheduler, placement, conductor, the compute manager, Neutron's port binding and wiring) and
# nothing more: the floor the other kinds are judged against (samples/tasks/scale.yaml boots it
# as fake_kind). Each port is plugged as the Docker driver plugs it (a veth pair, the host end on
# the integration bridge with Neutron's external ids; it stays in the host netns) and the spawn
# waits for network-vif-plugged as libvirt and the Docker driver do. Nova's own fake driver
# (VMCT_FAKE_COMPUTE_DRIVER=fake.FakeDriverWithoutFakeNodes) waits for neither: its servers go
# ACTIVE before Neutron has wired their ports, an optimistic floor.
# Its own host, so its own OVS agent and integration bridge br-int-fake (patched to br-ex like
# every other host): ML2/OVS binds a port only to a host with a live agent.
# Inventory: the fake driver's own, 1000 VCPU (ratio 4.0), 800000 MB, 600000 GB: 3123 vmct.tiny.
# Its image is a 1 MiB placeholder (VMCT_FAKE_IMAGE, img_hv_type=fake: no other host runs it).
# VMCT_AIO_FAKE=0 leaves it out (no process, no fake_kind in task-args.yaml).
register_compute fake host=vmct-aio-fake az="$VMCT_FAKE_AZ" kind=fake \
    about="floor driver (Nova's fake, ports plugged and waited for): no hypervisor, nothing to reach (probe none)" \
    image="$VMCT_FAKE_IMAGE" flavor="$VMCT_FLAVOR_NAME" pip="$VMCT_ROOT/nova-docker"
FAKE_BRIDGE=br-int-fake            # the integration bridge of its agent (lib/services.sh)

compute_fake_enabled() { [ "${VMCT_AIO_FAKE:-1}" = 1 ]; }

compute_fake_prepare() { :; }

# vif_plugging_timeout: the fake kind is the one swept to concurrency 256 (scale.yaml). There a
# wave's ports queue at Neutron's agents (the AIO boots about 0.25 servers a second), and at 120 s
# builds failed "Failed to allocate the network(s)" at 128 (doc/source/results/scale-sweep.rst); a
# build still takes [vmct] build_timeout at most, the time Rally waits.
compute_fake_overlay() {
    cat <<EOF
# driver source $(pip_source_hash "$(compute_var fake pip)") (a changed driver restarts this compute)
[DEFAULT]
compute_driver = $VMCT_FAKE_COMPUTE_DRIVER
vif_plugging_is_fatal = true
vif_plugging_timeout = 900
[docker]
host_attach = ovs
EOF
}

# down: after nova-compute stopped, before OVS stops: no veth or OVS port of its servers is left
compute_fake_down() { drop_instance_ports "$FAKE_BRIDGE"; }

compute_fake_images() {
    local props
    read -r -a props <<<"$VMCT_FAKE_IMAGE_PROPERTIES"
    aio_py placeholder-image "$VMCT_FAKE_IMAGE" "${props[@]}" \
        || die "upload of $VMCT_FAKE_IMAGE failed"
}
