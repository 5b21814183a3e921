# shellcheck shell=bash  # registered with register_compute (lib/services.sh)
# nova-compute with the Docker driver (nova-docker/, nova.virt.docker.DockerDriver): instances
# are containers of the workload image (sshd + sysbench + netperf). Its own host, so its own OVS
# agent and integration bridge br-int-docker (patched to br-ex like every other host).
# Its nova-compute runs as the user nova (lib/users.sh): in the docker
# group, no root; the driver plugs ports through its privsep daemon, started by nova-rootwrap.
# VMCT_AIO_DOCKER=0 leaves it out (no docker.io, no image, no docker kind in task-args.yaml).
# Names, zone, image properties and the soft reboot timeout: tools/vmct-values (lib/common.sh).
register_compute docker host=vmct-aio-docker az="$VMCT_DOCKER_AZ" kind=docker \
    about="nova-docker driver: containers, the SSH key injected by the driver" \
    image="$VMCT_DOCKER_IMAGE" flavor="$VMCT_FLAVOR_NAME" debs="docker.io debootstrap sudo" \
    pip="$VMCT_ROOT/nova-docker" trait="$VMCT_DOCKER_TRAIT" user=nova
# dockerd when the AIO had to start one (tools/docker/ensure-dockerd state: pidfile, log)
DOCKER_STATE=$S/docker
DOCKER_BRIDGE=br-int-docker        # the integration bridge of its agent (lib/services.sh)

compute_docker_enabled() { [ "${VMCT_AIO_DOCKER:-1}" = 1 ]; }

docker_engine_up() { command -v docker >/dev/null && timeout 10 docker info >/dev/null 2>&1; }

compute_docker_prepare() {
    # 9>&-: dockerd (and containerd) must not inherit up's lock
    VMCT_DOCKER_STATE=$DOCKER_STATE "$VMCT_ROOT/tools/docker/ensure-dockerd" 9>&- \
        || die "no Docker engine (log $DOCKER_STATE/dockerd.log)"
    # a dockerd started for the AIO is listed (status) and stopped (down) with the rest
    if [ -s "$DOCKER_STATE/dockerd.pid" ] && pid_alive "$(cat "$DOCKER_STATE/dockerd.pid")"; then
        cp "$DOCKER_STATE/dockerd.pid" "$S/pids/dockerd.pid"
    fi
}

# Capacity (lib/services.sh, aio_cpu_allocation_ratio): at least $AIO_CAPACITY containers of
# vmct.tiny. VCPU: the same ratio as the QEMU compute's (16 on 2 CPUs; each container's CFS
# quota is its flavor's 1 CPU, so 32 busy containers share 2 cores). MEMORY_MB stays at 1.0:
# Docker reports MemTotal (24105 MB on that 24 GB machine), minus 512 reserved = 92 containers
# of 256 MB (each limited to 256 MB; an idle one takes a few MB). DISK_GB stays at 1.0.
compute_docker_overlay() {
    cat <<EOF
# driver source $(pip_source_hash "$(compute_var docker pip)") (a changed driver restarts this compute)
[DEFAULT]
compute_driver = $VMCT_DOCKER_COMPUTE_DRIVER
# at least $AIO_CAPACITY containers of $VMCT_FLAVOR_VCPUS VCPU on $(getconf _NPROCESSORS_ONLN) CPUs (Nova's initial ratio: 4.0)
cpu_allocation_ratio = $(aio_cpu_allocation_ratio)
vif_plugging_is_fatal = true
vif_plugging_timeout = 120
# Containers stop when the Docker engine restarts (no live-restore); Nova reports them SHUTOFF,
# and unplugs their ports, at its next power-state sync: every 10 s here, not every 600 s
# (tests/e2e/test_faults.py restarts the engine). One docker inspect per instance each time.
sync_power_state_interval = 10
[image_cache]
# The driver's cache pass drops the glance/<id> images no container uses once Glance has deleted
# them (the snapshots the conformance run boots): every 5 min here, not every 40
manager_interval = 300
[docker]
host_attach = ovs
soft_reboot_timeout = $VMCT_DOCKER_SOFT_REBOOT_TIMEOUT
EOF
}

# The workload image in Glance as a `docker save` tarball; nothing is uploaded when Glance holds
# the image of the same local image id (property vmct_docker_id).
compute_docker_images() {
    local id tar=$S/images/docker/vmct-workload.tar props
    id=$("$VMCT_ROOT/tools/images/docker/build" --tag "$VMCT_DOCKER_IMAGE_TAG") \
        || die "tools/images/docker/build failed"
    read -r -a props <<<"$VMCT_DOCKER_IMAGE_PROPERTIES"
    if aio_py docker-image "$VMCT_DOCKER_IMAGE" "$id"; then
        log "Glance has $VMCT_DOCKER_IMAGE of $id already"
        aio_py image-properties "$VMCT_DOCKER_IMAGE" "${props[@]}" \
            || die "setting the properties of $VMCT_DOCKER_IMAGE failed"
        return 0
    fi
    mkdir -p "$(dirname "$tar")"
    docker save -o "$tar.tmp" "$VMCT_DOCKER_IMAGE_TAG" || die "docker save failed"
    mv "$tar.tmp" "$tar"
    aio_py docker-image "$VMCT_DOCKER_IMAGE" "$id" "$tar" \
        "container_format=$VMCT_DOCKER_CONTAINER_FORMAT" "disk_format=$VMCT_DOCKER_DISK_FORMAT" \
        "${props[@]}" || die "upload of $VMCT_DOCKER_IMAGE failed"
    rm -f "$tar"
}

# down: after nova-compute stopped, before OVS stops. No instance container, veth or OVS port
# is left; the dockerd the AIO started is stopped; --wipe also drops the images the driver
# loaded from Glance (glance/<image id>), which a wiped Glance no longer knows.
# The instance containers of a Docker compute (the driver's nova.host label): ids, all of them
# (ps -a) or the running ones; remove_instance_containers removes them
instance_containers() { # COMPUTE [-a]
    docker ps -q "${@:2}" --filter "label=nova.host=$(compute_var "$1" host)"
}
remove_instance_containers() { # COMPUTE
    local c
    docker_engine_up || return 0
    mapfile -t c < <(instance_containers "$1" -a)
    if [ ${#c[@]} -gt 0 ]; then
        log "removing ${#c[@]} instance container(s) of $1"
        docker rm -f -v "${c[@]}" >/dev/null
    fi
}

compute_docker_down() { # WIPE
    local c
    remove_instance_containers docker
    # the second Docker host's (25-docker2.sh) while the engine still answers
    if has_hook docker2 down; then compute_docker2_down "$1"; fi
    if [ "$1" = 1 ] && docker_engine_up; then
        mapfile -t c < <(docker images -q --filter "reference=glance/*" | sort -u)
        [ ${#c[@]} -gt 0 ] && docker rmi -f "${c[@]}" >/dev/null
    fi
    drop_instance_ports "$DOCKER_BRIDGE"
    if [ -s "$DOCKER_STATE/dockerd.pid" ]; then
        VMCT_DOCKER_STATE=$DOCKER_STATE "$VMCT_ROOT/tools/docker/ensure-dockerd" --stop 2>/dev/null
    fi
    rm -f "$S/pids/dockerd.pid"
}

compute_docker_status() {
    docker_engine_up || { echo "docker: engine not answering"; return 1; }
    echo "docker $(docker version --format '{{.Server.Version}}'): $(instance_containers docker \
        | wc -l) instance container(s) running"
}
