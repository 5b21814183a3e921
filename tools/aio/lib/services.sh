# OpenStack services (sourced by tools/aio/up). Order matters: keystone and the service users
# must exist before nova-conductor starts (it exits on a 401 from placement).

aio_py() { "$VENV/bin/python" "$AIO_TOOLS/aio.py" "$@"; }

start_keystone() {
    start_uwsgi keystone 5000 keystone.wsgi.api:application "$S/etc/keystone/keystone.conf" \
        --env "OS_KEYSTONE_CONFIG_DIR=$S/etc/keystone"
    wait_for "keystone" 120 http_up http://127.0.0.1:5000/v3 || die "keystone did not answer"
    if [ ! -f "$S/data/.identity_done" ]; then
        aio_py identity || die "identity bootstrap failed"
        touch "$S/data/.identity_done"
    fi
    # A state made before KEYSTONE_HASH_ROUNDS holds the admin's password at bcrypt cost 12:
    # set again (the same password), it is hashed at the configured cost. Only the admin's: a
    # service user's new password would revoke the tokens its running services cached.
    if [ ! -f "$ADMIN_HASHED_STAMP" ]; then
        aio_py admin-password || die "setting the admin password again failed"
        touch "$ADMIN_HASHED_STAMP"
    fi
}

# the largest chunk of a chunked upload Glance takes (bytes): 256 MB
GLANCE_CHUNK_LIMIT=268435456

# nova-api's uwsgi processes (VMCT_AIO_NOVA_API_PROCESSES): each serves 4 requests at once (before
# Nova 33: 4 processes of one thread for each)
NOVA_API_PROCESSES=${VMCT_AIO_NOVA_API_PROCESSES:-1}

start_apis() {
    start_uwsgi placement 8778 placement.wsgi.api:application "$S/etc/placement/placement.conf" \
        --env "OS_PLACEMENT_CONFIG_DIR=$S/etc/placement"
    # uwsgi reads a chunked request body one chunk at a time, each at most chunked-input-limit
    # (1 MB by default: larger chunks were HTTP 500 "unable to receive chunked part"). Clients
    # choose their chunk size (docker-py's image export, which the Docker driver's snapshot
    # streams to Glance, sends 2 MB), so allow large chunks; the image size is not limited.
    start_uwsgi glance-api 9292 glance.wsgi.api:application "$S/etc/glance/glance-api.conf" \
        --env "OS_GLANCE_CONFIG_DIR=$S/etc/glance" --chunked-input-limit "$GLANCE_CHUNK_LIMIT"
    # Nova's API before 33 (2026.1) patches eventlet into the process on import: under uwsgi's
    # threads its requests then stall one another (one server create of two at once waited
    # minutes on 2025.1). Such a Nova runs as devstack runs it: a thread a process, as many
    # processes as the threads it would have had.
    local threads=4 processes=$NOVA_API_PROCESSES
    if [ "$(nova_major)" -lt 33 ]; then threads=1 processes=$((NOVA_API_PROCESSES * 4)); fi
    UWSGI_PROCESSES=$processes UWSGI_THREADS=$threads start_uwsgi nova-api 8774 \
        nova.wsgi.osapi_compute:application "$S/etc/nova/nova.conf" --env "OS_NOVA_CONFIG_DIR=$S/etc/nova"
    # the metadata API the OVN metadata agent proxies to (one process: a guest reads it at boot)
    [ "$AIO_NEUTRON" = ovs ] || UWSGI_THREADS=$threads start_uwsgi nova-metadata "$NOVA_METADATA_PORT" \
        nova.wsgi.metadata:application "$S/etc/nova/nova.conf" --env "OS_NOVA_CONFIG_DIR=$S/etc/nova"
    start_uwsgi neutron-api 9696 neutron.wsgi.api:application "$NEUTRON_CFGS" \
        --env "OS_NEUTRON_CONFIG_DIR=$S/etc/neutron" \
        --env "OS_NEUTRON_CONFIG_FILES=neutron.conf;plugins/ml2/ml2_conf.ini"
}

neutron_args() { local f; for f in $NEUTRON_CFGS "$@"; do printf -- '--config-file\n%s\n' "$f"; done; }

start_neutron_agents() {
    local nargs SVC_RESTART_BG=1; mapfile -t nargs < <(neutron_args)
    # the uwsgi API does not serve RPC: periodic workers (and ML2/OVS's rpc-server) are
    # separate processes
    start_svc neutron-periodic-workers "$NEUTRON_CFGS" neutron-periodic-workers "${nargs[@]}" \
        --log-file "$S/logs/neutron-periodic-workers.log"
    "start_neutron_${AIO_NEUTRON}_agents"
}

# ML2/OVN: the maintenance worker (the OVN driver's periodic fixes run only there, not in the
# uwsgi API), the main host's chassis, the metadata agent. No agent speaks RPC.
start_neutron_ovn_agents() {
    local nargs; mapfile -t nargs < <(neutron_args)
    start_svc neutron-ovn-maintenance-worker "$NEUTRON_CFGS" neutron-ovn-maintenance-worker \
        "${nargs[@]}" --log-file "$S/logs/neutron-ovn-maintenance-worker.log"
    start_ovn_chassis main "$AIO_HOST" br-int br-ex 1
    start_svc neutron-ovn-metadata-agent "$NEUTRON_CFGS $S/etc/neutron/neutron_ovn_metadata_agent.ini" \
        neutron-ovn-metadata-agent "${nargs[@]}" --config-file "$S/etc/neutron/neutron_ovn_metadata_agent.ini" \
        --log-file "$S/logs/neutron-ovn-metadata-agent.log"
}

start_neutron_ovs_agents() {
    local nargs; mapfile -t nargs < <(neutron_args)
    start_svc neutron-rpc-server "$NEUTRON_CFGS" neutron-rpc-server "${nargs[@]}" \
        --log-file "$S/logs/neutron-rpc-server.log"
    start_ovs_agent neutron-ovs-agent "$S/etc/neutron/openvswitch_agent.ini"
    start_svc neutron-dhcp-agent "$NEUTRON_CFGS $S/etc/neutron/dhcp_agent.ini" neutron-dhcp-agent \
        --config-file "$S/etc/neutron/neutron.conf" --config-file "$S/etc/neutron/dhcp_agent.ini" \
        --log-file "$S/logs/neutron-dhcp-agent.log"
    start_svc neutron-l3-agent "$NEUTRON_CFGS $S/etc/neutron/l3_agent.ini" neutron-l3-agent \
        --config-file "$S/etc/neutron/neutron.conf" --config-file "$S/etc/neutron/l3_agent.ini" \
        --log-file "$S/logs/neutron-l3-agent.log"
}

# start_ovs_agent NAME INI. Every agent after the first runs under a name of its own
# ($S/bin/q-ovs-HOST, a link to the agent): the iptables_hybrid firewall names its chains after
# the first 16 characters of the program's name (neutron's iptables_manager binary_name), and
# agents sharing one kernel under the same name would overwrite each other's rules.
start_ovs_agent() { # NAME INI
    local prog=neutron-openvswitch-agent
    if [ "$1" != neutron-ovs-agent ]; then
        prog=$S/bin/q-ovs-${1#neutron-ovs-agent-}
        ln -sfn "$VENV/bin/neutron-openvswitch-agent" "$prog"
    fi
    start_svc "$1" "$S/etc/neutron/neutron.conf $2" "$prog" \
        --config-file "$S/etc/neutron/neutron.conf" --config-file "$2" --log-file "$S/logs/$1.log"
}

wait_apis() {
    local p
    for p in 8778 9292 8774 9696; do
        wait_for "API on 127.0.0.1:$p" 120 http_up "http://127.0.0.1:$p/" || die "API on port $p did not answer"
    done
}

start_nova_control() {
    start_svc nova-conductor "$S/etc/nova/nova.conf" nova-conductor \
        --config-file "$S/etc/nova/nova.conf" --log-file "$S/logs/nova-conductor.log"
    start_svc nova-scheduler "$S/etc/nova/nova.conf" nova-scheduler \
        --config-file "$S/etc/nova/nova.conf" --log-file "$S/logs/nova-scheduler.log"
}

# ------------------------------------------------------------------ compute services
# Every file in computes.d/ registers one nova-compute service with
# `register_compute NAME KEY=VALUE...` (NAME goes into COMPUTES, each KEY into compute_NAME_KEY)
# and defines, for that NAME:
#   compute_NAME_host     nova (and neutron binding) host name
#   compute_NAME_az       availability zone (an aggregate of the same name holds the host)
#   compute_NAME_enabled  function: return 0 when this compute can run here
#   compute_NAME_prepare  function: start what the driver needs (e.g. libvirtd)
#   compute_NAME_overlay  function: print the nova.conf overlay (loaded after nova.conf)
#   compute_NAME_kind, _image, _flavor, _about   the Rally instance kind it serves
#                         (tools/aio/write-task-args: instance_kinds.KIND and kinds[])
# and optionally:
#   compute_NAME_debs     Debian packages it needs (installed by up with the others)
#   compute_NAME_pip      local source tree pip-installed into the AIO venv (the driver)
#   compute_NAME_user     the user its nova-compute runs as (lib/users.sh; default root)
#   compute_NAME_images   function: build and upload its images (up without --no-images)
#   compute_NAME_down     function WIPE: clean up after nova-compute stopped (tools/aio/down)
#   compute_NAME_status   function: extra lines for tools/aio/status
# A compute whose host differs from $AIO_HOST gets its own OVS agent with its own integration
# and physical bridges; the physical bridge is patched to br-ex so all hosts share physnet1.
COMPUTES=()

register_compute() { # NAME KEY=VALUE...
    local name=$1 pair
    shift
    COMPUTES+=("$name")
    for pair in "$@"; do
        printf -v "compute_${name}_${pair%%=*}" '%s' "${pair#*=}"
    done
}

# Capacity of the real computes (QEMU, Docker): each holds at least $AIO_CAPACITY servers of
# the AIO's flavor at once (VMCT_AIO_CAPACITY, default 32: the top level of lifecycle.yaml's
# sweep; task-args.yaml's capacity says what each kind holds, read from placement). Nova's
# initial VCPU allocation ratio is 4.0: a compute on 2 CPUs would hold 8 servers of 1 VCPU.
# aio_cpu_allocation_ratio is the smallest whole ratio that holds $AIO_CAPACITY, never below
# Nova's 4.0: max(4, ceil(capacity x flavor VCPUs / online CPUs)); 16.0 on 2 CPUs.
AIO_CAPACITY=${VMCT_AIO_CAPACITY:-32}
aio_cpu_allocation_ratio() {
    local cpus need ratio
    cpus=$(getconf _NPROCESSORS_ONLN)
    need=$((AIO_CAPACITY * VMCT_FLAVOR_VCPUS))
    ratio=$(((need + cpus - 1) / cpus))
    [ "$ratio" -ge 4 ] || ratio=4
    echo "$ratio.0"
}

# drop_instance_ports BRIDGE: after its nova-compute stopped (down), the instance ports the
# nova-docker package's drivers plugged into BRIDGE (tap..., or a hybrid plug's qvo... with its
# qvb... and qbr...) and any veth whose peer end (vns...) is still in the root namespace: the
# Docker driver's never moved, the floor driver's all (a pair dies with a netns).
drop_instance_ports() {
    local p
    if pidfile_alive ovsdb-server; then
        for p in $(ovs-vsctl --timeout=5 list-ports "$1" 2>/dev/null | grep -E '^(tap|qvo)'); do
            ovs-vsctl --timeout=5 --if-exists del-port "$1" "$p"
            # a hybrid plug's (iptables_hybrid): its veth pair and Linux bridge
            if [ "${p:0:3}" = qvo ]; then
                ip link del "qvb${p:3}" 2>/dev/null || true
                ip link del "qbr${p:3}" 2>/dev/null || true
            fi
        done
    fi
    for p in $(ip -o link show type veth | awk -F': ' '{print $2}' | cut -d@ -f1 | grep '^vns'); do
        ip link del "$p" 2>/dev/null
    done
}

load_computes() {
    local f
    for f in "$AIO_TOOLS"/computes.d/*.sh; do
        # shellcheck disable=SC1090
        . "$f"
    done
}
# compute_index NAME: 2 for the first in computes.d/, 3 for the next... (1 is the main host)
compute_index() { local i; for i in "${!COMPUTES[@]}"; do [ "${COMPUTES[$i]}" = "$1" ] && echo $((i + 2)); done; }
compute_var() { local v="compute_$1_$2"; echo "${!v:-}"; }
enabled_computes() { local c; for c in "${COMPUTES[@]}"; do "compute_${c}_enabled" && echo "$c"; done; }
has_hook() { declare -F "compute_$1_$2" >/dev/null; }
compute_debs() { local c; for c in $(enabled_computes); do compute_var "$c" debs; done; }

# pip_source_hash DIR: content hash of a source tree (what pip would install from it)
pip_source_hash() {
    (cd "$1" && find . -type f \( -name '*.py' -o -name '*.toml' -o -name '*.cfg' \) \
        -not -path './.venv/*' -not -path './build/*' -not -path './tests/*' -not -path '*.egg-info/*' \
        | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
}

# The computes' drivers (compute_NAME_pip) into the AIO venv, again whenever their source changed,
# through the tree's tools/install-driver (the devstack plugin's too): pip with the driver's
# dependencies and the AIO constraints, the installed nova (wheel or editable) pinned, then a
# check that nova still imports and loads the driver.
install_compute_pip() {
    local c src stamp
    for c in $(enabled_computes); do
        src=$(compute_var "$c" pip)
        [ -n "$src" ] || continue
        stamp=$(pip_source_hash "$src")
        # one stamp per source: the Docker and the fake compute share nova-docker/
        [ "$(cat "$VENV/.vmct-stamp-${src##*/}" 2>/dev/null)" = "$stamp" ] && continue
        log "install $src into $VENV (tools/install-driver)"
        "$src/tools/install-driver" --python "$VENV/bin/python" \
            --constraints "$AIO_CONSTRAINTS" --quiet >>"$S/logs/pip.log" 2>&1 \
            || die "$src/tools/install-driver failed, see $S/logs/pip.log"
        echo "$stamp" > "$VENV/.vmct-stamp-${src##*/}"
    done
}

write_compute_configs() {
    local c i=0 host
    for c in $(enabled_computes); do
        i=$((i + 1))
        host=$(compute_var "$c" host)
        mkdir -p "$S/data/nova-$c/instances" "$S/data/nova-$c/locks"
        { "compute_${c}_overlay"
          cat <<EOF
[DEFAULT]
host = $host
state_path = $S/data/nova-$c
instances_path = $S/data/nova-$c/instances
[oslo_concurrency]
lock_path = $S/data/nova-$c/locks
EOF
        } | write_if_changed "$S/etc/nova/compute-$c.conf" || true
        if [ "$host" != "$AIO_HOST" ] && [ "$AIO_NEUTRON" = ovs ]; then
            write_ovs_agent_conf "$S/etc/neutron/openvswitch_agent-$c.ini" "$host" "br-int-$c" "br-ex-$c" $((6633 + i))
        fi
    done
}

start_computes() {
    local c host SVC_RESTART_BG=1
    for c in "${COMPUTES[@]}"; do   # switched off since it ran (e.g. VMCT_AIO_DOCKER=0)
        "compute_${c}_enabled" || ! pidfile_alive "nova-compute-$c" || {
            log "nova-compute-$c is disabled: stopping it"
            stop_svc "nova-compute-$c"; stop_svc "neutron-ovs-agent-$c"; stop_svc "ovn-controller-$c"; }
    done
    for c in $(enabled_computes); do start_compute "$c"; done
}

# start_compute NAME: what it needs (its prepare hook, its OVS agent or OVN chassis), then
# nova-compute-NAME unless it runs (tools/aio/compute starts one compute again after a fault
# test killed it)
start_compute() {
    local c=$1 host
    host=$(compute_var "$c" host)
    "compute_${c}_prepare"
    if [ "$host" != "$AIO_HOST" ]; then
        ovs-vsctl --may-exist add-br "br-ex-$c" -- set bridge "br-ex-$c" datapath_type=netdev \
            -- --may-exist add-port br-ex "patch-ex-$c" -- set interface "patch-ex-$c" type=patch options:peer="patch-$c-ex" \
            -- --may-exist add-port "br-ex-$c" "patch-$c-ex" -- set interface "patch-$c-ex" type=patch options:peer="patch-ex-$c"
        if [ "$AIO_NEUTRON" = ovn ]; then
            start_ovn_chassis "$c" "$host" "br-int-$c" "br-ex-$c" "$(compute_index "$c")"
        else
            start_ovs_agent "neutron-ovs-agent-$c" "$S/etc/neutron/openvswitch_agent-$c.ini"
        fi
    fi
    prepare_compute_user "$c"
    start_svc "nova-compute-$c" "$S/etc/nova/nova.conf $S/etc/nova/compute-$c.conf" \
        "${COMPUTE_AS[@]}" "$VENV/bin/nova-compute" \
        --config-file "$S/etc/nova/nova.conf" --config-file "$S/etc/nova/compute-$c.conf" \
        --log-file "$S/logs/nova-compute-$c.log"
}

# Wait for each compute service to report up (matched by --host: two rows otherwise) since its
# process started (pids/*.pid's time: a restarted compute has then pushed its inventory, e.g. a
# new allocation ratio, to placement) with its Neutron agent (OVS agent or OVN chassis), map
# new hosts into cell1, put each host into its AZ aggregate. One aio.py process per step (an
# openstacksdk start costs about a second).
agent_logs() { if [ "$AIO_NEUTRON" = ovn ]; then echo "ovn-controller-*.log"; else echo "neutron-ovs-agent*.log"; fi; }
register_computes() {
    local c hosts=() zones=() started=() mapped h
    for c in $(enabled_computes); do
        hosts+=("$(compute_var "$c" host)")
        started+=("$(compute_var "$c" host)@$(stat -c %Y "$S/pids/nova-compute-$c.pid")")
        zones+=("$(compute_var "$c" az)=$(compute_var "$c" host)=$(compute_var "$c" trait)")
    done
    aio_py wait-computes "$AIO_NEUTRON" 300 "${started[@]}" \
        || die "compute services not up, see $S/logs/nova-compute-*.log and $(agent_logs)"
    mapped=$(mysql_root -N -e "SELECT host FROM nova_api.host_mappings" 2>/dev/null || true)
    for h in "${hosts[@]}"; do
        if ! grep -qxF "$h" <<<"$mapped"; then
            nova-manage --config-file "$S/etc/nova/nova.conf" cell_v2 discover_hosts >>"$S/logs/dbinit.log" 2>&1
            break
        fi
    done
    aio_py zones 120 "$AIO_DOCKER_PROJECTS" "${zones[@]}" \
        || die "hypervisors not in placement, see $S/logs/nova-compute-*.log"
}

compute_images() {
    local c
    for c in $(enabled_computes); do
        if has_hook "$c" images; then "compute_${c}_images"; fi
    done
}
