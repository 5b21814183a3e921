"""``rally task validate`` (the real CLI) on every sample task, against a fake cloud.

Validation has three stages: syntax (argument schemas and our syntax
validators), platform (credentials present) and semantic (the cloud answers,
Nova is in the catalog, the kind's image and flavor exist and fit). The
semantic stage needs a cloud, so the test serves a tiny fake OpenStack on a
loopback port: Keystone v3 (token + catalog), Nova flavors and Glance images,
seeded with the images and flavors the example args files name. A Rally env
``existing@openstack`` with a plain user points at it.

Each sample is validated with every args file in ``samples/tasks/args`` whose
first comment names it (``# Task arguments for samples/tasks/<name>.yaml`` or
``samples/tasks/{a,b}.yaml``), and with the file the all-in-one cloud and devstack's
plugin generate (tools/task_args.py, the one writer both call). Bad arguments must be rejected
with the argument's name.
"""

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
# samples whose scenarios need admin credentials besides the users
ADMIN_SAMPLES = ("conformance.yaml",)
NATIVE_HOST = {"host": "127.0.0.1", "port": 22822, "user": "root", "key_file": "/k/id_ed25519"}
NATIVE = {
    "native": {"kind": "native", "host": NATIVE_HOST,
               "netperf_peer": {"host": "127.0.0.1", "control_port": 22865,
                                "data_port": 22866, "listen": "127.0.0.1", "ssh": NATIVE_HOST}},
    "native_hosts": [NATIVE_HOST],
}
NATIVE["netperf_peer"] = NATIVE["native"]["netperf_peer"]   # native.yaml's form


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
            header = "".join(line for line in f if line.startswith("#"))
        for match in re.finditer(r"samples/tasks/(\{[^}]*\}|[\w.-]+?)\.yaml", header):
            names = match.group(1).strip("{}").split(",")
            for name in names:
                path = os.path.join(SAMPLES, name.strip() + ".yaml")
                if path in pairs and args_file not in pairs[path]:
                    pairs[path].append(args_file)
    return pairs


def resource_names(args_files):
    """Image and flavor names the args files refer to (regexes made literal)."""
    images, flavors = {"cirros"}, {"m1.tiny"}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("image", "flavor") and isinstance(value, dict):
                    name = value.get("name") or value.get("regex", "").strip("^$")
                    if re.fullmatch(r"[\w.-]+", name or ""):
                        (images if key == "image" else flavors).add(name)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    for path in args_files:
        with open(path) as f:
            walk(yaml.safe_load(f))
    return sorted(images), sorted(flavors)


class FakeOpenStack(http.server.ThreadingHTTPServer):
    """Keystone v3, Nova flavors and Glance images; enough for Rally's validators."""

    daemon_threads = True

    def __init__(self, images, flavors):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.images = [{"id": "00000000-0000-0000-0000-%012d" % i, "name": name,
                        "size": 1024, "min_ram": 0, "min_disk": 0, "status": "active",
                        "visibility": "public"} for i, name in enumerate(images)]
        self.flavors = [{"id": str(i + 1), "name": name, "ram": 1024, "disk": 10, "vcpus": 1,
                         "links": []} for i, name in enumerate(flavors)]
        self.requests = []
        self.url = "http://127.0.0.1:%d" % self.server_address[1]


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
                                        ("image", "glance", "/image"))]
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
        images, flavors = resource_names(
            [f for files in cls.pairs.values() for f in files])
        cls.cloud = FakeOpenStack(images, flavors)
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
        # samples with a scenario that asks for admin credentials (conformance.yaml's
        # NovaServers.boot_and_rebuild_server) validate in an env that has them too
        spec_admin = {"existing@openstack": dict(
            spec["existing@openstack"],
            admin=dict(spec["existing@openstack"]["users"][0], username="admin"))}
        for name, content in (("fake-cloud-admin", spec_admin), ("fake-cloud", spec)):
            with open(spec_file, "w") as f:
                json.dump(content, f)
            self.home.rally("env", "create", "--name", name, "--spec", spec_file)

    def validate(self, sample, args_file=None, task_args=None, check=True):
        argv = ["task", "validate", os.path.join(SAMPLES, sample)]
        if sample.endswith(ADMIN_SAMPLES):
            argv += ["--env", "fake-cloud-admin"]
        if args_file:
            argv += ["--task-args-file", args_file]
        if task_args is not None:
            argv += ["--task-args", json.dumps(task_args)]
        return self.home.rally(*argv, check=check)

    def assertRejected(self, sample, task_args, *fragments, args_file=None):
        proc = self.validate(sample, args_file, task_args, check=False)
        self.assertNotEqual(0, proc.returncode, proc.stdout[-3000:])
        self.assertNotIn(VALID, proc.stdout)
        for fragment in fragments:
            self.assertIn(fragment, proc.stdout)

    def test_every_sample_validates_with_its_args_files(self):
        self.assertIn(os.path.join(SAMPLES, "lifecycle.yaml"), self.pairs)
        checked = []
        for sample, args_files in self.pairs.items():
            for args_file in args_files:
                proc = self.validate(sample, args_file)
                self.assertIn(VALID, proc.stdout, "%s with %s" % (sample, args_file))
                checked.append((os.path.basename(sample),
                                os.path.basename(args_file or "-")))
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
