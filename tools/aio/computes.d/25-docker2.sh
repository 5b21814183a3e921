# shellcheck shell=bash  # registered with register_compute (lib/services.sh)
# A second nova-compute with the Docker driver, on the same Docker engine as the first
# (20-docker.sh), as host vmct-aio-docker-2 in its own zone ($VMCT_DOCKER2_AZ): a second
# compute host of the Docker kind, so a netperf peer can be placed on the instance's host or
# on another (benchmark.yaml's peer_placement: same_host, different_host; the e2e stage runs
# both). Its own OVS agent and integration bridge br-int-docker2. No kind of its own (kind=""):
# the demo's docker kind names the first host's zone, so only a kind without a zone lands here.
# Each compute sees only its own containers (the driver's nova.host label).
# VMCT_AIO_DOCKER2=0 leaves it out; it needs the Docker compute (VMCT_AIO_DOCKER=1).
register_compute docker2 host=vmct-aio-docker-2 az="$VMCT_DOCKER2_AZ" kind="" \
    about="a second host of the Docker kind (netperf peer placement)" \
    pip="$VMCT_ROOT/nova-docker" trait="$VMCT_DOCKER_TRAIT" user=nova
DOCKER2_BRIDGE=br-int-docker2

compute_docker2_enabled() { compute_docker_enabled && [ "${VMCT_AIO_DOCKER2:-1}" = 1 ]; }
compute_docker2_prepare() { compute_docker_prepare; }
compute_docker2_overlay() { compute_docker_overlay; }

# down: its containers and ports (the engine and the images are the first Docker compute's)
compute_docker2_down() { remove_instance_containers docker2; drop_instance_ports "$DOCKER2_BRIDGE"; }

compute_docker2_status() {
    docker_engine_up || { echo "docker2: engine not answering"; return 1; }
    echo "docker2: $(instance_containers docker2 | wc -l) instance container(s) running"
}
