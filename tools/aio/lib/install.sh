# Debian packages and the pinned OpenStack venv (sourced by tools/aio/up).

AIO_DEBS=(
    mariadb-server rabbitmq-server                    # databases + message bus
    openvswitch-switch                                # OVS userspace datapath (no kernel module)
    libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients qemu-system-x86 qemu-utils
    dnsmasq-base dnsmasq-utils                        # neutron DHCP agent
    genisoimage                                       # nova config drive (ISO 9660)
    iproute2 iptables ipset conntrack ethtool         # neutron agents
    netcat-openbsd curl cpio                          # proxy-command, health checks, images
    libvirt-dev pkg-config gcc            # libvirt-python and uwsgi build from sdist
)
# ML2/OVN: northd and its databases, ovn-controller, the metadata agent's proxy
[ "$AIO_NEUTRON" = ovn ] && AIO_DEBS+=(ovn-central ovn-host haproxy)
# OpenStack services + clients at the versions of one release: VMCT_AIO_RELEASE (default 2026.2)
# names constraints/<release>.txt, the freeze of a venv that ran that release here (one pinned
# set per release; the driver's test venv of that Nova series uses the same file). Nova is
# installed as devstack installs it: editable, from its released source (the sdist of the pinned
# version, unpacked in $S/src); VMCT_AIO_NOVA_INSTALL=wheel installs the wheel instead.
AIO_PIP=(keystone openstack-placement glance neutron python-openstackclient osc-placement
         openstacksdk uwsgi PyMySQL libvirt-python)
NOVA_INSTALL=${VMCT_AIO_NOVA_INSTALL:-editable}
AIO_RELEASE=${VMCT_AIO_RELEASE:-2026.2}
AIO_CONSTRAINTS=$AIO_TOOLS/constraints/$AIO_RELEASE.txt
# the release of a state whose databases exist (written when they are created)
RELEASE_FILE=$S/data/.release

aio_releases() { (cd "$AIO_TOOLS/constraints" && ls -- *.txt | sed 's/\.txt$//' | tr '\n' ' '); }

# check_release: the asked release exists and is the one of the state's databases (a schema
# is migrated forward only, and not across more than one SLURP step: no switch in place)
check_release() {
    local had=
    [ -f "$AIO_CONSTRAINTS" ] \
        || die "VMCT_AIO_RELEASE=$AIO_RELEASE is not a release of the all-in-one cloud; use one of: $(aio_releases)"
    [ -f "$S/data/.db_initialized" ] || return 0
    # a state from before the release was recorded ran 2026.2
    had=$(cat "$RELEASE_FILE" 2>/dev/null || echo 2026.2)
    [ "$had" = "$AIO_RELEASE" ] || die "the cloud in $S runs $had, not VMCT_AIO_RELEASE=$AIO_RELEASE:" \
        "its databases cannot change release. Run tools/aio/down --wipe first (keeps venvs and" \
        "image packages), or give the other release a state dir of its own (VMCT_AIO_DIR)."
}

# check_backend: the asked Neutron backend is the one of the state's databases
# (NEUTRON_BACKEND_FILE, written when they are created: the ports, routers and agents of the
# other one are in them)
check_backend() {
    local had
    had=$(state_backend)
    [ -z "$had" ] || [ "$had" = "$AIO_NEUTRON" ] || die "the cloud in $S runs Neutron with ML2/$had, not" \
        "VMCT_AIO_NEUTRON=$AIO_NEUTRON: its bindings and agents cannot change backend. Run" \
        "tools/aio/down --wipe first, or give the other backend a state dir of its own (VMCT_AIO_DIR)."
}

install_debs() {
    log "Debian packages (tools/vmct-apt; first run about 40 s)"
    # shellcheck disable=SC2046 # word splitting of the computes' package lists is intended
    "$VMCT_ROOT/tools/vmct-apt" install "${AIO_DEBS[@]}" $(compute_debs) >>"$S/logs/apt.log" 2>&1 \
        || { tail -n 5 "$S/logs/apt.log" >&2; die "Debian packages failed, see $S/logs/apt.log"; }
}

# nova_version: the release's Nova pin (31.3.1 for 2025.1); nova_major: its major version
nova_version() { sed -n 's/^nova==//p' "$AIO_CONSTRAINTS"; }
nova_major() { local v; v=$(nova_version); echo "${v%%.*}"; }

# nova_source_dir: where Nova's released source of the pinned version is unpacked
nova_source_dir() { echo "$S/src/nova-$(nova_version)"; }

# nova_source: NOVA_SRC = nova_source_dir, downloaded (sdist) and unpacked when missing
nova_source() {
    local version
    NOVA_SRC=$(nova_source_dir)
    version=${NOVA_SRC##*/nova-}
    [ -f "$NOVA_SRC/PKG-INFO" ] && return 0
    log "nova $version source (sdist) into $S/src"
    "$VENV/bin/pip" download -q --no-deps --no-binary :all: -d "$S/src" "nova==$version" \
        >>"$S/logs/pip.log" 2>&1 || die "pip download nova==$version failed, see $S/logs/pip.log"
    tar -xzf "$S/src/nova-$version.tar.gz" -C "$S/src"
}

# install_venv: the release's venv in $S/venvs/<release>, reached as $S/venv (a link: every
# tool and service names that path); each release keeps its own, switching costs no rebuild
install_venv() {
    local stamp py=${VMCT_AIO_PYTHON:-python3} nova=(nova) real=$S/venvs/$AIO_RELEASE
    stamp=$( { cat "$AIO_CONSTRAINTS"; echo "${AIO_PIP[*]} nova:$NOVA_INSTALL"; } \
        | sha256sum | cut -c1-16)
    # a state from before releases had its venv in $S/venv itself
    [ -L "$VENV" ] || rm -rf "$VENV"
    mkdir -p "$S/venvs"
    ln -sfn "venvs/$AIO_RELEASE" "$VENV"
    [ -x "$real/bin/nova-compute" ] && [ "$(cat "$real/.vmct-stamp" 2>/dev/null)" = "$stamp" ] && return 0
    log "pip install OpenStack $AIO_RELEASE into $real, Nova $NOVA_INSTALL (about 3 min the first time)"
    [ -x "$real/bin/python" ] || "$py" -m venv "$real"
    "$real/bin/pip" install -q -U pip setuptools wheel >"$S/logs/pip.log" 2>&1
    mkdir -p "$S/src"
    cp "$AIO_CONSTRAINTS" "$S/src/constraints-$AIO_RELEASE.txt"
    if [ "$NOVA_INSTALL" = editable ]; then
        nova_source
        nova=(-e "$NOVA_SRC")
        # an editable project cannot be constrained to a version: its source is the pin
        sed -i '/^nova==/d' "$S/src/constraints-$AIO_RELEASE.txt"
    fi
    "$real/bin/pip" install -q -c "$S/src/constraints-$AIO_RELEASE.txt" "${nova[@]}" "${AIO_PIP[@]}" \
        >>"$S/logs/pip.log" 2>&1 || die "pip install failed, see $S/logs/pip.log"
    echo "$stamp" > "$real/.vmct-stamp"
}

# oslo.privsep and rootwrap hard-code "sudo ..."; the services that run as root (all but the
# Docker computes, lib/users.sh) have no need of it, and a real sudo's secure_path would not find
# the venv's entry points. A shim first in their PATH strips options.
install_sudo_shim() {
    mkdir -p "$S/bin"
    write_if_changed "$S/bin/sudo" <<'SHIM' || true
#!/bin/sh
# tools/aio sudo shim: we are root already; drop sudo options, run the command
while [ $# -gt 0 ]; do
    case "$1" in
        -u|-g|-C|-D|-h|-p|-r|-t|-U) shift 2 ;;
        --) shift; break ;;
        -*) shift ;;
        *) break ;;
    esac
done
exec "$@"
SHIM
    chmod 755 "$S/bin/sudo"
}

# Passwords are generated once, kept in the state dir (mode 600), never in the repo.
# secrets.env: one password per service user, the admin's and the project member's (the
# no-admin access mode); a state from before a password existed gets it added
ensure_secrets() {
    local v
    umask 077
    touch "$S/secrets.env"
    for v in ADMIN DB RABBIT KEYSTONE_SVC PLACEMENT GLANCE NOVA NEUTRON MEMBER METADATA; do
        grep -q "^${v}_PASS=" "$S/secrets.env" \
            || echo "${v}_PASS=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')" >> "$S/secrets.env"
    done
    umask 022
}

# openrc FILE USER PASSWORD PROJECT WHAT: a credentials file to source (owner only)
openrc() {
    write_if_changed "$1" <<EOF || true
# source me: $5 of the vmct all-in-one cloud
export OS_AUTH_URL=http://127.0.0.1:5000/v3
export OS_USERNAME=$2
export OS_PASSWORD=$3
export OS_PROJECT_NAME=$4
export OS_USER_DOMAIN_NAME=Default
export OS_PROJECT_DOMAIN_NAME=Default
export OS_IDENTITY_API_VERSION=3
export OS_REGION_NAME=RegionOne
export OS_INTERFACE=public
EOF
    chmod 600 "$1"
}

write_openrc() {
    openrc "$S/admin-openrc" admin "$ADMIN_PASS" admin "admin credentials"
    # a plain member of project vmct-member (aio.py member): a Rally user without admin
    openrc "$S/member-openrc" "$MEMBER_USER" "$MEMBER_PASS" "$MEMBER_USER" \
        "a project member (no admin role)"
}
