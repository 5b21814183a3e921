# shellcheck shell=bash
# nova-compute as a user of its own (sourced by tools/aio/up and down). A compute registered
# with user=NAME (computes.d/20-docker.sh: nova) runs as that user, as packaged compute nodes
# run it: not root, but in the docker group for the engine's socket, which is root-equivalent
# (a member can start a privileged container), and in the OVSDB socket's group (os-vif
# reconfigures Open vSwitch). Its root work on ports goes through oslo.privsep daemons that
# Nova's root helper starts: `sudo nova-rootwrap $S/etc/nova/rootwrap.conf privsep-helper ...`,
# allowed by one sudoers file and the rootwrap filters Nova and the driver ship (the driver's:
# nova-docker/etc/nova/rootwrap.d/docker.filters); each daemon serves a few typed entrypoints.
# The other computes run as root and reach the same rootwrap through the sudo shim
# ($S/bin/sudo, lib/install.sh).
SUDOERS=/etc/sudoers.d/vmct-aio-nova-compute
# what a compute of its own user has on its PATH: the venv's entry points and the system's, not
# the sudo shim of $S/bin (a real sudo must start its privsep daemons)
COMPUTE_USER_PATH=$VENV/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# The driver's rootwrap filters among Nova's ($S/etc/nova/rootwrap.d, copy_rootwrap nova), with
# their config file pattern /etc/... made $S/etc/...: where this cloud keeps nova.conf
install_driver_rootwrap_filters() {
    local f
    for f in "$VMCT_ROOT"/nova-docker/etc/nova/rootwrap.d/*.filters; do
        sed "s#/etc/(?!#$S/etc/(?!#g" "$f" > "$S/etc/nova/rootwrap.d/${f##*/}"
    done
}

# ensure_ovsdb_group: the group of OVSDB's unix socket (lib/infra.sh), whose members may
# reconfigure Open vSwitch
ensure_ovsdb_group() {
    getent group "$VMCT_OVSDB_GROUP" >/dev/null || groupadd --system "$VMCT_OVSDB_GROUP" \
        || die "groupadd $VMCT_OVSDB_GROUP failed"
}

# ensure_compute_user USER: the system user (its group, the docker group for the engine's
# socket, the OVSDB socket's group for os-vif) and the sudoers file that lets it start privsep
# daemons through nova-rootwrap, checked by visudo before use
ensure_compute_user() {
    local u=$1 tmp g
    # /usr/bin/sudo: up's PATH starts with the shim
    if [ ! -x /usr/bin/sudo ] || [ ! -x /usr/sbin/visudo ]; then die "sudo is missing (Debian: sudo)"; fi
    getent group docker >/dev/null || die "no docker group (the docker.io package makes it)"
    ensure_ovsdb_group
    if ! id "$u" >/dev/null 2>&1; then
        log "creating the system user $u (nova-compute as a user of its own)"
        useradd --system --user-group --no-create-home --home-dir "$S/data/$u-home" \
            --shell /usr/sbin/nologin "$u" || die "useradd $u failed"
    fi
    for g in docker "$VMCT_OVSDB_GROUP"; do
        id -nG "$u" | tr ' ' '\n' | grep -qx "$g" || usermod -a -G "$g" "$u"
    done
    tmp=$(mktemp)
    cat > "$tmp" <<SUDO
# tools/aio (lib/users.sh): $u runs nova-compute; Nova's root helper starts privsep daemons
Defaults:$u secure_path="$COMPUTE_USER_PATH"
$u ALL = (root) NOPASSWD: $VENV/bin/nova-rootwrap $S/etc/nova/rootwrap.conf *
SUDO
    visudo -c -q -f "$tmp" || { rm -f "$tmp"; die "the sudoers lines for $u are invalid"; }
    if ! cmp -s "$tmp" "$SUDOERS"; then install -m 0440 "$tmp" "$SUDOERS"; fi
    rm -f "$tmp"
}

# give_compute_files USER NAME: what compute NAME reads (its config files: group USER, mode
# 640, as packages ship nova.conf) and writes (state, instances, locks, its log) to USER
give_compute_files() {
    local u=$1 c=$2
    chgrp "$u" "$S/etc/nova/nova.conf" "$S/etc/nova/compute-$c.conf"
    chmod 640 "$S/etc/nova/nova.conf" "$S/etc/nova/compute-$c.conf"
    touch "$S/logs/nova-compute-$c.log"
    chown "$u:$u" "$S/logs/nova-compute-$c.log"
    chown -R "$u:$u" "$S/data/nova-$c"
}

# prepare_compute_user NAME: COMPUTE_AS = the command prefix that runs compute NAME's
# nova-compute as its user (empty for a root compute), the user and its files made ready;
# setpriv execs, so the pid start_svc records is nova-compute's
COMPUTE_AS=()
prepare_compute_user() {
    local u
    COMPUTE_AS=()
    u=$(compute_var "$1" user)
    [ -n "$u" ] || return 0
    ensure_compute_user "$u"
    give_compute_files "$u" "$1"
    # shellcheck disable=SC2034 # start_compute (lib/services.sh) runs it
    COMPUTE_AS=(env -i "PATH=$COMPUTE_USER_PATH" "HOME=$S/data/$u-home" LANG=C.UTF-8
                setpriv "--reuid=$u" "--regid=$u" --init-groups --)
}

# down --wipe: the sudoers file names paths of the wiped state (the user stays)
remove_compute_sudoers() { rm -f "$SUDOERS"; }
