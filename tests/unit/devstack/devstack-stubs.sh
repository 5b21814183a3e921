#!/bin/bash
# Stand-ins for the devstack functions and the commands devstack/plugin.sh uses (sourced by
# tests/unit/devstack/test_plugin.py). Every call of interest is appended to $STUB_LOG as one
# line of shell-quoted words (Python reads it with shlex.split). Nothing here touches the
# machine: sudo, openstack, docker and friends only record what they were asked to do.
#
#   STUB_LOG      the call log (required)
#   STUB_EXISTS   0: flavor, network, subnet and images already exist; 1 (default): they don't
#   STUB_HOST     what `hostname` prints (default node1)

function stub_record {
    local out
    printf -v out '%q ' "$@"
    echo "$out" >> "$STUB_LOG"
}

# stub_sudo_hook ARGS: tests redefine this to emulate the side effects of a sudo command
function stub_sudo_hook {
    :
}

# Service handling with devstack's semantics (comma-separated ENABLED_SERVICES)
function is_service_enabled {
    local s
    for s in "$@"; do
        [[ ",${ENABLED_SERVICES}," == *",$s,"* ]] && return 0
    done
    return 1
}
function enable_service {
    local s
    for s in "$@"; do
        is_service_enabled "$s" || ENABLED_SERVICES=${ENABLED_SERVICES:+$ENABLED_SERVICES,}$s
    done
}
function disable_service {
    local s
    for s in "$@"; do
        ENABLED_SERVICES=$(echo ",$ENABLED_SERVICES," | sed "s/,$s,/,/g; s/^,//; s/,$//")
    done
}
function trueorfalse {
    local default=$1 testval=${!2:-}
    [[ -z "$testval" ]] && { echo "$default"; return; }
    [[ "0 no No NO false False FALSE" =~ $testval ]] && { echo "False"; return; }
    [[ "1 yes Yes YES true True TRUE" =~ $testval ]] && { echo "True"; return; }
    echo "$default"
}
# devstack's plugin metadata (no-ops there too: only external tools read these lines)
function define_plugin {
    :
}
function plugin_requires {
    :
}
function die {
    shift
    stub_record die "$*"
    echo "die: $*" >&2
    exit 1
}

function echo_summary {
    stub_record echo_summary "$@"
}
function iniset {
    stub_record iniset "$@"
}
function inidelete {
    stub_record inidelete "$@"
}
function setup_develop {
    stub_record setup_develop "$@"
}
function pip_install {
    stub_record pip_install "$@"
}
function install_package {
    stub_record install_package "$@"
}
function is_plugin_enabled {
    [[ ",${DEVSTACK_PLUGINS:-}," =~ ,${1}, ]]
}
function is_package_installed {
    [[ " ${STUB_INSTALLED_PACKAGES:-} " == *" $1 "* ]]
}
function restart_service {
    stub_record restart_service "$@"
}
function add_user_to_group {
    stub_record add_user_to_group "$@"
}
function run_process {
    stub_record run_process "$@"
}
function stop_process {
    stub_record stop_process "$@"
}
function get_python_exec_prefix {
    echo "$NOVA_BIN_DIR"
}
function get_or_create_service {
    stub_record get_or_create_service "$@"; echo "svc-$1"
}
function get_or_create_endpoint {
    stub_record get_or_create_endpoint "$@"; echo "ep-$1"
}
function get_or_create_user {
    stub_record get_or_create_user "$@"; echo "user-$1"
}
function get_or_create_project {
    stub_record get_or_create_project "$@"; echo "project-$1"
}
function get_or_create_role {
    stub_record get_or_create_role "$@"; echo "role-$1"
}

function sudo {
    stub_record sudo "$@"
    stub_sudo_hook "$@"
}
function docker {
    stub_record docker "$@"
}
function hostname {
    echo "${STUB_HOST:-node1}"
}
function sleep {
    :
}

# openstack: records the call, answers the queries the plugin makes
function openstack {
    stub_record openstack "$@"
    local args=" $* " last=${!#} shown
    if [[ "$args" == *" show "* && "$args" == *" -c id "* ]]; then
        shown=${args#* show }
        echo "id-of-${shown%% *}"
    elif [[ "$args" == *" flavor show "* || "$args" == *" network show "* || \
            "$args" == *" image show "* ]]; then
        return "${STUB_EXISTS:-1}"
    elif [[ "$args" == *" subnet list "* ]]; then
        [[ "${STUB_EXISTS:-1}" == 0 ]] && echo "subnet-1"
        return 0
    elif [[ "$args" == *" image create "* && "$args" == *" -c id "* ]]; then
        echo "id-of-$last"
    elif [[ "$args" == *" compute service list "* ]]; then
        echo up
    fi
    return 0
}
