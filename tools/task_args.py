#!/usr/bin/env python3
"""Write the --task-args-file that every task in samples/tasks takes, from a cloud's facts.

One writer for every path: the all-in-one cloud (tools/aio/write-task-args) and the devstack
plugin (devstack/lib/vmct, vmct_write_task_args) both call it, so both files carry every
argument the samples need.

    task_args.py --out FILE --network-id ID (--proxy-command CMD [--access-namespace NS]
                 | --floating-network NET) [--existing-users]
                 [--kind NAME[,image=I][,flavor=F][,zone=Z][,about=TEXT]]... [--values FILE]
                 [--libvirt-virt-type kvm|qemu] [--capacity-from-cloud]

``--kind kvm`` (the libvirt compute's kind), ``--kind docker`` and ``--kind fake`` take image,
flavor and availability zone from tools/vmct-values (the names the AIO and devstack create);
any other kind names all three. ``fake`` is a compute running Nova's fake driver (servers
without a hypervisor, which nothing can reach): it is written as ``fake_kind`` (what
samples/tasks/scale.yaml boots), never into ``kinds``, which every other sample boots.
The libvirt kind is named for what it is: "kvm" only when the compute's [libvirt] virt_type
is kvm, "qemu-tcg" when QEMU emulates the CPU (--libvirt-virt-type qemu); ``libvirt_kind`` in
the file names it for the samples.
``--capacity-from-cloud`` writes ``capacity: {KIND: N}``: how many servers of the kind's flavor
the compute hosts of its availability zone hold at once, read from Nova and placement with the
credentials of the environment (OS_CLOUD or OS_AUTH_URL...; the admin role: placement), by
the arithmetic of the ``vmct_capacity`` validator (rally_vmct/task/capacity.py).
The network name, SSH user and the soft-reboot fallback come from the values file too; a
VMCT_* variable set in the environment wins over the file (as local.conf does in devstack).
"""

import argparse
import os
import sys

import yaml

import vmct_values

# image and zone of the kinds the shared values file describes
KNOWN_KINDS = {
    "kvm": {"image": "VMCT_QEMU_IMAGE", "zone": "VMCT_KVM_AZ"},
    "qemu-tcg": {"image": "VMCT_QEMU_IMAGE", "zone": "VMCT_KVM_AZ"},
    "docker": {"image": "VMCT_DOCKER_IMAGE", "zone": "VMCT_DOCKER_AZ"},
    "fake": {"image": "VMCT_FAKE_IMAGE", "zone": "VMCT_FAKE_AZ"},
}
# kinds whose servers nothing can reach (Nova's fake driver): the file's fake_kind, not kinds
FAKE_KINDS = frozenset({"fake"})
KIND_FIELDS = ("image", "flavor", "zone")
# [libvirt] virt_type -> the name of the libvirt kind in reports
LIBVIRT_KIND_NAMES = {"kvm": "kvm", "qemu": "qemu-tcg"}
LIBVIRT_KINDS = frozenset(LIBVIRT_KIND_NAMES.values())


def libvirt_kind_name(virt_type):
    """The honest name of the libvirt kind: "qemu-tcg" unless the CPU runs under KVM."""
    if virt_type not in LIBVIRT_KIND_NAMES:
        raise ValueError("--libvirt-virt-type %r: give the libvirt compute's [libvirt] "
                         "virt_type, one of %s" % (virt_type, ", ".join(LIBVIRT_KIND_NAMES)))
    return LIBVIRT_KIND_NAMES[virt_type]


def resolve_libvirt_kind(specs, virt_type):
    """``--kind kvm`` means the libvirt kind: rename it for its virt_type."""
    resolved = []
    for spec in specs:
        name, sep, rest = spec.partition(",")
        if name == "kvm":
            if not virt_type:
                raise ValueError("--kind kvm: say how the libvirt compute runs guests with "
                                 "--libvirt-virt-type kvm|qemu (nova.conf [libvirt] virt_type)")
            name = libvirt_kind_name(virt_type)
        resolved.append(name + sep + rest)
    return resolved


def parse_kind(spec, values):
    """'docker,zone=dz' -> {"name": "docker", "image": ..., "flavor": ..., "zone": "dz"}.

    ``about=`` comes last and takes the rest of the spec, commas included.
    """
    fields, _, about = spec.partition(",about=")
    name, *pairs = fields.split(",")
    kind = {"name": name, "about": about}
    if name in KNOWN_KINDS:
        kind.update({field: values[var] for field, var in KNOWN_KINDS[name].items()})
        kind["flavor"] = values["VMCT_FLAVOR_NAME"]
    for pair in pairs:
        field, sep, value = pair.partition("=")
        if field not in KIND_FIELDS or not sep or not value:
            raise ValueError("--kind %r: %r is not FIELD=VALUE with FIELD one of %s"
                             % (spec, pair, ", ".join(KIND_FIELDS)))
        kind[field] = value
    lacking = [f for f in ("image", "flavor", "zone") if not kind.get(f)]
    if not name or lacking:
        raise ValueError("--kind %r: give %s (e.g. --kind %s,image=IMG,flavor=FLV,zone=AZ); "
                         "only %s have defaults" % (spec, ", ".join(lacking) or "a name",
                                                    name or "NAME", ", ".join(KNOWN_KINDS)))
    return kind


def kind_arg(kind):
    """A kind as the VMCT scenarios' ``kind`` argument takes it (without its SSH user)."""
    return {"name": kind["name"], "image": {"name": kind["image"]},
            "flavor": {"name": kind["flavor"]}, "availability_zone": kind["zone"]}


def task_args(kinds, network_id, proxy_command, access_namespace, values, capacity=None,
              floating_network=None, existing_users=False):
    """The arguments of every sample: both forms of the kinds, network, access, contexts.

    A kind of :data:`FAKE_KINDS` (at most one) becomes ``fake_kind``; ``capacity``
    ({kind name: servers}) is written when given.

    The access modes: by default instances boot on the shared network ``network_id``,
    reached through ``proxy_command``. With ``floating_network`` every kind's servers boot
    on a network of the task's own (the network context, whose router has its gateway on
    that external network) and are reached at a floating IP on it, with no proxy command:
    Rally runs where the floating range is routed. ``existing_users`` is for a Rally env of
    plain project members: no users or quotas context (both need admin).
    """
    ssh_user = values["VMCT_SSH_USER"]
    fake = [k for k in kinds if k["name"] in FAKE_KINDS]
    if len(fake) > 1:
        raise ValueError("--kind: one fake kind at most (%s)" % ", ".join(k["name"] for k in fake))
    kinds = [k for k in kinds if k["name"] not in FAKE_KINDS]
    libvirt = [k["name"] for k in kinds if k["name"] in LIBVIRT_KINDS]
    args = {
        # demo.yaml: kinds by name, and which one is the libvirt compute's
        "libvirt_kind": libvirt[0] if libvirt else None,
        "instance_kinds": {k["name"]: {"image": k["image"], "flavor": k["flavor"],
                                       "availability_zone": k["zone"]} for k in kinds},
        "network": values["VMCT_NET_NAME"],
        "network_id": network_id,
        "ssh_user": ssh_user,
        "proxy_command": proxy_command,
        "access_namespace": access_namespace,
        # lifecycle, reboot, stop-start, benchmark and demo: the VMCT scenarios' kind list
        "kinds": [dict(kind_arg(k), ssh_user=ssh_user) for k in kinds],
        # instances go on the shared network the access namespace reaches (no tenant networks)
        "boot_args": {"nics": [{"net-id": network_id}]},
        "contexts": {"users": {"tenants": 1, "users_per_tenant": 1}, "keypair": {},
                     "allow_ssh": None},
        # libvirt's wait_soft_reboot_seconds, which the Docker driver's timeout equals
        "soft_reboot_fallback_seconds": int(values["VMCT_LIBVIRT_WAIT_SOFT_REBOOT_SECONDS"]),
    }
    if floating_network:
        for kind in args["kinds"]:
            kind["floating_network"] = floating_network
        args.update(proxy_command=None, access_namespace=None, boot_args=None)
        # Rally's network context: a network and a router per tenant, the router's gateway
        # on the first external network it finds
        args["contexts"] = dict(args["contexts"], network={})
    if existing_users:
        args["contexts"] = {k: v for k, v in args["contexts"].items() if k != "users"}
        args["quotas"] = False
    if fake:
        # scale.yaml: the control-plane floor (servers without a hypervisor, probe "none")
        args["fake_kind"] = kind_arg(fake[0])
    if capacity:
        # scale.yaml leaves out the levels above a kind's figure
        args["capacity"] = capacity
    return args


def capacity_module():
    """rally_vmct.task.capacity of this checkout (pure arithmetic: no Rally import)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    from rally_vmct.task import capacity
    return capacity


def find_flavor(flavors, ref):
    """The flavor named (or with the id) ``ref`` among Nova's detailed flavors."""
    found = [f for f in flavors if f["name"] == ref] or [f for f in flavors if f["id"] == ref]
    if not found:
        raise ValueError("no flavor %r in the cloud" % ref)
    return found[0]


def read_capacity(kinds, compute_get, placement_get):
    """{kind name: servers of its flavor the compute hosts of its zone hold at once}.

    Per compute node of the kind's availability zone (every node when it has none),
    placement's inventories give floor((total - reserved) x allocation ratio / size) for
    VCPU, MEMORY_MB and DISK_GB; the smallest counts, summed over the nodes (the
    ``vmct_capacity`` validator's rule, :func:`rally_vmct.task.capacity.host_fit`).
    Nothing in use is subtracted: what the hosts hold, not what is free now. A kind
    whose nodes do not bound it is left out.

    :param compute_get, placement_get: callable(path) -> the API's JSON answer
    """
    capacity = capacity_module()
    zones = compute_get("/os-availability-zone/detail")["availabilityZoneInfo"]
    hypervisors = compute_get("/os-hypervisors/detail")["hypervisors"]
    flavors = compute_get("/flavors/detail?is_public=None")["flavors"]
    providers = {rp["name"]: rp["uuid"]
                 for rp in placement_get("/resource_providers")["resource_providers"]}

    def read(uuid):
        inventories = placement_get("/resource_providers/%s/inventories" % uuid)
        return inventories["inventories"], {}

    holds = {}
    for kind in kinds:
        flavor = find_flavor(flavors, kind["flavor"])
        resources = capacity.flavor_resources(
            flavor["vcpus"], flavor["ram"], flavor["disk"],
            flavor.get("OS-FLV-EXT-DATA:ephemeral", 0), flavor.get("swap") or 0)
        hosts = capacity.zone_hosts(zones, kind["zone"]) if kind.get("zone") else None
        fits = capacity.host_fits(hypervisors, hosts, providers, read, resources)
        if all(fit.count is not None for fit in fits):
            holds[kind["name"]] = sum(fit.count for fit in fits)
    return holds


def cloud_getters():
    """(compute_get, placement_get) with the credentials of the environment (openstacksdk)."""
    import openstack  # only here: the writer runs without openstacksdk otherwise

    conn = openstack.connect()

    def getter(proxy):
        def get(path):
            response = proxy.get(path)
            openstack.exceptions.raise_from_response(response)
            return response.json()
        return get
    return getter(conn.compute), getter(conn.placement)


def cloud_capacity(kinds):
    """:func:`read_capacity` of the environment's cloud; ValueError when it cannot be read."""
    try:
        return read_capacity(kinds, *cloud_getters())
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001 - the SDK's, keystoneauth's, a missing module
        raise ValueError("--capacity-from-cloud: cannot read Nova and placement (%s: %s)"
                         % (type(e).__name__, e)) from None


def render(args, kinds, writer):
    head = ["# generated by %s (tools/task_args.py) for samples/tasks/*.yaml:" % writer,
            "#   rally task start samples/tasks/NAME.yaml --task-args-file THIS_FILE"]
    head += ["# kind %s: %s" % (k["name"], k["about"]) for k in kinds if k.get("about")]
    return "\n".join(head) + "\n" + yaml.safe_dump(args, sort_keys=False, width=100)


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the task-args file to write")
    parser.add_argument("--network-id", required=True, help="id of the instance network")
    parser.add_argument("--proxy-command", default=None,
                        help="SSH ProxyCommand into the instance network (%%h %%p)")
    parser.add_argument("--floating-network", default=None,
                        help="reach instances at floating IPs of this external network (no "
                        "proxy command; each task's own network and router)")
    parser.add_argument("--existing-users", action="store_true",
                        help="for a Rally env of project members: no users or quotas context")
    parser.add_argument("--access-namespace", default=None,
                        help="network namespace the proxy command enters")
    parser.add_argument("--kind", action="append", default=[], metavar="NAME[,FIELD=VALUE]",
                        help="an instance kind (repeat); fields: %s, then about=TEXT"
                        % ", ".join(KIND_FIELDS))
    parser.add_argument("--libvirt-virt-type", default=None, choices=sorted(LIBVIRT_KIND_NAMES),
                        help="the libvirt compute's [libvirt] virt_type: names --kind kvm "
                        "'kvm' or 'qemu-tcg'")
    parser.add_argument("--capacity-from-cloud", action="store_true",
                        help="write capacity: {KIND: N} from Nova and placement (the "
                        "environment's OS_* credentials, admin)")
    parser.add_argument("--values", default=vmct_values.VALUES,
                        help="shared values file (default: %(default)s)")
    parser.add_argument("--writer", default="rally-vmct", help="who writes (for the header)")
    opts = parser.parse_args(argv)
    try:
        if not opts.kind:
            raise ValueError("--kind: give at least one instance kind, e.g. --kind kvm")
        values = vmct_values.effective_values(opts.values)
        specs = resolve_libvirt_kind(opts.kind, opts.libvirt_virt_type)
        kinds = [parse_kind(spec, values) for spec in specs]
        capacity = None
        if opts.capacity_from_cloud:
            capacity = cloud_capacity(kinds)
        if not opts.proxy_command and not opts.floating_network:
            raise ValueError("--proxy-command: say how instances are reached (or give "
                             "--floating-network)")
        args = task_args(kinds, opts.network_id, opts.proxy_command, opts.access_namespace,
                         values, capacity, floating_network=opts.floating_network,
                         existing_users=opts.existing_users)
    except (ValueError, KeyError, OSError) as e:
        parser.exit(2, "task_args.py: %s\n" % e)
    write(opts.out, render(args, kinds, opts.writer))
    print(opts.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
