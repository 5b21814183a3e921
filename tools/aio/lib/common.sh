# Shared helpers for tools/aio (sourced, not executed).
# State lives in $VMCT_AIO_DIR (default /var/tmp/vmct-aio):
#   venv/ etc/ data/ logs/ pids/ bin/ images/ secrets.env admin-openrc task-args.yaml rally/
AIO_TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VMCT_ROOT=${VMCT_ROOT:-$(cd "$AIO_TOOLS/../.." && pwd)}
export VMCT_AIO_DIR=${VMCT_AIO_DIR:-/var/tmp/vmct-aio}
S=$VMCT_AIO_DIR
VENV=$S/venv
AIO_HOST=vmct-aio                  # neutron host (ML2/OVS: DHCP and L3 agents; ML2/OVN: gateway chassis)
ACCESS_NS=vmct-access              # where instances' fixed addresses are reachable from
FLOAT_NS=vmct-float                # where floating IPs are (the external network's gateway)
MEMBER_USER=vmct-member            # user and project of the no-admin access mode (member-openrc)
# Neutron's backend (VMCT_AIO_NEUTRON): "ovn" by default, ML2/OVN (Debian's OVN, an
# ovn-controller per host, native DHCP and routing, the OVN metadata agent), Neutron's own
# default since 2023 and what most clouds deployed since run; or "ovs", ML2/OVS with its agents
# (DHCP, L3, an OVS agent per host). A state keeps the backend its databases were made with
# (up refuses another, lib/install.sh), and the tools that act on a running state follow it.
NEUTRON_BACKEND_FILE=$S/data/.neutron_backend
# state_backend: the backend of the state's databases, empty when there are none (a state made
# before the backend was recorded ran ML2/OVS)
state_backend() {
    if [ -f "$NEUTRON_BACKEND_FILE" ]; then cat "$NEUTRON_BACKEND_FILE"
    elif [ -f "$S/data/.db_initialized" ]; then echo ovs; fi
}
AIO_NEUTRON=${VMCT_AIO_NEUTRON:-$(state_backend)}
AIO_NEUTRON=${AIO_NEUTRON:-ovn}
case $AIO_NEUTRON in
    ovs|ovn) ;;
    *) echo "VMCT_AIO_NEUTRON=$AIO_NEUTRON: use ovs (ML2/OVS) or ovn (ML2/OVN)" >&2
       exit 2 ;;
esac
# Neutron's security group firewall under ML2/OVS (lib/configs.sh): openvswitch or
# iptables_hybrid, the two the e2e stage runs (not noop: a cloud that enforces nothing is not
# one the samples should meet). ML2/OVN enforces security groups with its own ACLs.
AIO_FIREWALL=${VMCT_AIO_FIREWALL:-openvswitch}
case $AIO_FIREWALL in
    openvswitch|iptables_hybrid) ;;
    *) echo "VMCT_AIO_FIREWALL=$AIO_FIREWALL: use openvswitch or iptables_hybrid" >&2
       exit 2 ;;
esac
if [ "$AIO_NEUTRON" = ovn ] && [ -n "${VMCT_AIO_FIREWALL:-}" ]; then
    echo "VMCT_AIO_FIREWALL applies to ML2/OVS only: unset it with VMCT_AIO_NEUTRON=ovn" >&2
    exit 2
fi
# Docker hosts scoped to projects (VMCT_AIO_DOCKER_PROJECTS, names, e.g. "admin vmct-member"):
# the Docker hosts' aggregates take only those projects' servers (Nova's
# AggregateMultiTenancyIsolation, filter_tenant_id); every other project is kept off them, even
# with an image that asks for the Docker trait. Rally's per-task users are such other projects:
# the docker kind then runs only with existing users (the member access mode, Rally env
# vmct-member). Unset (the default): trait isolation only, any project may boot a Docker image.
AIO_DOCKER_PROJECTS=${VMCT_AIO_DOCKER_PROJECTS:-}
# names shared with devstack and the task-args writer (flavor, network, zones, images)
# shellcheck source=tools/vmct-values
. "$VMCT_ROOT/tools/vmct-values"
NET_NAME=$VMCT_NET_NAME            # shared flat provider network for instances
NET_CIDR=$VMCT_NET_CIDR
NET_SCALE_CIDR=$VMCT_NET_SCALE_CIDR
ACCESS_IP=10.77.0.2                # outside the Neutron allocation pool (.100-.250)
ACCESS_SCALE_IP=10.77.4.2          # outside the scale subnet's pool (10.77.4.10-10.77.7.250)
LIBVIRT_URI=qemu:///system
export PATH=$S/bin:$VENV/bin:/usr/local/sbin:/usr/sbin:/sbin:$PATH
export PYTHONWARNINGS="ignore::DeprecationWarning"
export OS_CLOUD=                   # never pick up a user's clouds.yaml entry by accident

_now_ms() { local t=${EPOCHREALTIME/./}; echo $(( t / 1000 )); }
export _T0_MS=${_T0_MS:-$(_now_ms)}
log() {
    local d=$(( $(_now_ms) - _T0_MS ))
    printf '[aio %s +%d.%ds] %s\n' "$(date +%T)" $((d / 1000)) $((d % 1000 / 100)) "$*"
}
die() { log "ERROR: $*" >&2; exit 1; }

# wait_for DESCRIPTION TIMEOUT_S COMMAND...: poll every 0.5 s
wait_for() {
    local what=$1 timeout=$2; shift 2
    local end=$(( $(date +%s) + timeout ))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$end" ] || { log "timeout ($timeout s) waiting for $what"; return 1; }
        sleep 0.5
    done
}
http_up() { curl -s -o /dev/null --max-time 2 "$1"; }

# close_inherited_fds (tools/lib/fds.sh)
# shellcheck source=tools/lib/fds.sh
. "$VMCT_ROOT/tools/lib/fds.sh"
# pid_alive PID: running, not a zombie (a zombie answers kill -0 until its parent reaps it,
# so a stopped service would look up and a stop would wait 10 s on it)
pid_alive() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null || return 1
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }   # past "PID (COMM) ": COMM may hold spaces and parentheses
    [ "${stat%% *}" != Z ]
}
pidfile_alive() { [ -f "$S/pids/$1.pid" ] && pid_alive "$(cat "$S/pids/$1.pid")"; }
# forget_dead_pidfiles: the pidfiles of processes that are gone (a reboot, a kill, a state
# copied from another machine) removed with their hashes. Services whose start records a pid
# only when they start it (epmd, a dockerd found running) would otherwise keep a dead one,
# and everything that asks whether the cloud is up (tests/e2e) would say it is not.
forget_dead_pidfiles() {
    local f pid
    for f in "$S"/pids/*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        pid_alive "$pid" && continue
        log "$(basename "$f" .pid) (pid ${pid:-none}) is not running: its pidfile is dropped"
        rm -f "$f" "${f%.pid}.hash"
    done
}

# stop_pid PID: SIGTERM, SIGKILL after 10 s (eventlet services sometimes ignore TERM and
# keep their sockets, e.g. the OVS agent's 127.0.0.1:6633 OpenFlow listener).
stop_pid() {
    local p=$1 i
    pid_alive "$p" || return 0
    kill "$p" 2>/dev/null || return 0
    for i in $(seq 1 20); do pid_alive "$p" || return 0; sleep 0.5; done
    log "pid $p ignored SIGTERM for 10 s: SIGKILL"
    kill -9 "$p" 2>/dev/null || true
}
stop_svc() {
    local f=$S/pids/$1.pid
    [ -f "$f" ] && stop_pid "$(cat "$f")"
    rm -f "$f" "$S/pids/$1.hash"
}

# write_if_changed FILE < content: returns 0 when the file was (re)written
write_if_changed() {
    local f=$1 tmp
    tmp=$(mktemp "$f.XXXX")
    cat > "$tmp"
    if [ -f "$f" ] && cmp -s "$tmp" "$f"; then rm -f "$tmp"; return 1; fi
    mv "$tmp" "$f"; chmod 640 "$f"; return 0
}

# start_svc NAME "CONFIG FILES" CMD...: starts CMD in the background (own session, logs in
# logs/NAME.out) unless a process recorded for NAME is alive and its config files are unchanged
# since it was started; a changed config restarts it. With SVC_RESTART_BG=1 (the Neutron agents
# and the computes: nothing polls them right after) that restart runs in the background, and
# wait_restarts waits for all of them: Neutron's agents ignore SIGTERM and are killed after
# 10 s, so ML2/OVS's firewall switch restarted seven of them one after another (72 s).
start_svc() {
    local name=$1 cfgs=$2; shift 2
    local hash
    hash=$( { echo "$*"; for f in $cfgs; do cat "$f"; done; } | sha256sum | cut -c1-16)
    if pidfile_alive "$name"; then
        [ "$(cat "$S/pids/$name.hash" 2>/dev/null)" = "$hash" ] && return 0
        log "$name: configuration changed, restarting"
        STARTED+=("$name")
        if [ "${SVC_RESTART_BG:-0}" = 1 ]; then
            { stop_svc "$name"; launch_svc "$name" "$hash" "$@"; } &
            RESTARTS+=($!)
            return 0
        fi
        stop_svc "$name"
    else
        STARTED+=("$name")
    fi
    launch_svc "$name" "$hash" "$@"
}
STARTED=() RESTARTS=()
# launch_svc NAME HASH CMD...: CMD in its own session, its pid and configuration hash recorded
launch_svc() {
    local name=$1 hash=$2; shift 2
    setsid "$@" >>"$S/logs/$name.out" 2>&1 < /dev/null 9>&- &
    echo $! > "$S/pids/$name.pid"
    echo "$hash" > "$S/pids/$name.hash"
}
wait_restarts() {
    local p
    for p in "${RESTARTS[@]}"; do wait "$p"; done
    RESTARTS=()
}

# start_uwsgi NAME PORT MODULE "CONFIG FILES" [extra uwsgi args]: one WSGI API on 127.0.0.1,
# UWSGI_PROCESSES processes (default 1) of UWSGI_THREADS threads (default 4) each.
# "Connection: close": keystoneauth otherwise reuses sockets that uwsgi's http-socket resets.
# --listen 1024: with uwsgi's 100 the scale sweep's 128 servers at once filled nova-api's
# accept queue ("listen queue ... full"); the kernel then drops the SYNs, and a client's
# request waits for its SYN to be sent again, 1 s then 3 s later: seconds of noise in a
# phase's end. Queued instead, requests wait their turn.
start_uwsgi() {
    local name=$1 port=$2 mod=$3 cfgs=$4; shift 4
    start_svc "$name" "$cfgs" "$VENV/bin/uwsgi" --http-socket "127.0.0.1:$port" --module "$mod" \
        --listen 1024 \
        --virtualenv "$VENV" --master --processes "${UWSGI_PROCESSES:-1}" --threads "${UWSGI_THREADS:-4}" \
        --enable-threads --die-on-term \
        --lazy-apps --buffer-size 65535 --add-header "Connection: close" --need-app \
        --disable-logging "$@"
}

load_secrets() {
    [ -f "$S/secrets.env" ] || return 1
    # shellcheck disable=SC1091
    set -a; . "$S/secrets.env"; set +a
}
admin_env() {
    load_secrets || die "no $S/secrets.env: run tools/aio/up first"
    # shellcheck disable=SC1091
    . "$S/admin-openrc"
}
