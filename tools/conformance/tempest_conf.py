"""tempest.conf for the all-in-one cloud's Docker compute (tools/conformance/tempest).

usage:
  tempest_conf.py write --out FILE --image NAME --flavor NAME --alt-flavor NAME --network NAME
  tempest_conf.py delete-flavor NAME

Credentials come from the environment of $VMCT_AIO_DIR/admin-openrc (OS_AUTH_URL,
OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, OS_*_DOMAIN_NAME, OS_REGION_NAME). ``write``
looks up the image, the flavor and the network by name, creates the second flavor
(tempest's flavor_ref_alt: the same size under another name, for the list-filter tests)
when it is missing, and writes the file; ``delete-flavor`` removes that flavor again.

Instances land on the Docker compute because image_ref (and image_ref_alt, the same image)
is the Docker workload image: its img_hv_type=docker keeps it off the libvirt host
(ImagePropertiesFilter). The feature flags below say what the Docker driver does
(nova-docker/README.md, "What it does") and what this cloud has; each flag that turns
tests off names the reason, which tools/conformance/expected.yaml repeats for the skips.

Runs with the tempest venv's Python: keystoneauth1 (a tempest dependency) is all it needs.
"""

import argparse
import configparser
import io
import os
import sys

# [compute-feature-enabled] for the Docker compute driver: flag -> (value, why)
DOCKER_FEATURES = {
    "resize": (False, "one compute host per kind, and the driver refuses resize/migration"),
    "cold_migration": (False, "one compute host per kind; the driver refuses migration"),
    "live_migration": (False, "one compute host per kind; the driver refuses live migration"),
    "shelve": (True, "shelve = snapshot (docker commit + save) + destroy; unshelve boots it"),
    "shelve_migrate": (False, "one compute host per kind"),
    "pause": (True, "docker pause (cgroup freezer)"),
    "suspend": (True, "docker pause as well; Nova reports SUSPENDED"),
    "rescue": (True, "a rescue container with the instance's root file system mounted"),
    "stable_rescue": (False, "no block devices to keep stable (needs volumes / device buses)"),
    "console_output": (True, "the container's stdout and stderr since its current boot"),
    "vnc_console": (False, "no VNC: the driver has no graphical console, the cloud no proxy"),
    "spice_console": (False, "no SPICE console"),
    "serial_console": (False, "no serial console proxy"),
    "interface_attach": (False, "supports_attach_interface is false: Nova's API answers 400"),
    "snapshot": (True, "docker commit + docker save, uploaded to Glance"),
    "change_password": (False, "set_admin_password is not implemented (no guest agent)"),
    "personality": (False, "file injection (personality) is not implemented"),
    "metadata_service": (False, "the cloud runs no metadata service"),
    "config_drive": (False, "the driver injects the key and hostname itself: no config drive"),
    "attach_encrypted_volume": (False, "no Cinder in the cloud"),
    "swap_volume": (False, "no Cinder in the cloud"),
    "volume_multiattach": (False, "no Cinder in the cloud"),
    "ide_bus": (False, "containers have no disk buses"),
    "hostname_fqdn_sanitization": (True, "Nova's API sanitizes FQDN server names into "
                                         "hostnames (the test needs validation too)"),
    "disk_config": (True, "OS-DCF:diskConfig is stored by Nova's API; the driver has "
                          "no partitions to resize"),
}

SERVICES = {"nova": True, "neutron": True, "glance": True, "cinder": False, "swift": False}


def sections(values):
    """{section: {option: value}} of tempest.conf for ``values`` (ids, credentials, paths)."""
    features = {name: str(value).lower() for name, (value, _) in DOCKER_FEATURES.items()}
    return {
        "DEFAULT": {"log_file": values["log_file"], "debug": "false"},
        "auth": {
            "use_dynamic_credentials": "true",
            # the shared instance network (fixed_network_name): no network, subnet and router
            # per test class, nothing reachable from outside the cloud
            "create_isolated_networks": "false",
            "admin_username": values["admin_username"],
            "admin_password": values["admin_password"],
            "admin_project_name": values["admin_project_name"],
            "admin_domain_name": values["admin_domain_name"],
            "default_credentials_domain_name": values["admin_domain_name"],
        },
        "identity": {
            "uri_v3": values["auth_url"], "auth_version": "v3",
            "region": values["region"], "v3_endpoint_type": "public",
        },
        "identity-feature-enabled": {"api_v2": "false", "api_v3": "true"},
        "compute": {
            "image_ref": values["image_id"], "image_ref_alt": values["image_id"],
            "flavor_ref": values["flavor_id"], "flavor_ref_alt": values["alt_flavor_id"],
            "fixed_network_name": values["network"],
            "region": values["region"], "endpoint_type": "publicURL",
            "build_timeout": "300", "min_compute_nodes": "1",
            "max_microversion": "latest",
        },
        "compute-feature-enabled": features,
        "image": {"region": values["region"]},
        "image-feature-enabled": {"api_v2": "true"},
        "network": {
            "region": values["region"], "project_networks_reachable": "false",
            "public_network_id": "", "floating_network_name": "",
        },
        "network-feature-enabled": {"floating_ips": "false", "ipv6": "false",
                                    "port_security": "true"},
        # instances are reachable only from the cloud's access namespace, not from tempest
        "validation": {"run_validation": "false"},
        "service_available": {k: str(v).lower() for k, v in SERVICES.items()},
    }


def render(values):
    parser = configparser.RawConfigParser()
    parser.optionxform = str
    for section, options in sections(values).items():
        if section != "DEFAULT":
            parser.add_section(section)
        for key, value in options.items():
            parser.set(section, key, value)
    out = io.StringIO()
    out.write("# written by tools/conformance/tempest_conf.py for the vmct all-in-one cloud\n")
    parser.write(out)
    return out.getvalue()


class Cloud:
    """The few API calls the configuration needs, with the admin's keystone session."""

    def __init__(self, env=os.environ):
        from keystoneauth1 import session
        from keystoneauth1.identity import v3
        auth = v3.Password(auth_url=env["OS_AUTH_URL"], username=env["OS_USERNAME"],
                           password=env["OS_PASSWORD"], project_name=env["OS_PROJECT_NAME"],
                           user_domain_name=env.get("OS_USER_DOMAIN_NAME", "Default"),
                           project_domain_name=env.get("OS_PROJECT_DOMAIN_NAME", "Default"))
        self.session = session.Session(auth=auth)
        self.region = env.get("OS_REGION_NAME", "RegionOne")

    def _get(self, service, path):
        return self.session.get(path, endpoint_filter={
            "service_type": service, "interface": "public", "region_name": self.region}).json()

    def image_id(self, name):
        images = [i for i in self._get("image", "/v2/images?name=%s" % name)["images"]
                  if i["status"] == "active"]
        if len(images) != 1:
            raise SystemExit("expected one active image %r, found %d" % (name, len(images)))
        return images[0]["id"]

    def flavor(self, name):
        for flavor in self._get("compute", "/flavors/detail?is_public=None")["flavors"]:
            if flavor["name"] == name:
                return flavor
        return None

    def network_exists(self, name):
        return bool(self._get("network", "/v2.0/networks?name=%s" % name)["networks"])

    def ensure_flavor(self, name, like):
        flavor = self.flavor(name)
        if flavor is None:
            body = {"flavor": {"name": name, "ram": like["ram"], "vcpus": like["vcpus"],
                               "disk": like["disk"], "os-flavor-access:is_public": True}}
            flavor = self.session.post("/flavors", json=body, endpoint_filter={
                "service_type": "compute", "interface": "public",
                "region_name": self.region}).json()["flavor"]
        return flavor

    def delete_flavor(self, name):
        flavor = self.flavor(name)
        if flavor is not None:
            self.session.delete("/flavors/%s" % flavor["id"], endpoint_filter={
                "service_type": "compute", "interface": "public",
                "region_name": self.region})
        return flavor is not None


def write(args, env=os.environ, cloud=None):
    cloud = cloud or Cloud(env)
    flavor = cloud.flavor(args.flavor)
    if flavor is None:
        raise SystemExit("no flavor %r" % args.flavor)
    if not cloud.network_exists(args.network):
        raise SystemExit("no network %r" % args.network)
    alt = cloud.ensure_flavor(args.alt_flavor, flavor)
    values = {
        "log_file": os.path.join(os.path.dirname(os.path.abspath(args.out)), "tempest.log"),
        "auth_url": env["OS_AUTH_URL"], "region": env.get("OS_REGION_NAME", "RegionOne"),
        "admin_username": env["OS_USERNAME"], "admin_password": env["OS_PASSWORD"],
        "admin_project_name": env["OS_PROJECT_NAME"],
        "admin_domain_name": env.get("OS_USER_DOMAIN_NAME", "Default"),
        "image_id": cloud.image_id(args.image), "flavor_id": flavor["id"],
        "alt_flavor_id": alt["id"], "network": args.network,
    }
    old_umask = os.umask(0o077)     # it holds the admin password
    try:
        with open(args.out, "w") as f:
            os.fchmod(f.fileno(), 0o600)    # tempest init made it 0644: umask spares it
            f.write(render(values))
    finally:
        os.umask(old_umask)
    print(args.out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    for name in ("out", "image", "flavor", "alt-flavor", "network"):
        w.add_argument("--" + name, required=True)
    d = sub.add_parser("delete-flavor")
    d.add_argument("name")
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args)
    else:
        print("deleted" if Cloud().delete_flavor(args.name) else "absent", args.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
