# The access namespace: the one place from which instance addresses are reachable.
# A veth pair: vmct-acc0 is a port of br-ex (physnet1, where the flat network vmct-net lives),
# vmct-acc1 sits in the namespace with $ACCESS_IP. The root namespace has no address on br-ex
# and no route to $NET_CIDR or $NET_SCALE_CIDR.

ensure_access_ns() {
    ip netns list | grep -qw "$ACCESS_NS" || ip netns add "$ACCESS_NS"
    ip -n "$ACCESS_NS" link set lo up
    if ! ip link show vmct-acc0 >/dev/null 2>&1; then
        ip -n "$ACCESS_NS" link del vmct-acc1 2>/dev/null || true
        ip link add vmct-acc0 type veth peer name vmct-acc1 netns "$ACCESS_NS"
    fi
    ip link set vmct-acc0 up
    ovs-vsctl --may-exist add-port br-ex vmct-acc0
    ip -n "$ACCESS_NS" addr replace "$ACCESS_IP/${NET_CIDR#*/}" dev vmct-acc1
    ip -n "$ACCESS_NS" addr replace "$ACCESS_SCALE_IP/${NET_SCALE_CIDR#*/}" dev vmct-acc1
    ip -n "$ACCESS_NS" link set vmct-acc1 up
    write_if_changed "$S/proxy-command" <<<"$AIO_TOOLS/proxy-command %h %p" || true
}

remove_access_ns() {
    ovs-vsctl --if-exists del-port br-ex vmct-acc0 2>/dev/null || true
    ip link del vmct-acc0 2>/dev/null || true
    ip netns list | grep -qw "$ACCESS_NS" && ip netns delete "$ACCESS_NS"
    return 0
}
