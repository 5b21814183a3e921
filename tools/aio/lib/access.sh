# The access namespace: the one place from which instance addresses are reachable.
# A veth pair: vmct-acc0 is a port of br-ex (physnet1, where the flat network vmct-net lives),
# vmct-acc1 sits in the namespace with $ACCESS_IP. The root namespace has no address on br-ex
# and no route to $NET_CIDR or $NET_SCALE_CIDR.

# ns_on_br_ex NS HOST_END NS_END [OVS PORT SETTINGS...]: namespace NS with a veth pair, HOST_END
# a port of br-ex (with the settings, e.g. tag=99), NS_END inside NS; both ends up
ns_on_br_ex() {
    local ns=$1 host_end=$2 ns_end=$3
    shift 3
    ip netns list | grep -qw "$ns" || ip netns add "$ns"
    ip -n "$ns" link set lo up
    if ! ip link show "$host_end" >/dev/null 2>&1; then
        ip -n "$ns" link del "$ns_end" 2>/dev/null || true
        ip link add "$host_end" type veth peer name "$ns_end" netns "$ns"
    fi
    ip link set "$host_end" up
    ovs-vsctl --may-exist add-port br-ex "$host_end" "$@"
    ip -n "$ns" link set "$ns_end" up
}

ensure_access_ns() {
    ns_on_br_ex "$ACCESS_NS" vmct-acc0 vmct-acc1
    ip -n "$ACCESS_NS" addr replace "$ACCESS_IP/${NET_CIDR#*/}" dev vmct-acc1
    ip -n "$ACCESS_NS" addr replace "$ACCESS_SCALE_IP/${NET_SCALE_CIDR#*/}" dev vmct-acc1
    write_if_changed "$S/proxy-command" <<<"$AIO_TOOLS/proxy-command %h %p" || true
}

remove_access_ns() {
    ovs-vsctl --if-exists del-port br-ex vmct-acc0 2>/dev/null || true
    ip link del vmct-acc0 2>/dev/null || true
    ip netns list | grep -qw "$ACCESS_NS" && ip netns delete "$ACCESS_NS"
    return 0
}

# The float namespace: the floating-IP access mode's Rally host, on the external network only.
# vmct-flt0 is an access port of br-ex in the external network's VLAN; vmct-flt1 sits in the
# namespace with the external subnet's gateway address. Instances are reached there through
# their floating IPs (the routers' NAT), never at their fixed addresses. tools/aio/api-relay
# makes the APIs (127.0.0.1 in the catalog) answer on the namespace's own loopback.
ensure_float_ns() {
    ns_on_br_ex "$FLOAT_NS" vmct-flt0 vmct-flt1 tag="$VMCT_EXT_VLAN"
    ip -n "$FLOAT_NS" addr replace "$VMCT_EXT_GATEWAY/${VMCT_EXT_CIDR#*/}" dev vmct-flt1
    start_svc api-relay "" "$AIO_TOOLS/api-relay" "$FLOAT_NS" 5000 8774 8778 9292 9696
}

remove_float_ns() {
    stop_svc api-relay
    ovs-vsctl --if-exists del-port br-ex vmct-flt0 2>/dev/null || true
    ip link del vmct-flt0 2>/dev/null || true
    ip netns list | grep -qw "$FLOAT_NS" && ip netns delete "$FLOAT_NS"
    return 0
}
