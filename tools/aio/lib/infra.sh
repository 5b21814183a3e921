# Infrastructure: MariaDB, RabbitMQ, Open vSwitch (userspace), libvirt. Data under $S/data,
# every daemon bound to loopback (or a unix socket), PIDs in $S/pids.

MYSQL_SOCK=$S/run/mysqld.sock
mysql_root() { mysql --socket="$MYSQL_SOCK" -uroot "$@"; }

start_mariadb() {
    mkdir -p "$S/run" "$S/data"
    chown mysql:mysql "$S/run"
    if [ ! -d "$S/data/mysql/mysql" ]; then
        mkdir -p "$S/data/mysql"; chown mysql:mysql "$S/data/mysql"
        mariadb-install-db --user=mysql --datadir="$S/data/mysql" --skip-test-db \
            >"$S/logs/mariadb-install.log" 2>&1 || die "mariadb-install-db failed"
    fi
    start_svc mariadb "" /usr/sbin/mariadbd --user=mysql --datadir="$S/data/mysql" \
        --socket="$MYSQL_SOCK" --pid-file="$S/run/mariadbd.pid" --bind-address=127.0.0.1 --port=3306 \
        --skip-name-resolve --max-connections=1000 --innodb-buffer-pool-size=128M \
        --log-error="$S/logs/mariadb.log"
    wait_for "MariaDB" 60 mysqladmin --socket="$MYSQL_SOCK" ping || die "MariaDB did not start"
}

rabbit_env() {
    export HOME=$S/data/rabbitmq RABBITMQ_NODENAME=rabbit@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
        RABBITMQ_NODE_PORT=5672 RABBITMQ_DIST_PORT=25672 ERL_EPMD_ADDRESS=127.0.0.1 \
        RABBITMQ_MNESIA_BASE=$S/data/rabbitmq/mnesia RABBITMQ_LOG_BASE=$S/logs/rabbitmq \
        RABBITMQ_ENABLED_PLUGINS_FILE=$S/data/rabbitmq/enabled_plugins \
        RABBITMQ_CONFIG_FILE=$S/data/rabbitmq/rabbitmq \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}
rabbitmqctl_() ( rabbit_env; /usr/lib/rabbitmq/bin/rabbitmqctl -n rabbit@localhost "$@" )

start_rabbitmq() {
    mkdir -p "$S/data/rabbitmq" "$S/logs/rabbitmq"
    [ -f "$S/data/rabbitmq/enabled_plugins" ] || echo "[]." > "$S/data/rabbitmq/enabled_plugins"
    [ -f "$S/data/rabbitmq/rabbitmq.conf" ] || echo "listeners.tcp.default = 127.0.0.1:5672" \
        > "$S/data/rabbitmq/rabbitmq.conf"
    local had_epmd=; pgrep -x epmd >/dev/null && had_epmd=1
    ( rabbit_env; start_svc rabbitmq "" /usr/lib/rabbitmq/bin/rabbitmq-server )
    wait_for "RabbitMQ" 120 rabbitmqctl_ await_startup || die "RabbitMQ did not start"
    [ -n "$had_epmd" ] || [ -f "$S/pids/epmd.pid" ] || pgrep -x epmd | head -1 > "$S/pids/epmd.pid"
    if ! rabbitmqctl_ list_users 2>/dev/null | grep -q '^openstack'; then
        rabbitmqctl_ add_user openstack "$RABBIT_PASS" >/dev/null
        rabbitmqctl_ set_permissions openstack ".*" ".*" ".*" >/dev/null
    fi
}

OVS_RUN=$(dirname "$VMCT_OVSDB_SOCKET")
start_ovs() {
    mkdir -p "$OVS_RUN" "$S/data/ovs"
    [ -f "$S/data/ovs/conf.db" ] || ovsdb-tool create "$S/data/ovs/conf.db" /usr/share/openvswitch/vswitch.ovsschema
    if ! pidfile_alive ovsdb-server; then
        ovsdb-server "$S/data/ovs/conf.db" --remote="punix:$VMCT_OVSDB_SOCKET" \
            --pidfile="$S/pids/ovsdb-server.pid" --detach -vconsole:off --log-file="$S/logs/ovsdb-server.log" 9>&-
        ovs-vsctl --no-wait init
    fi
    ovsdb_unix_only
    # userspace TSO => vnet headers on tap/AF_PACKET ports; without it guest TCP gets bad checksums
    ovs-vsctl --no-wait set Open_vSwitch . other_config:userspace-tso-enable=true
    # --monitor, as ovs-ctl starts it: a crash (an error signal) restarts it, and OVN's and the
    # agents' flows come back. Debian 12's OVS 3.1 userspace conntrack can abort under OVN's
    # NAT (floating IPs): "conntrack.c:1063: assertion conn->conn_type ==
    # CT_CONN_TYPE_DEFAULT failed in conn_update_state()" killed it mid-run, and every port
    # plug and packet after it (a CI run, 2026-11-27). The crash stays in its log.
    if ! pidfile_alive ovs-vswitchd; then
        ovs-vswitchd unix:$OVS_RUN/db.sock --pidfile="$S/pids/ovs-vswitchd.pid" --detach --monitor \
            -vconsole:off --log-file="$S/logs/ovs-vswitchd.log" 9>&-
    fi
    wait_for "ovs-vswitchd" 30 ovs-vsctl --timeout=2 show || die "OVS did not start"
    ovs-vsctl --may-exist add-br br-ex -- set bridge br-ex datapath_type=netdev
}

# ovsdb_unix_only: OVSDB reachable on its unix socket only, by root and the socket's group
# (lib/users.sh puts a nova-compute that is not root in it): a TCP remote a state of an older up
# left is removed from the running server, and so is any manager (ovs-vsctl set-manager)
ovsdb_unix_only() {
    local ctl=$OVS_RUN/ovsdb-server.$(cat "$S/pids/ovsdb-server.pid").ctl remote
    for remote in $(ovs-appctl -t "$ctl" ovsdb-server/list-remotes); do
        case $remote in
            punix:*|db:*) ;;
            *) log "OVSDB: removing the remote $remote (unix socket only)"
               ovs-appctl -t "$ctl" ovsdb-server/remove-remote "$remote" ;;
        esac
    done
    ovs-vsctl --no-wait del-manager
    ensure_ovsdb_group
    chgrp "$VMCT_OVSDB_GROUP" "$VMCT_OVSDB_SOCKET" && chmod 0770 "$VMCT_OVSDB_SOCKET" \
        || die "cannot give $VMCT_OVSDB_SOCKET to the group $VMCT_OVSDB_GROUP"
}

start_libvirt() {
    # libvirt probes QEMU as root but re-validates KVM as libvirt-qemu: with /dev/kvm root:root 0600
    # its capability cache flip-flops and every domain define re-probes QEMU (~60 s). Do what udev
    # would: group kvm, mode 660. (QEMU still runs TCG here: virt_type = qemu.)
    if [ -e /dev/kvm ]; then chgrp kvm /dev/kvm && chmod 660 /dev/kvm; fi
    # never let libvirt's NAT network (virbr0, a routed private range) come up
    rm -f /etc/libvirt/qemu/networks/autostart/default.xml
    mkdir -p /var/run/libvirt /etc/libvirt/hooks
    # our qemu hook (see tools/lib/libvirt-hook-qemu); libvirtd reads hooks only when it starts
    if printf '#!/bin/sh\n# installed by vmct tools/aio/up\nVMCT_HOOK_DIR=%s exec %s "$@"\n' \
            "$S" "$AIO_TOOLS/../lib/libvirt-hook-qemu" | write_if_changed /etc/libvirt/hooks/qemu; then
        chmod 755 /etc/libvirt/hooks/qemu
        if pidfile_alive libvirtd; then log "libvirt hook changed: restarting libvirtd"; stop_svc libvirtd; fi
    fi
    if ! pidfile_alive virtlogd; then
        /usr/sbin/virtlogd -d -p "$S/pids/virtlogd.pid" 9>&-
    fi
    if ! pidfile_alive libvirtd; then
        /usr/sbin/libvirtd -d -p "$S/pids/libvirtd.pid" 9>&-
    fi
    wait_for "libvirtd" 60 virsh -c "$LIBVIRT_URI" version || die "libvirtd did not start"
}

# The services' schemas, a function a service. Their databases are independent, so
# sync_schemas runs them side by side: one after another they took about 45 s of a cold up.
sync_keystone() {
    local K=(--config-file "$S/etc/keystone/keystone.conf")
    keystone-manage "${K[@]}" db_sync
    keystone-manage "${K[@]}" fernet_setup --keystone-user root --keystone-group root
    keystone-manage "${K[@]}" credential_setup --keystone-user root --keystone-group root
    keystone-manage "${K[@]}" bootstrap --bootstrap-password "$ADMIN_PASS" \
        --bootstrap-region-id RegionOne --bootstrap-admin-url http://127.0.0.1:5000/v3/ \
        --bootstrap-internal-url http://127.0.0.1:5000/v3/ --bootstrap-public-url http://127.0.0.1:5000/v3/
}
sync_placement() { placement-manage --config-file "$S/etc/placement/placement.conf" db sync; }
sync_glance() { glance-manage --config-file "$S/etc/glance/glance-api.conf" db_sync; }
sync_nova() {
    local N=(--config-file "$S/etc/nova/nova.conf")
    nova-manage "${N[@]}" api_db sync
    nova-manage "${N[@]}" cell_v2 map_cell0
    nova-manage "${N[@]}" cell_v2 create_cell --name=cell1
    nova-manage "${N[@]}" db sync
}
sync_neutron() {
    # shellcheck disable=SC2046,SC2086
    neutron-db-manage $(for f in $NEUTRON_CFGS; do echo --config-file "$f"; done) upgrade head
}
# sync_schemas: every service's sync at once, each logged in $S/logs/dbinit-SERVICE.log, each
# stopping at its first failing command; dies naming every service that failed and its log.
sync_schemas() {
    local services=(keystone placement glance nova neutron) pids=() failed=() i
    for i in "${!services[@]}"; do
        # a subshell of its own, outside any && or ||, so that set -e holds in it
        ( set -e; "sync_${services[$i]}" ) >"$S/logs/dbinit-${services[$i]}.log" 2>&1 &
        pids+=("$!")
    done
    for i in "${!services[@]}"; do
        wait "${pids[$i]}" || failed+=("${services[$i]} ($S/logs/dbinit-${services[$i]}.log)")
    done
    [ ${#failed[@]} -eq 0 ] || die "database init failed: ${failed[*]}"
}

# One-time database creation and schema sync. A marker file records success; without it the
# databases are dropped and recreated (a half-done earlier run leaves nothing behind).
init_databases() {
    [ -f "$S/data/.db_initialized" ] && return 0
    log "creating databases and syncing schemas (about 30 s)"
    local db
    for db in keystone placement glance nova_api nova nova_cell0 neutron; do
        mysql_root -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db"
    done
    mysql_root -e "CREATE USER IF NOT EXISTS 'os'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
                   ALTER USER 'os'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
                   GRANT ALL ON *.* TO 'os'@'127.0.0.1'; FLUSH PRIVILEGES;"
    sync_schemas
    # keystone-manage bootstrap hashed the admin's password with the keystone.conf written before
    echo "$AIO_RELEASE" > "$RELEASE_FILE"
    echo "$AIO_NEUTRON" > "$NEUTRON_BACKEND_FILE"
    touch "$S/data/.db_initialized" "$ADMIN_HASHED_STAMP"
}

# Nova soft-deletes: every server ever booted stays in the cell database (the instance, its
# actions and events, faults...) and in the API database (request spec, mapping) until it is
# archived. A state that ran many scale tasks holds thousands, and its later scale runs got
# slower. On every up, move them to the shadow tables and drop those there (--purge); rc 1
# means rows were archived, 0 none. Housekeeping only: a failure is logged and up goes on.
archive_nova_deleted_rows() {
    local rc=0 out
    out=$(nova-manage --config-file "$S/etc/nova/nova.conf" db archive_deleted_rows \
          --all-cells --until-complete --purge --verbose 2>&1) || rc=$?
    printf '%s\n' "$out" >>"$S/logs/dbinit.log"
    case $rc in
        0) ;;
        1) log "archived and purged Nova's deleted rows: $(archived_summary "$out")" ;;
        *) log "warning: nova-manage db archive_deleted_rows exited $rc, see $S/logs/dbinit.log" ;;
    esac
}
# archived_summary OUTPUT: "12 instances, 345 rows" from archive_deleted_rows' table
archived_summary() {
    printf '%s\n' "$1" | awk -F'|' 'NF == 4 && $3 ~ /^ *[0-9]+ *$/ {
        rows += $3; if ($2 ~ /\.instances *$/) servers += $3 }
        END { printf "%d instances, %d rows", servers, rows }'
}

# ------------------------------------------------------------------ ML2/OVN (VMCT_AIO_NEUTRON=ovn)
OVN_RUN=$S/run/ovn
# (a later --timeout wins)
ovn_nbctl() { ovn-nbctl --db="unix:$OVN_RUN/ovnnb_db.sock" --timeout=60 "$@"; }
ovn_sbctl() { ovn-sbctl --db="unix:$OVN_RUN/ovnsb_db.sock" --timeout=60 "$@"; }

# start_ovn_db NB|SB: one OVN database server (Debian's ovn-central binaries, run as ours:
# its units and ovn-ctl know one instance of each, in /var/run/ovn)
start_ovn_db() {
    local db=${1,,} schema table
    case $1 in NB) schema=OVN_Northbound table=NB_Global ;; SB) schema=OVN_Southbound table=SB_Global ;; esac
    [ -f "$S/data/ovn/ovn${db}_db.db" ] \
        || ovsdb-tool create "$S/data/ovn/ovn${db}_db.db" "/usr/share/ovn/ovn-$db.ovsschema"
    # a server that was killed (an aborted run) leaves its socket, which refuses connections:
    # gone before a new server starts, and the database waited for until it answers
    pidfile_alive "ovn-$db" || rm -f "$OVN_RUN/ovn${db}_db.sock" "$OVN_RUN/ovn${db}_db.ctl"
    start_svc "ovn-$db" "" ovsdb-server "$S/data/ovn/ovn${db}_db.db" \
        --remote="punix:$OVN_RUN/ovn${db}_db.sock" --remote="db:$schema,$table,connections" \
        --unixctl="$OVN_RUN/ovn${db}_db.ctl" -vconsole:off --log-file="$S/logs/ovn-$db.log"
    wait_for "OVN $1 database" 30 ovsdb-client list-dbs "unix:$OVN_RUN/ovn${db}_db.sock" \
        || die "ovn-$db did not start (see $S/logs/ovn-$db.log)"
}

# start_ovn_central: the northbound and southbound databases, on loopback TCP for Neutron (an
# inactivity probe of 60 s, as devstack sets: Neutron's busy IDL clients miss the 5 s default
# on 2 cores and then resync everything), and ovn-northd between them
start_ovn_central() {
    mkdir -p "$S/data/ovn" "$OVN_RUN"
    start_ovn_db NB
    start_ovn_db SB
    ovn_nbctl --no-leader-only init
    ovn_nbctl --inactivity-probe=60000 set-connection "ptcp:${OVN_NB##*:}:127.0.0.1"
    ovn_sbctl --inactivity-probe=60000 set-connection "ptcp:${OVN_SB##*:}:127.0.0.1"
    start_svc ovn-northd "" ovn-northd --ovnnb-db="unix:$OVN_RUN/ovnnb_db.sock" \
        --ovnsb-db="unix:$OVN_RUN/ovnsb_db.sock" --unixctl="$OVN_RUN/ovn-northd.ctl" \
        -vconsole:off --log-file="$S/logs/ovn-northd.log"
    # the metadata agent reads the unsuffixed chassis name and bridge: the main host's
    ovs-vsctl set Open_vSwitch . external_ids:system-id="$AIO_HOST" external_ids:ovn-bridge=br-int \
        external_ids:ovn-remote="$OVN_SB" external_ids:ovn-encap-type=geneve \
        external_ids:ovn-set-local-ip=true external_ids:ovn-remote-probe-interval=60000 \
        external_ids:ovn-openflow-probe-interval=60
}

# start_ovn_chassis NAME HOST INTEGRATION_BRIDGE PHYS_BRIDGE INDEX: an ovn-controller for
# chassis HOST (a Nova host), beside the others on this one ovs-vswitchd (OVN's co-hosted
# controllers, -n: each reads its settings suffixed with its name). Each needs an encap address
# to register (an idle loopback one: tenant networks are VLAN, nothing is tunnelled) and a
# chassis MAC of its own for routers on VLAN networks. Neutron tells Nova the bridge to plug
# into from Chassis_Private's neutron:ovn-bridge (br-int when unset), which only the metadata
# agent writes, and for the main chassis only: the others' is written here.
start_ovn_chassis() {
    local name=$1 host=$2 bridge=$3 phys=$4 n=$5 gw=()
    # routers' gateways and floating IPs go to the main host
    [ "$host" = "$AIO_HOST" ] && gw=("external_ids:ovn-cms-options-$host=enable-chassis-as-gw")
    ovs-vsctl --may-exist add-br "$bridge" -- set bridge "$bridge" datapath_type=netdev \
        fail_mode=secure other-config:disable-in-band=true \
        -- set Open_vSwitch . "external_ids:hostname-$host=$host" \
        "external_ids:ovn-bridge-$host=$bridge" "external_ids:ovn-encap-ip-$host=127.0.1.$n" \
        "external_ids:ovn-bridge-mappings-$host=physnet1:$phys" \
        "external_ids:ovn-chassis-mac-mappings-$host=physnet1:0e:00:00:00:01:$(printf %02x "$n")" \
        "${gw[@]}"
    # its control socket: $OVN_RUN/ovn-controller.PID.ctl (no option names it)
    start_svc "ovn-controller-$name" "" env OVN_RUNDIR="$OVN_RUN" ovn-controller \
        "unix:$OVS_RUN/db.sock" -n "$host" -vconsole:off --log-file="$S/logs/ovn-controller-$name.log"
    wait_for "chassis $host in OVN" 60 ovn_sbctl --timeout=5 get Chassis_Private "$host" name \
        || die "ovn-controller-$name registered no chassis, see $S/logs/ovn-controller-$name.log"
    [ "$bridge" = br-int ] \
        || ovn_sbctl set Chassis_Private "$host" "external_ids:\"neutron:ovn-bridge\"=$bridge"
}
