"""End-to-end: the Docker hosts take Docker images only, and Docker images go nowhere else.

A tenant's plain image carries no ``img_hv_type`` (Nova's ImagePropertiesFilter lets it
anywhere). The all-in-one cloud isolates its Docker hosts as the nova-docker README tells
operators to: every Docker compute's provider has the driver's trait CUSTOM_NOVA_DOCKER, the
Docker hosts' aggregates require it (``trait:CUSTOM_NOVA_DOCKER=required``, with Nova's
``[scheduler] enable_isolated_aggregate_filtering``), and the Docker image requires it.

With the fake compute disabled for the test (it would take every plain boot: its inventory is
the largest), a plain image's servers have only the QEMU host and the two Docker hosts to go
to, and the Docker hosts have more free memory (the RAM weigher's favourite): without the
isolation some would go there. None may be scheduled there, not even once before a
reschedule (every host of the boot's instance action events counts). A Docker image with no
zone given lands on a Docker host only.
"""

import json
import tempfile
import uuid

from tests.e2e import faults
from tests.e2e import test_demo_task

PLAIN_BOOTS = 4
DOCKER_BOOTS = 2
BUILD_TIMEOUT = 300


class AggregateTestCase(test_demo_task.ArtifactTest):
    """Boots outside Rally on the running cloud and where Nova tried to put them."""

    @classmethod
    def load_artifacts(cls):
        cls.docker_hosts = {"vmct-aio-docker", "vmct-aio-docker-2"}

    def setUp(self):
        super().setUp()
        down = faults.aio_down_reason()
        if down:
            self.fail(down)
        self.name = "vmct-e2e-iso-" + uuid.uuid4().hex[:8]
        self.network = faults.openstack("network", "show", faults.VALUES["VMCT_NET_NAME"],
                                        "-f", "value", "-c", "id").strip()

    def disable_fake_compute(self):
        faults.openstack("compute", "service", "set", "--disable",
                         "--disable-reason", "tests/e2e/test_isolation", "vmct-aio-fake",
                         "nova-compute")
        self.addCleanup(faults.openstack, "compute", "service", "set", "--enable",
                        "vmct-aio-fake", "nova-compute")

    def plain_image(self):
        """A 1 MiB raw image with no property at all, as a tenant uploads one."""
        with tempfile.NamedTemporaryFile() as f:
            f.write(bytes(1024 * 1024))
            f.flush()
            image = faults.openstack("image", "create", "--disk-format", "raw",
                                     "--container-format", "bare", "--file", f.name,
                                     "-f", "value", "-c", "id", self.name).strip()
        self.addCleanup(faults.openstack, "image", "delete", image)
        return image

    def boot(self, image, count):
        """``count`` servers of one request, no zone given; their ids once none builds."""
        faults.openstack("server", "create", "--image", image,
                         "--flavor", faults.VALUES["VMCT_FLAVOR_NAME"],
                         "--nic", "net-id=" + self.network, "--min", str(count),
                         "--max", str(count), self.name)
        servers = {}

        def built():
            servers.update((s["ID"], s["Status"]) for s in json.loads(faults.openstack(
                "server", "list", "--name", "^%s" % self.name, "-f", "json")))
            return len(servers) == count and "BUILD" not in servers.values()
        try:
            faults.until(built, BUILD_TIMEOUT, "%d servers %s built" % (count, self.name), 2)
        finally:
            for server in servers:
                self.addCleanup(faults.openstack, "server", "delete", "--wait", server)
        self.assertEqual(["ACTIVE"] * count, list(servers.values()), servers)
        return list(servers)

    def hosts_tried(self, server):
        """Every compute host of the server's create action (a reschedule leaves two)."""
        actions = json.loads(faults.openstack(
            "--os-compute-api-version", "2.62", "server", "event", "list", server,
            "-f", "json"))
        [create] = [a for a in actions if a["Action"] == "create"]
        detail = json.loads(faults.openstack(
            "--os-compute-api-version", "2.62", "server", "event", "show", server,
            create["Request ID"], "-f", "json"))
        return {e.get("host") for e in detail["events"] if e.get("host")}

    def host(self, server):
        return faults.openstack("server", "show", server, "-f", "value",
                                "-c", "OS-EXT-SRV-ATTR:host").strip()


@test_demo_task.needs_e2e
class IsolationTest(AggregateTestCase):

    def test_a_plain_image_never_goes_to_a_docker_host(self):
        self.disable_fake_compute()
        for server in self.boot(self.plain_image(), PLAIN_BOOTS):
            tried = self.hosts_tried(server)
            self.assertTrue(tried, server)
            self.assertEqual(set(), tried & self.docker_hosts, (server, tried))
            self.assertEqual("vmct-aio", self.host(server))

    def test_a_docker_image_goes_to_docker_hosts_only(self):
        ids = self.boot(faults.VALUES["VMCT_DOCKER_IMAGE"], DOCKER_BOOTS)
        for server in ids:
            self.assertIn(self.host(server), self.docker_hosts, server)
            tried = self.hosts_tried(server)
            self.assertLessEqual(tried, self.docker_hosts, (server, tried))
