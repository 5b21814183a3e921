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

if is_service_enabled vmct vmct-docker; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        vmct_check_settings
        if is_service_enabled vmct; then
            echo_summary "Installing rally-vmct"
            install_vmct
        fi
        if is_service_enabled vmct-docker; then
            echo_summary "Installing the Docker engine and compute driver"
            install_vmct_docker
        fi

    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        if vmct_libvirt_compute_here; then
            echo_summary "Configuring the libvirt compute for rally-vmct"
            configure_vmct_compute
        fi
        if is_service_enabled vmct-docker; then
            echo_summary "Configuring the Docker compute ($VMCT_DOCKER_COMPUTE)"
            configure_vmct_docker
        fi

    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        if is_service_enabled vmct-docker; then
            echo_summary "Starting the Docker compute"
            start_vmct_docker
        fi
        if is_service_enabled vmct; then
            echo_summary "Creating rally-vmct images, flavor, network, zones and task args"
            init_vmct
        fi
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
