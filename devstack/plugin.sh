#!/bin/bash
# plugin.sh - DevStack plugin of rally-vmct: Rally plugins comparing KVM/QEMU virtual machines,
# Docker containers (both booted through Nova) and bare metal.
#
#   [[local|localrc]]
#   enable_plugin rally-openstack https://opendev.org/openstack/rally-openstack
#   enable_plugin rally-vmct https://opendev.org/x/rally-vmct
#   enable_service vmct-docker            # a Docker nova-compute on this node
#
# See devstack/README.rst, local.conf.example and local.conf.multinode.example.

# Save trace setting
XTRACE=$(set +o | grep xtrace)
set -o xtrace

# shellcheck source=devstack/lib/vmct
source "$(dirname "${BASH_SOURCE[0]}")/lib/vmct"

# vmct_phase SUMMARY FUNCTION CONDITION...: FUNCTION, announced by SUMMARY, when the command
# CONDITION... succeeds
function vmct_phase {
    local summary=$1 fn=$2
    shift 2
    if "$@"; then
        echo_summary "$summary"
        "$fn"
    fi
}

if is_service_enabled vmct vmct-docker; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        vmct_check_settings
        vmct_phase "Installing rally-vmct" install_vmct is_service_enabled vmct
        vmct_phase "Installing the Docker engine and compute driver" install_vmct_docker \
            is_service_enabled vmct-docker

    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        vmct_phase "Putting OVN's br-int on the $OVS_DATAPATH_TYPE datapath" \
            configure_vmct_ovn_datapath vmct_ovn_userspace_datapath
        vmct_phase "Configuring the libvirt compute for rally-vmct" configure_vmct_compute \
            vmct_libvirt_compute_here
        vmct_phase "Configuring the Docker compute ($VMCT_DOCKER_COMPUTE)" configure_vmct_docker \
            is_service_enabled vmct-docker

    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        vmct_phase "Starting the Docker compute" start_vmct_docker is_service_enabled vmct-docker
        vmct_phase "Creating rally-vmct images, flavor, network, zones and task args" init_vmct \
            is_service_enabled vmct
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_vmct_docker
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_vmct
    fi
fi

# Restore xtrace
$XTRACE
