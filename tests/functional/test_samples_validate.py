"""``rally task validate`` (the real CLI) on every sample task, against a fake cloud.

Validation has three stages: syntax (argument schemas and our syntax
validators), platform (credentials present) and semantic (the cloud answers,
Nova is in the catalog, the kind's image and flavor exist and fit). The
semantic stage needs a cloud, so the test serves a tiny fake OpenStack on a
loopback port: Keystone v3 (token + catalog), Nova flavors, limits, default quotas,
availability zones and hypervisors, Glance images and placement's resource
providers, seeded with the images, flavors and zones the example args files name
(one compute host per zone). Two Rally envs ``existing@openstack`` point at it: one
with the admin credential and a user (the samples' default: their ``quotas``
context needs admin), one with a plain user only.

Each sample is validated with every args file in ``samples/tasks/args`` whose
first comment line names it (``# Task arguments for samples/tasks/<name>.yaml`` or
``samples/tasks/{a,b}.yaml``), and with the file the all-in-one cloud and devstack's
plugin generate (tools/task_args.py, the one writer both call). Bad arguments must be rejected
with the argument's name.
"""

from concurrent import futures
import glob
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import testtools
import yaml

from tests.functional import rally_home

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = os.path.join(ROOT, "samples", "tasks")
ARGS = os.path.join(SAMPLES, "args")
VALID = "Input Task is valid :)"
# Every sample is also validated with the arguments the all-in-one cloud and devstack's plugin
# write (the one writer, tools/task_args.py), plus the bare-metal baseline tools/native-target
# prints (demo.yaml, native.yaml).
TASK_ARGS = os.path.join(ROOT, "tools", "task_args.py")
NET_ID = "4528a7f8-5207-4117-9ffa-f6846284804c"
NATIVE_HOST = {"host": "127.0.0.1", "port": 22822, "user": "root", "key_file": "/k/id_ed25519"}
NATIVE = {
    "native": {"kind": "native", "host": NATIVE_HOST,
               "netperf_peer": {"host": "127.0.0.1", "control_port": 22865,
                                "data_port": 22866, "listen": "127.0.0.1", "ssh": NATIVE_HOST}},
    "native_hosts": [NATIVE_HOST],
}
NATIVE["netperf_peer"] = NATIVE["native"]["netperf_peer"]   # native.yaml's form
# the fake cloud's compute hosts: one per availability zone, each holding HOLDS servers of a
# 1-VCPU flavor, but the one of SMALL_ZONE (SMALL_HOLDS)
HOLDS = 1000
FAKE_ZONE, SMALL_ZONE, SMALL_HOLDS = "fake", "small", 40
# images no args file names: (name, disk and container format)
KERNEL_AND_RAMDISK = (("vmct-qemu-kernel", "aki"), ("vmct-qemu-ramdisk", "ari"))
# the fake cloud's Neutron networks: (name, router:external)
NETWORKS = (("public", True), ("private", False))
FAKE_KIND = {"name": "fake", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"},
             "availability_zone": FAKE_ZONE}


def write_generated_args(path):
    """tools/task_args.py's file for a cloud with both kinds, with the native baseline."""
    subprocess.run([sys.executable, TASK_ARGS, "--out", path, "--network-id", NET_ID,
                    "--proxy-command", "tools/aio/proxy-command %h %p",
                    "--access-namespace", "vmct-access", "--kind", "kvm", "--kind", "docker",
                    "--libvirt-virt-type", "qemu"],
                   check=True, capture_output=True)
    with open(path) as f:
        args = yaml.safe_load(f)
    args.update(NATIVE)
    with open(path, "w") as f:
        yaml.safe_dump(args, f)


def sample_args():
    """{sample path: [args file paths]} for every sample task."""
    pairs = {path: [] for path in sorted(glob.glob(os.path.join(SAMPLES, "*.yaml")))}
    for args_file in sorted(glob.glob(os.path.join(ARGS, "*.yaml"))):
        with open(args_file) as f:
            first = f.readline()
        header = first if first.startswith("#") else ""
        for match in re.finditer(r"samples/tasks/(\{[^}]*\}|[\w.-]+?)\.yaml", header):
            names = match.group(1).strip("{}").split(",")
            for name in names:
                path = os.path.join(SAMPLES, name.strip() + ".yaml")
                if path in pairs and args_file not in pairs[path]:
                    pairs[path].append(args_file)
    return pairs


def resource_names(args_files):
    """Image, flavor and availability zone names the args files refer to (regexes literal)."""
    images, flavors, zones = {"cirros"}, {"m1.tiny"}, {"nova", FAKE_ZONE, SMALL_ZONE}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("image", "flavor") and isinstance(value, dict):
                    name = value.get("name") or value.get("regex", "").strip("^$")
                    if re.fullmatch(r"[\w.-]+", name or ""):
                        (images if key == "image" else flavors).add(name)
                if key == "availability_zone" and isinstance(value, str):
                    zones.add(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    for path in args_files:
        with open(path) as f:
            walk(yaml.safe_load(f))
    return sorted(images), sorted(flavors), sorted(zones)


class FakeOpenStack(http.server.ThreadingHTTPServer):
    """Keystone v3, Nova, Glance images and placement; enough for Rally's validators.

    One compute host per availability zone, ``<zone>-1``, holding ``holds[zone]`` servers
    of the 1 VCPU / 1024 MB / 10 GB flavors (HOLDS unless set); Nova's default quotas and
    the users' limits are Nova's own defaults (10 instances, 20 cores, 50 GB of RAM).
    """

    daemon_threads = True

    def __init__(self, images, flavors, zones):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.images = [{"id": "00000000-0000-0000-0000-%012d" % i, "name": name,
                        "size": 1024, "min_ram": 0, "min_disk": 0, "status": "active",
                        "visibility": "public", "disk_format": "qcow2",
                        "container_format": "bare"} for i, name in enumerate(images)]
        # a disk image with its kernel and ramdisk, as tools/images uploads them
        self.images += [{"id": "11111111-0000-0000-0000-%012d" % i, "name": name,
                         "size": 1024, "min_ram": 0, "min_disk": 0, "status": "active",
                         "visibility": "public", "disk_format": fmt, "container_format": fmt}
                        for i, (name, fmt) in enumerate(KERNEL_AND_RAMDISK)]
        self.flavors = [{"id": str(i + 1), "name": name, "ram": 1024, "disk": 10, "vcpus": 1,
                         "swap": "", "OS-FLV-EXT-DATA:ephemeral": 0, "links": []}
                        for i, name in enumerate(flavors)]
        self.zones = zones
        # Neutron: the external network the args files' floating_network names, and one
        # that is not external
        self.networks = [{"id": "5a0c7f4e-0000-4000-8000-%012d" % i, "name": name,
                          "router:external": external, "status": "ACTIVE", "subnets": []}
                         for i, (name, external) in enumerate(NETWORKS)]
        self.holds = {SMALL_ZONE: SMALL_HOLDS}
        self.quota_set = {"instances": 10, "cores": 20, "ram": 51200, "key_pairs": 100}
        self.requests = []
        self.url = "http://127.0.0.1:%d" % self.server_address[1]

    def limits(self):
        used = {"totalInstancesUsed": 0, "totalCoresUsed": 0, "totalRAMUsed": 0}
        return {"limits": {"rate": [], "absolute": dict(
            used, maxTotalInstances=self.quota_set["instances"],
            maxTotalCores=self.quota_set["cores"], maxTotalRAMSize=self.quota_set["ram"])}}

    def hypervisors(self):
        return [{"id": i + 1, "hypervisor_hostname": zone + "-1", "state": "up",
                 "status": "enabled", "service": {"host": zone + "-1", "id": i + 1}}
                for i, zone in enumerate(self.zones)]

    def inventories(self, zone):
        holds = self.holds.get(zone, HOLDS)
        return {rc: {"total": total, "reserved": 0, "allocation_ratio": 1.0, "min_unit": 1,
                     "max_unit": total, "step_size": 1}
                for rc, total in (("VCPU", holds), ("MEMORY_MB", 1024 * holds),
                                  ("DISK_GB", 10 * holds))}

    def placement(self, path):
        """Placement's answer to GET ``path`` (below /placement), or None."""
        if path == "/resource_providers":
            return {"resource_providers": [{"uuid": "rp-" + zone, "name": zone + "-1",
                                            "generation": 1} for zone in self.zones]}
        match = re.fullmatch(r"/resource_providers/rp-(.+)/(inventories|usages)", path)
        if not match or match.group(1) not in self.zones:
            return None
        if match.group(2) == "usages":
            return {"usages": {}, "resource_provider_generation": 1}
        return {"inventories": self.inventories(match.group(1)),
                "resource_provider_generation": 1}


class _Handler(http.server.BaseHTTPRequestHandler):

    def log_message(self, fmt, *args):
        self.server.requests.append("%s %s" % (self.command, self.path))

    def reply(self, code, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def not_found(self, what):
        self.reply(404, {"itemNotFound": {"code": 404, "message": "%s not found" % what}})

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        url = self.server.url
        if path == "/identity/v3":
            return self.reply(200, {"version": {
                "id": "v3.14", "status": "stable", "media-types": [],
                "links": [{"rel": "self", "href": url + "/identity/v3/"}]}})
        if path == "/compute/v2.1/flavors/detail":
            return self.reply(200, {"flavors": self.server.flavors})
        if path == "/compute/v2.1/limits":
            return self.reply(200, self.server.limits())
        if re.fullmatch(r"/compute/v2.1/os-quota-sets/[^/]+/defaults", path):
            return self.reply(200, {"quota_set": dict(self.server.quota_set, id="p1")})
        if path == "/compute/v2.1/os-availability-zone/detail":
            return self.reply(200, {"availabilityZoneInfo": [
                {"zoneName": zone, "zoneState": {"available": True},
                 "hosts": {zone + "-1": {"nova-compute": {"available": True, "active": True}}}}
                for zone in self.server.zones]})
        if path == "/compute/v2.1/os-hypervisors/detail":
            return self.reply(200, {"hypervisors": self.server.hypervisors()})
        if path.startswith("/placement/"):
            answer = self.server.placement(path[len("/placement"):])
            return self.reply(200, answer) if answer else self.not_found(path)
        if re.fullmatch(r"/compute/v2.1/flavors/[^/]+/os-extra_specs", path):
            return self.reply(200, {"extra_specs": {}})
        if path.startswith("/compute/v2.1/flavors/"):
            wanted = path.rsplit("/", 1)[1]
            for flavor in self.server.flavors:
                if flavor["id"] == wanted:
                    return self.reply(200, {"flavor": flavor})
            return self.not_found("flavor " + wanted)
        if path == "/image/v2/schemas/image":
            return self.reply(200, {"name": "image", "links": [], "additionalProperties": True,
                                    "properties": {"id": {"type": "string"},
                                                   "name": {"type": ["null", "string"]}}})
        if path == "/image/v2/images":
            return self.reply(200, {"images": self.server.images, "first": "/v2/images",
                                    "schema": "/v2/schemas/images"})
        if path == "/networking/v2.0/networks":
            return self.reply(200, {"networks": self.server.networks})
        if path.startswith("/image/v2/images/"):
            wanted = path.rsplit("/", 1)[1]
            for image in self.server.images:
                if image["id"] == wanted:
                    return self.reply(200, image)
            return self.not_found("image " + wanted)
        return self.not_found(path)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.rstrip("/") != "/identity/v3/auth/tokens":
            return self.not_found(self.path)
        url = self.server.url
        catalog = [{"type": stype, "name": name, "id": stype, "endpoints": [
            {"interface": interface, "region": "RegionOne", "region_id": "RegionOne",
             "url": url + prefix, "id": stype + interface}
            for interface in ("public", "internal", "admin")]}
            for stype, name, prefix in (("identity", "keystone", "/identity/v3"),
                                        ("compute", "nova", "/compute/v2.1"),
                                        ("image", "glance", "/image"),
                                        ("network", "neutron", "/networking"),
                                        ("placement", "placement", "/placement"))]
        domain = {"id": "default", "name": "Default"}
        token = {"token": {
            "methods": ["password"], "expires_at": "2099-01-01T00:00:00.000000Z",
            "issued_at": "2020-01-01T00:00:00.000000Z",
            "user": {"id": "u1", "name": "demo", "domain": domain},
            "project": {"id": "p1", "name": "demo", "domain": domain},
            "roles": [{"id": "r1", "name": "member"}], "catalog": catalog}}
        user = json.loads(body or b"{}").get("auth", {}).get("identity", {}).get(
            "password", {}).get("user", {}).get("name")
        if user == "admin":
            token["token"]["roles"].append({"id": "r2", "name": "admin"})
        self.reply(201, token, [("X-Subject-Token", "fake-token")])


class SamplesValidateTestCase(testtools.TestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.pairs = sample_args()
        cls.tmp = tempfile.mkdtemp()
        cls.generated = os.path.join(cls.tmp, "generated-args.yaml")
        write_generated_args(cls.generated)
        for files in cls.pairs.values():
            files.append(cls.generated)
        images, flavors, zones = resource_names(
            [f for files in cls.pairs.values() for f in files])
        cls.cloud = FakeOpenStack(images, flavors, zones)
        cls.thread = threading.Thread(target=cls.cloud.serve_forever, daemon=True)
        cls.thread.start()

    @classmethod
    def tearDownClass(cls):
        cls.cloud.shutdown()
        cls.cloud.server_close()
        cls.thread.join(10)
        shutil.rmtree(cls.tmp)
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.home = self.useFixture(rally_home.RallyHome())
        spec = {"existing@openstack": {
            "auth_url": self.cloud.url + "/identity/v3", "region_name": "RegionOne",
            "users": [{"username": "demo", "password": "secret", "project_name": "demo",
                       "user_domain_name": "Default", "project_domain_name": "Default"}]}}
        spec_file = os.path.join(self.home.path, "spec.json")
        # the samples validate in an env with the admin credential besides the user, as the
        # all-in-one cloud's and devstack's: their quotas context (and conformance.yaml's
        # NovaServers.boot_and_rebuild_server) needs it; "fake-cloud" has the user alone
        spec_admin = {"existing@openstack": dict(
            spec["existing@openstack"],
            admin=dict(spec["existing@openstack"]["users"][0], username="admin"))}
        for name, content in (("fake-cloud-admin", spec_admin), ("fake-cloud", spec)):
            with open(spec_file, "w") as f:
                json.dump(content, f)
            self.home.rally("env", "create", "--name", name, "--spec", spec_file)

    def validate(self, sample, args_file=None, task_args=None, check=True,
                 env="fake-cloud-admin"):
        argv = ["task", "validate", os.path.join(SAMPLES, sample), "--env", env]
        if args_file:
            argv += ["--task-args-file", args_file]
        if task_args is not None:
            argv += ["--task-args", json.dumps(task_args)]
        return self.home.rally(*argv, check=check)

    def assertRejected(self, sample, task_args, *fragments, args_file=None,
                       env="fake-cloud-admin"):
        proc = self.validate(sample, args_file, task_args, check=False, env=env)
        self.assertNotEqual(0, proc.returncode, proc.stdout[-3000:])
        self.assertNotIn(VALID, proc.stdout)
        for fragment in fragments:
            self.assertIn(fragment, proc.stdout)

    def test_every_sample_validates_with_its_args_files(self):
        self.assertIn(os.path.join(SAMPLES, "lifecycle.yaml"), self.pairs)
        runs = [(sample, args_file)
                for sample, args_files in self.pairs.items() for args_file in args_files]
        # one Rally process per core: each is seconds of imports (about 2 min one by one)
        with futures.ThreadPoolExecutor(2) as pool:
            procs = list(pool.map(lambda run: self.validate(*run), runs))
        checked = []
        for (sample, args_file), proc in zip(runs, procs):
            self.assertIn(VALID, proc.stdout, "%s with %s" % (sample, args_file))
            checked.append((os.path.basename(sample), os.path.basename(args_file or "-")))
        for sample in ("lifecycle.yaml", "reboot.yaml", "stop-start.yaml"):
            self.assertIn((sample, "example-cloud.yaml"), checked)
            self.assertIn((sample, "example-quick.yaml"), checked)
        self.assertIn(("benchmark.yaml", "benchmark-quick.yaml"), checked)
        # what the AIO and devstack write serves every sample
        for sample in self.pairs:
            self.assertIn((os.path.basename(sample), "generated-args.yaml"), checked)
        # the semantic stage really asked the cloud for the kinds' images and flavors
        self.assertIn("GET /compute/v2.1/flavors/detail", self.cloud.requests)
        self.assertTrue(any(r.startswith("GET /image/v2/images?") for r in self.cloud.requests))

    def test_lifecycle_renders_kinds_times_concurrency(self):
        proc = self.validate("lifecycle.yaml", os.path.join(ARGS, "example-cloud.yaml"))
        for kind in ("kvm", "docker"):
            for level in (1, 2, 4, 8, 16, 32):
                self.assertIn('description: "%s, concurrency %d"' % (kind, level),
                              proc.stdout)

    def test_unknown_kind_key_names_the_argument(self):
        kind = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"},
                "imag": "x"}
        self.assertRejected("lifecycle.yaml", {"kinds": [kind]},
                            "Argument 'kind' is invalid", "'imag' was unexpected")

    def test_missing_image_names_the_argument(self):
        kind = {"name": "kvm", "flavor": {"name": "m1.tiny"}}
        self.assertRejected("stop-start.yaml", {"kinds": [kind]},
                            "Argument 'kind' is invalid", "'image' is a required property")

    def test_negative_count_and_unknown_reboot_type(self):
        kinds = [{"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}]
        self.assertRejected("reboot.yaml", {"kinds": kinds, "reboots": -1},
                            "Argument 'reboots' is invalid", "-1 is less than the minimum of 1")
        self.assertRejected("reboot.yaml", {"kinds": kinds, "reboot_types": ["warm"]},
                            "Argument 'reboot_type' is invalid", "'warm' is not one of")

    def test_times_below_one_is_refused(self):
        kinds = [{"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}]
        for sample in ("lifecycle.yaml", "benchmark.yaml", "reboot.yaml", "stop-start.yaml",
                       "scale.yaml"):
            for times in (0, -1):
                self.assertRejected(sample, {"kinds": kinds, "times": times,
                                             "concurrency": [1]},
                                    "%d is less than the minimum of 1" % times, "times")

    def test_ambiguous_image_and_kernel_image_name_the_kind(self):
        kinds = [{"name": "kvm", "image": {"regex": "^vmct-qemu"},
                  "flavor": {"name": "m1.tiny"}}]
        self.assertRejected("lifecycle.yaml", {"kinds": kinds, "concurrency": [1]},
                            "Argument 'kind' (kind 'kvm'): kind.image: '^vmct-qemu' matches",
                            "vmct-qemu-kernel (", "vmct-qemu-ramdisk (",
                            "give its id")
        kinds[0]["image"] = {"name": "vmct-qemu-ramdisk"}
        self.assertRejected("lifecycle.yaml", {"kinds": kinds, "concurrency": [1]},
                            "Argument 'kind' (kind 'kvm'): kind.image: image "
                            "vmct-qemu-ramdisk (", "is a ramdisk image (ari)")

    def test_floating_network_must_exist_and_be_external(self):
        kind = {"name": "kvm", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"}}
        for network, message in (("nope", "kind.floating_network: no network 'nope'"),
                                 ("private", "kind.floating_network: network private (")):
            self.assertRejected(
                "lifecycle.yaml", {"kinds": [dict(kind, floating_network=network)],
                                   "concurrency": [1]},
                "Argument 'kind' (kind 'kvm')", message, "public (")
        # the netperf peer's kind too (the context's validators)
        self.assertRejected(
            "benchmark.yaml", {"kinds": [dict(kind, floating_network="private")],
                               "concurrency": [1]},
            "vmct_netperf_peer", "is not external")

    def test_non_admin_args_validate_as_a_plain_member(self):
        args_file = os.path.join(ARGS, "example-non-admin.yaml")
        for sample in ("lifecycle.yaml", "benchmark.yaml"):
            proc = self.validate(sample, args_file, env="fake-cloud")
            self.assertIn(VALID, proc.stdout, proc.stdout[-3000:])
            rendered = self.rendered(proc)
            for subtask in rendered["subtasks"]:
                for workload in subtask["workloads"]:
                    self.assertNotIn("users", workload["contexts"])
                    self.assertNotIn("quotas", workload["contexts"])
                    [args] = workload["scenario"].values()
                    self.assertEqual("public", args["kind"]["floating_network"])
                    self.assertEqual({"nics": [{"net-name": "private"}]}, args["boot_args"])

    def test_image_missing_in_the_cloud_names_the_kind(self):
        kinds = [{"name": "kvm", "image": {"name": "no-such-image", "accurate": True},
                  "flavor": {"name": "m1.tiny"}}]
        self.assertRejected("lifecycle.yaml", {"kinds": kinds, "concurrency": [1]},
                            "vmct_kind_resources", "Argument 'kind' (kind 'kvm')",
                            "no-such-image")

    def aio_args(self):
        """benchmark.yaml arguments shaped like tools/aio/write-task-args' (two kinds)."""
        kinds = [{"name": name, "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"},
                  "availability_zone": name, "ssh_user": "root"} for name in ("kvm", "docker")]
        return {"kinds": kinds, "boot_args": {"nics": [{"net-id": "net-1"}]},
                "proxy_command": "tools/aio/proxy-command %h %p", "ssh_user": "root",
                "contexts": {"users": {"tenants": 1, "users_per_tenant": 1}, "keypair": {},
                             "allow_ssh": None}}

    def test_benchmark_renders_kinds_times_concurrency_with_peer_contexts(self):
        proc = self.validate("benchmark.yaml", task_args=dict(self.aio_args(),
                                                              concurrency=[1, 2]))
        self.assertIn(VALID, proc.stdout)
        for kind in ("kvm", "docker"):
            for level in (1, 2):
                self.assertIn('description: "%s, concurrency %d"' % (kind, level), proc.stdout)
        # KEK's parameters by default, netperf against the peer context's instance
        self.assertIn('"max_prime": 20000', proc.stdout)
        self.assertIn('"netperf": "TCP_STREAM"', proc.stdout)
        self.assertIn('"vmct_netperf_peer": {"boot_args"', proc.stdout)
        self.assertIn('netperf_peer: "instance"', proc.stdout)

    def test_benchmark_split_workloads_and_workload_image(self):
        args = dict(self.aio_args(), concurrency=[1], split_workloads=True,
                    workload_image={"prepare": True}, netperf_peer="none")
        proc = self.validate("benchmark.yaml", task_args=args)
        self.assertIn(VALID, proc.stdout)
        self.assertEqual(14, proc.stdout.count("VMCT.boot_and_benchmark:"))
        self.assertNotIn('"netperf": "TCP', proc.stdout)
        self.assertIn('"vmct_workload_image": {"boot_args"', proc.stdout)
        self.assertIn('"prepare": true', proc.stdout)

    def test_benchmark_rejects_bad_workloads_and_missing_key(self):
        args = dict(self.aio_args(), workloads=[{"sysbench": "cpu", "max_prim": 1}])
        self.assertRejected("benchmark.yaml", args, "Invalid argument 'workloads'",
                            "max_prim")
        args = dict(self.aio_args(), contexts={"users": {"tenants": 1,
                                                         "users_per_tenant": 1}})
        self.assertRejected("benchmark.yaml", args, "add the 'keypair' context")
        args = dict(self.aio_args(), workload_image={"prepare": "yes"})
        self.assertRejected("benchmark.yaml", args, "vmct_workload_image", "'yes'")

    def test_conformance_expects_per_kind(self):
        proc = self.validate("conformance.yaml", self.generated)
        self.assertIn(VALID, proc.stdout)
        checks = re.findall(r'VMCT.boot_and_check_actions: (\{.*\})', proc.stdout)
        by_kind = {json.loads(c)["kind"]["name"]: json.loads(c)["checks"] for c in checks}
        self.assertEqual({"qemu-tcg", "docker"}, set(by_kind))
        expect = {k: {c["action"]: c["expect"] for c in v} for k, v in by_kind.items()}
        self.assertEqual({"rescue": "done", "attach_interface": "refused",
                          "console_url": "refused"}, expect["docker"])
        self.assertEqual("done", expect["qemu-tcg"]["attach_interface"])
        # every workload of every kind gets rally-openstack's network context
        self.assertEqual(2 * 7, proc.stdout.count('"network": {"dns_nameservers": []}'))

    def test_demo_workload_seconds_bounds_each_benchmark(self):
        proc = self.validate("demo.yaml", self.generated, {"workload_seconds": 3})
        self.assertIn(VALID, proc.stdout)
        lengths = [w.get("time", w.get("duration"))
                   for subtask in self.rendered(proc)["subtasks"]
                   for workload in subtask.get("workloads", [subtask])
                   for name, args in workload["scenario"].items() if "benchmark" in name
                   for w in args.get("workloads", [])]
        # nine a benchmark workload, one workload a kind (both kinds of the generated args)
        self.assertEqual(0, len(lengths) % 9)
        self.assertGreaterEqual(len(lengths), 18)
        self.assertEqual({3}, set(lengths))

    # -- quotas, capacity and the scale sweep ------------------------------------------------

    def generated_args(self, **extra):
        """The AIO's args file with ``extra`` (e.g. fake_kind) added, as a new file."""
        with open(self.generated) as f:
            args = yaml.safe_load(f)
        args.update(extra)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=self.home.path,
                                         delete=False) as f:
            yaml.safe_dump(args, f)
        return f.name

    @staticmethod
    def rendered(proc):
        """The task Rally rendered (``Task is:`` in its output)."""
        text = proc.stdout.split("Task is:\n", 1)[1]
        return yaml.safe_load(re.split(r"\nTask syntax is correct|\nInput task is invalid",
                                       text)[0])

    def test_sweeps_size_the_quotas_context_per_level(self):
        proc = self.validate("lifecycle.yaml", os.path.join(ARGS, "example-cloud.yaml"))
        self.assertIn(VALID, proc.stdout)
        for subtask in self.rendered(proc)["subtasks"]:
            for workload in subtask["workloads"]:
                level = workload["runner"]["constant"]["concurrency"]
                self.assertEqual({"nova": {"instances": level + 2, "cores": -1, "ram": -1},
                                  "neutron": {"port": -1, "floatingip": -1}},
                                 workload["contexts"]["quotas"])
        # benchmark.yaml: the netperf peer of each tenant counts too
        proc = self.validate("benchmark.yaml", task_args=dict(
            self.aio_args(), concurrency=[4],
            contexts={"users": {"tenants": 2, "users_per_tenant": 1}, "keypair": {},
                      "allow_ssh": None}))
        self.assertIn(VALID, proc.stdout)
        workload = self.rendered(proc)["subtasks"][0]["workloads"][0]
        self.assertEqual(4 + 2 + 2, workload["contexts"]["quotas"]["nova"]["instances"])
        # the workload's own quotas context is kept; quotas: false leaves it out
        mine = {"users": {"tenants": 1, "users_per_tenant": 1},
                "quotas": {"nova": {"instances": 99}}}
        for task_args, expected in (({"contexts": mine}, {"nova": {"instances": 99}}),
                                    ({"quotas": False}, None)):
            proc = self.validate("stop-start.yaml", os.path.join(ARGS, "example-quick.yaml"),
                                 task_args=task_args)
            self.assertIn(VALID, proc.stdout)
            for subtask in self.rendered(proc)["subtasks"]:
                self.assertEqual(expected, subtask["workloads"][0]["contexts"].get("quotas"))

    def test_quota_without_the_quotas_context_is_rejected_before_the_start(self):
        # what the AIO saw: 16 at once in a new project whose quota is Nova's default 10
        kinds = [{"name": "docker", "image": {"name": "cirros"}, "flavor": {"name": "m1.tiny"},
                  "availability_zone": "docker"}]
        self.assertRejected(
            "lifecycle.yaml", {"kinds": kinds, "concurrency": [16], "quotas": False},
            "vmct_capacity", "VMCT.boot_and_delete_server at concurrency 16 on kind 'docker' "
            "(flavor 'm1.tiny': 1 VCPU, 1024 MB RAM, 10 GB disk) cannot run",
            "may start 10 more such servers (quota instances 10, 0 in use)",
            "add rally-openstack's quotas context")
        self.assertIn("GET /compute/v2.1/os-quota-sets/p1/defaults", self.cloud.requests)
        # a cloud whose Rally env has users but no admin: quotas: false, the users' own limits
        proc = self.validate("lifecycle.yaml", task_args={"kinds": kinds, "concurrency": [2],
                                                          "quotas": False}, env="fake-cloud")
        self.assertIn(VALID, proc.stdout)
        self.assertIn("GET /compute/v2.1/limits", self.cloud.requests)
        self.assertRejected("lifecycle.yaml", {"kinds": kinds, "concurrency": [2]},
                            "quotas", "No admin credential", env="fake-cloud")

    def test_a_level_beyond_the_hosts_is_rejected_before_the_start(self):
        small = dict(FAKE_KIND, availability_zone=SMALL_ZONE)
        self.assertRejected(
            "scale.yaml", {"fake_kind": small, "concurrency": [8, 64]},
            "VMCT.boot_and_delete_server at concurrency 64 on kind 'fake'",
            "the compute hosts of availability zone 'small' hold 40 such servers at once, the "
            "workload needs 64 at once: small-1 holds 40 (VCPU: (40 total - 0 reserved) x "
            "allocation ratio 1, 0 used, 1 a server)",
            "Lower the concurrency to 40, or raise the allocation ratio of VCPU")
        self.assertIn("GET /placement/resource_providers/rp-small/inventories",
                      self.cloud.requests)

    def test_scale_sweeps_each_kind_up_to_what_it_holds(self):
        args = self.generated_args(fake_kind=FAKE_KIND, capacity={"docker": 32, "qemu-tcg": 0})
        proc = self.validate("scale.yaml", args)
        self.assertIn(VALID, proc.stdout)
        task = self.rendered(proc)
        self.assertEqual("qemu-tcg left out: this cloud holds 0 of its servers at once",
                         task["description"])
        by_kind = {s["title"].split(":")[0]: s for s in task["subtasks"]}
        self.assertEqual(["fake", "docker"], list(by_kind))
        self.assertEqual("fake: boot and delete at concurrency 1 to 256",
                         by_kind["fake"]["title"])
        self.assertEqual("docker: boot and delete at concurrency 1 to 32 (stops at 32: this "
                         "cloud holds 32)", by_kind["docker"]["title"])
        self.assertIn("64, 128, 256 left out: the hosts of kind docker hold 32",
                      by_kind["docker"]["description"])
        for kind, levels, probe in (("fake", [1, 8, 32, 64, 128, 256], "none"),
                                    ("docker", [1, 8, 32], "tcp")):
            workloads = by_kind[kind]["workloads"]
            self.assertEqual(levels, [w["runner"]["constant"]["concurrency"] for w in workloads])
            self.assertEqual([max(2 * level, 100) for level in levels],
                             [w["runner"]["constant"]["times"] for w in workloads])
            self.assertEqual([level + 2 for level in levels],
                             [w["contexts"]["quotas"]["nova"]["instances"] for w in workloads])
            for workload in workloads:
                args = workload["scenario"]["VMCT.boot_and_delete_server"]
                self.assertEqual(probe, args["probe"])
                self.assertEqual(probe != "none", "proxy_command" in args)
                self.assertEqual({"failure_rate": {"max": 0}}, workload["sla"])

    def test_scale_ci_overrides(self):
        with open(os.path.join(ARGS, "scale-ci.yaml")) as f:
            overrides = yaml.safe_load(f)
        proc = self.validate("scale.yaml", self.generated_args(fake_kind=FAKE_KIND),
                             task_args=overrides)
        self.assertIn(VALID, proc.stdout)
        [subtask] = self.rendered(proc)["subtasks"]
        self.assertEqual("fake: boot and delete at concurrency 1 to 16", subtask["title"])
        self.assertEqual([(1, 6), (8, 8), (16, 16)],
                         [(w["runner"]["constant"]["concurrency"],
                           w["runner"]["constant"]["times"]) for w in subtask["workloads"]])

    def test_probe_none_never_with_wait_for_ssh(self):
        kinds = [dict(FAKE_KIND)]
        self.assertRejected("lifecycle.yaml", {"kinds": kinds, "probe": "none",
                                               "wait_for_ssh": True, "concurrency": [1]},
                            "'probe: none' and 'wait_for_ssh: true'")
        proc = self.validate("reboot.yaml", task_args={"kinds": kinds, "probe": "none",
                                                       "wait_for_ssh": False})
        self.assertIn(VALID, proc.stdout)
