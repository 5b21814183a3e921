"""openstacksdk helpers for tools/aio (one process instead of dozens of CLI calls).

Run with the AIO venv python and the admin credentials in the environment (admin-openrc):
  identity                      service project, users, roles, services, endpoints
  admin-password                set the admin's password again (OS_PASSWORD), so Keystone hashes
                                it at its configured cost (revokes the admin's tokens)
  resources                     flavor, shared flat network (+ subnets), the external network
                                for floating IPs: tools/vmct-values
  compute-up HOST               exit 0 when nova-compute on HOST reports up
  agent-alive HOST TYPE         exit 0 when the neutron agent TYPE on HOST is alive
  aggregate AZ HOST             aggregate AZ with availability zone AZ holding HOST
  hypervisor-ready HOST         exit 0 when HOST's hypervisor has a placement provider
  wait-computes BACKEND TIMEOUT HOST[@EPOCH]...   wait until nova-compute and the Neutron
                                agent of every HOST are up (nova-compute reporting after EPOCH,
                                when it started); BACKEND ovs (its OVS agent) or ovn (its
                                chassis' ovn-controller)
  zones TIMEOUT PROJECTS AZ=HOST[=TRAIT]...   aggregate AZ holds HOST (availability zone AZ;
                                with TRAIT, isolated: trait:TRAIT=required, and with PROJECTS
                                (names, space-separated; may be empty) scoped to them:
                                filter_tenant_id), then wait until every HOST's hypervisor
                                has a placement provider
  network-id                    print the id of vmct-net
  member NAME                   project NAME and its user NAME (password MEMBER_PASS) with the
                                member role only: a Rally user without admin
  docker-image NAME ID          exit 0 when Glance has image NAME of the local Docker image ID
  docker-image NAME ID TAR K=V...   replace image(s) NAME by the `docker save` tarball TAR
                                (K=V: container_format, disk_format and image properties)
  image-properties NAME K=V...  image NAME has the properties K=V
  placeholder-image NAME K=V... image NAME (1 MiB of zeros, raw, properties K=V) unless Glance
                                has it (for computes that read no image: the fake driver)
  inventory                     print JSON: servers, ports, keypairs, security groups, images,
                                projects, users, networks, routers, floating IPs, instance
                                containers and OVS VIF ports
                                (for leak checks)
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import time

import openstack

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import vmct_values  # noqa: E402  (tools/vmct_values.py: the names devstack uses too)

VALUES = vmct_values.read_values()
NET_NAME = VALUES["VMCT_NET_NAME"]
NET_CIDR = VALUES["VMCT_NET_CIDR"]
POOL = (VALUES["VMCT_NET_POOL_START"], VALUES["VMCT_NET_POOL_END"])
# (name, cidr, allocation pool): the network's first subnet, then the scale sweep's
SUBNETS = ((NET_NAME + "-subnet", NET_CIDR, POOL),
           (NET_NAME + "-scale-subnet", VALUES["VMCT_NET_SCALE_CIDR"],
            (VALUES["VMCT_NET_SCALE_POOL_START"], VALUES["VMCT_NET_SCALE_POOL_END"])))
FLAVORS = {VALUES["VMCT_FLAVOR_NAME"]: dict(ram=int(VALUES["VMCT_FLAVOR_RAM"]),
                                            vcpus=int(VALUES["VMCT_FLAVOR_VCPUS"]),
                                            disk=int(VALUES["VMCT_FLAVOR_DISK"]))}
SERVICES = (  # name, type, url, service user
    ("placement", "placement", "http://127.0.0.1:8778", "placement"),
    ("glance", "image", "http://127.0.0.1:9292", "glance"),
    ("nova", "compute", "http://127.0.0.1:8774/v2.1", "nova"),
    ("neutron", "network", "http://127.0.0.1:9696", "neutron"),
)


def connect():
    return openstack.connect(
        auth_url=os.environ["OS_AUTH_URL"], username=os.environ["OS_USERNAME"],
        password=os.environ["OS_PASSWORD"], project_name=os.environ["OS_PROJECT_NAME"],
        user_domain_name="Default", project_domain_name="Default",
        region_name="RegionOne")


def identity(conn):
    idn = conn.identity
    svc = idn.find_project("service") or idn.create_project(name="service", domain_id="default")
    roles = {r.name: r for r in idn.roles()}
    for name, typ, url, user in SERVICES:
        password = os.environ["%s_PASS" % user.upper()]
        # never update an existing user's password: that revokes its tokens, and nova-api's
        # cached Neutron admin token then fails (NeutronAdminCredentialConfigurationInvalid)
        u = idn.find_user(user) or idn.create_user(name=user, password=password,
                                                   domain_id="default")
        for r in ("admin", "service"):
            idn.assign_project_role_to_user(svc, u, roles[r])
        s = idn.find_service(name) or idn.create_service(name=name, type=typ)
        have = {e.interface for e in idn.endpoints(service_id=s.id)}
        for itf in ("public", "internal", "admin"):
            if itf not in have:
                idn.create_endpoint(service_id=s.id, interface=itf, url=url, region_id="RegionOne")


def member(conn, name):
    """Project and user ``name``, the user a plain member of the project (no admin role)."""
    idn = conn.identity
    project = idn.find_project(name) or idn.create_project(name=name, domain_id="default")
    # as for the service users: an existing user's password is never updated (tokens revoked)
    user = idn.find_user(name) or idn.create_user(
        name=name, password=os.environ["MEMBER_PASS"], domain_id="default",
        default_project_id=project.id)
    idn.assign_project_role_to_user(project, user, idn.find_role("member", ignore_missing=False))


def resources(conn):
    for name, spec in FLAVORS.items():
        if not conn.compute.find_flavor(name):
            conn.compute.create_flavor(name=name, is_public=True, **spec)
    net = conn.network.find_network(NET_NAME)
    if net is None:
        # flat on physnet1 = untagged on br-ex, where the access namespace has its port;
        # no gateway: guests reach only their own subnet (nothing is routed anywhere)
        net = conn.network.create_network(
            name=NET_NAME, shared=True, provider_network_type="flat",
            provider_physical_network="physnet1")
    have = {subnet.name for subnet in conn.network.subnets(network_id=net.id)}
    for name, cidr, pool in SUBNETS:
        if name not in have:
            conn.network.create_subnet(
                network_id=net.id, name=name, ip_version=4, cidr=cidr, gateway_ip=None,
                enable_dhcp=True, allocation_pools=[{"start": pool[0], "end": pool[1]}])
    external_network(conn)


def external_network(conn):
    """The floating IPs' network: VLAN VMCT_EXT_VLAN on physnet1, router:external.

    Rally's network context gives each task's router its gateway here; the float namespace
    holds the subnet's gateway address, so floating IPs answer there and nowhere else.
    """
    name = VALUES["VMCT_EXT_NET_NAME"]
    net = conn.network.find_network(name)
    if net is None:
        net = conn.network.create_network(
            name=name, is_router_external=True, provider_network_type="vlan",
            provider_physical_network="physnet1",
            provider_segmentation_id=int(VALUES["VMCT_EXT_VLAN"]))
    if not list(conn.network.subnets(network_id=net.id)):
        conn.network.create_subnet(
            network_id=net.id, name=name + "-subnet", ip_version=4,
            cidr=VALUES["VMCT_EXT_CIDR"], gateway_ip=VALUES["VMCT_EXT_GATEWAY"],
            enable_dhcp=False, allocation_pools=[{"start": VALUES["VMCT_EXT_POOL_START"],
                                                  "end": VALUES["VMCT_EXT_POOL_END"]}])


def reported_since(updated_at, since):
    """Did a service whose record says ``updated_at`` (UTC, ISO) report after epoch ``since``?

    Both are whole seconds here: a report in the second ``since`` itself may be the old
    process's, so only a later second counts.
    """
    if since is None:
        return True
    if not updated_at:
        return False
    at = datetime.datetime.fromisoformat(updated_at.rstrip("Z")).replace(
        tzinfo=datetime.timezone.utc)
    return at.timestamp() > since


def compute_up(conn, host, since=None):
    """nova-compute on HOST is up, enabled and, with ``since``, has reported since then.

    A restarted nova-compute pushes its inventory to placement before its first report, so a
    report after its start means placement holds what its new configuration says (e.g. an
    allocation ratio); the old process's last report keeps the service "up" meanwhile.
    """
    return any(s.state == "up" and s.status == "enabled" and reported_since(s.updated_at, since)
               for s in conn.compute.services(binary="nova-compute", host=host))


# the agent that wires a host's ports, by Neutron backend (VMCT_AIO_NEUTRON); Neutron reports
# the chassis of a gateway (the main host under ML2/OVN) under a type of its own
HOST_AGENT_TYPES = {
    "ovs": ("Open vSwitch agent",),
    "ovn": ("OVN Controller agent", "OVN Controller Gateway agent"),
}


def agent_alive(conn, host, *agent_types):
    return any(a.is_alive for a in conn.network.agents(host=host)
               if a.agent_type in agent_types)


def aggregate(conn, az, host, trait="", tenants=""):
    """Aggregate AZ (its availability zone too) holds HOST.

    With TRAIT, it takes only servers whose image or flavor requires TRAIT (metadata
    trait:TRAIT=required, Nova's isolated aggregate filtering), and with TENANTS (project ids,
    comma-separated) only those projects' servers (filter_tenant_id, Nova's
    AggregateMultiTenancyIsolation: every other project is kept off); without, any project's.
    """
    agg = conn.compute.find_aggregate(az)
    if agg is None:
        agg = conn.compute.create_aggregate(name=az, availability_zone=az)
    if host not in (agg.hosts or []):
        conn.compute.add_host_to_aggregate(agg, host)
    metadata = agg.metadata or {}
    if trait and metadata.get("trait:" + trait) != "required":
        conn.compute.set_aggregate_metadata(agg, {"trait:" + trait: "required"})
    if trait and metadata.get(TENANT_KEY) != (tenants or None):
        # None removes the key
        conn.compute.set_aggregate_metadata(agg, {TENANT_KEY: tenants or None})


TENANT_KEY = "filter_tenant_id"


def project_ids(conn, names):
    """The ids of the projects NAMES (space-separated), comma-separated; they must exist."""
    return ",".join(conn.identity.find_project(name, ignore_missing=False).id
                    for name in names.split())


def hypervisor_ready(conn, host):
    # the hypervisor is named after the machine's hostname, the service after nova's `host`.
    # The detail list at the base microversion: from 2.88 on (the SDK's default) nova-api asks
    # every compute for its uptime over RPC, which a compute stopped less than a minute ago
    # (VMCT_AIO_FAKE=0 after it ran; still "up") answers with a 60 s timeout and an HTTP 500.
    response = conn.compute.get("/os-hypervisors/detail")
    openstack.exceptions.raise_from_response(response)
    for h in response.json()["hypervisors"]:
        if (h.get("service") or {}).get("host") == host and h["status"] == "enabled":
            name = h["hypervisor_hostname"]
            return any(True for _ in conn.placement.resource_providers(name=name))
    return False


def docker_image_current(conn, name, local_id):
    images = [i for i in conn.image.images() if i.name == name]
    return (len(images) == 1 and images[0].status == "active"
            and images[0].properties.get("vmct_docker_id") == local_id)


def docker_image_upload(conn, name, local_id, tar, pairs):
    """The tarball as the only image NAME, tagged with the local image id it was saved from."""
    for i in conn.image.images():
        if i.name == name:
            conn.image.delete_image(i)
    attrs = dict(p.split("=", 1) for p in pairs)
    image = conn.image.create_image(
        name=name, filename=tar, container_format=attrs.pop("container_format"),
        disk_format=attrs.pop("disk_format"), visibility="public", wait=True,
        vmct_docker_id=local_id, **attrs)
    print("[aio] uploaded %s (%s) as %s" % (name, local_id[:19], image.id))


def image_properties(conn, name, pairs):
    """Image NAME has the properties K=V (an image uploaded before a property was added)."""
    wanted = dict(p.split("=", 1) for p in pairs)
    for i in conn.image.images():
        changed = {k: v for k, v in wanted.items() if i.properties.get(k) != v}
        if i.name == name and changed:
            conn.image.update_image(i.id, **changed)


PLACEHOLDER_BYTES = 1024 * 1024


def placeholder_image(conn, name, pairs):
    """An active image NAME of :data:`PLACEHOLDER_BYTES` zeros with the properties K=V."""
    if any(i.name == name and i.status == "active" for i in conn.image.images()):
        return
    for i in conn.image.images():
        if i.name == name:
            conn.image.delete_image(i)
    image = conn.image.create_image(
        name=name, data=bytes(PLACEHOLDER_BYTES), container_format="bare", disk_format="raw",
        visibility="public", wait=True, **dict(p.split("=", 1) for p in pairs))
    print("[aio] uploaded %s as %s" % (name, image.id))


def _command_lines(*argv):
    """stdout lines of a host command, [] when the tool is missing or fails."""
    if shutil.which(argv[0]) is None:
        return []
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return []
    return out.stdout.split("\n") if out.returncode == 0 else []


def host_leftovers():
    """Instance containers (nova-*) and OVS ports of instances (external_ids:vm-uuid)."""
    containers = [n for n in _command_lines(
        "docker", "ps", "-a", "--filter", "name=^nova-", "--format", "{{.Names}}") if n]
    vifs = []
    raw = "".join(_command_lines("ovs-vsctl", "--timeout=5", "--format=json",
                                 "--columns=name,external_ids", "list", "Interface"))
    for name, ids in json.loads(raw)["data"] if raw else []:
        ids = dict(ids[1])
        if "vm-uuid" in ids:
            vifs.append(dict(name=name, vm_uuid=ids["vm-uuid"]))
    return {"containers": containers, "vif_ports": vifs}


def wait_all(what, timeout, pending, ready):
    """Poll every 0.5 s until ready(item) for every item; False (and say which) on timeout."""
    pending = list(pending)
    end = time.monotonic() + timeout
    while pending:
        pending = [p for p in pending if not ready(p)]
        if not pending:
            break
        if time.monotonic() > end:
            print("[aio] timeout (%d s) waiting for %s: %s" % (timeout, what, " ".join(pending)),
                  file=sys.stderr)
            return False
        time.sleep(0.5)
    return True


def wait_computes(conn, backend, timeout, specs):
    """HOST[@EPOCH] each: nova-compute up (reporting since EPOCH), then its agent alive."""
    since = {}
    for spec in specs:
        host, _, epoch = spec.partition("@")
        since[host] = float(epoch) if epoch else None
    types = HOST_AGENT_TYPES[backend]
    return (wait_all("nova-compute up", timeout, since,
                     lambda h: compute_up(conn, h, since[h]))
            and wait_all(" or ".join(types) + " alive", timeout, since,
                         lambda h: agent_alive(conn, h, *types)))


def zones(conn, timeout, pairs, tenant_names=""):
    hosts = []
    tenants = project_ids(conn, tenant_names)
    for pair in pairs:
        az, host, trait = (pair.split("=") + [""])[:3]
        aggregate(conn, az, host, trait, tenants)
        hosts.append(host)
    return wait_all("hypervisor in placement", timeout, hosts,
                    lambda h: hypervisor_ready(conn, h))


def inventory(conn):
    return {
        "servers": [dict(id=s.id, name=s.name, status=s.status)
                    for s in conn.compute.servers(all_projects=True)],
        "ports": [dict(id=p.id, name=p.name, device_owner=p.device_owner, device_id=p.device_id,
                       project_id=p.project_id, network_id=p.network_id)
                  for p in conn.network.ports()],
        "keypairs": [k.name for k in conn.compute.keypairs()],
        "security_groups": [dict(id=g.id, name=g.name, project_id=g.project_id)
                            for g in conn.network.security_groups()],
        "images": [dict(id=i.id, name=i.name, owner=i.owner_id) for i in conn.image.images()],
        "projects": [dict(id=p.id, name=p.name) for p in conn.identity.projects()],
        "users": [u.name for u in conn.identity.users()],
        "networks": [dict(id=n.id, name=n.name) for n in conn.network.networks()],
        "routers": [dict(id=r.id, name=r.name, project_id=r.project_id)
                    for r in conn.network.routers()],
        "floating_ips": [dict(id=f.id, address=f.floating_ip_address, port_id=f.port_id,
                              project_id=f.project_id) for f in conn.network.ips()],
        **host_leftovers(),
    }


def main(argv):
    cmd, args = argv[1], argv[2:]
    conn = connect()
    if cmd == "identity":
        identity(conn)
    elif cmd == "admin-password":
        conn.identity.update_user(conn.identity.find_user("admin", ignore_missing=False),
                                  password=os.environ["OS_PASSWORD"])
    elif cmd == "resources":
        resources(conn)
    elif cmd == "compute-up":
        return 0 if compute_up(conn, args[0]) else 1
    elif cmd == "agent-alive":
        return 0 if agent_alive(conn, args[0], args[1]) else 1
    elif cmd == "aggregate":
        aggregate(conn, args[0], args[1])
    elif cmd == "hypervisor-ready":
        return 0 if hypervisor_ready(conn, args[0]) else 1
    elif cmd == "wait-computes":
        return 0 if wait_computes(conn, args[0], int(args[1]), args[2:]) else 1
    elif cmd == "zones":
        return 0 if zones(conn, int(args[0]), args[2:], args[1]) else 1
    elif cmd == "network-id":
        print(conn.network.find_network(NET_NAME).id)
    elif cmd == "member":
        member(conn, args[0])
    elif cmd == "docker-image":
        if len(args) == 2:
            return 0 if docker_image_current(conn, *args) else 1
        docker_image_upload(conn, args[0], args[1], args[2], args[3:])
    elif cmd == "image-properties":
        image_properties(conn, args[0], args[1:])
    elif cmd == "placeholder-image":
        placeholder_image(conn, args[0], args[1:])
    elif cmd == "inventory":
        inv = inventory(conn)
        # names in nova_api.key_pairs (keypairs of every user, also of deleted ones), given by
        # tools/aio/inventory
        inv["keypair_rows"] = args
        json.dump(inv, sys.stdout, indent=1)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
