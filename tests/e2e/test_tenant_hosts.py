"""End-to-end: Docker hosts scoped to projects (VMCT_AIO_DOCKER_PROJECTS), Nova's own filter.

The all-in-one cloud's tenant-scoped profile: ``VMCT_AIO_DOCKER_PROJECTS="admin vmct-member"
tools/aio/up`` puts ``filter_tenant_id`` (those projects' ids) on the Docker hosts' aggregates,
and Nova's AggregateMultiTenancyIsolation keeps every other project off them. Trait isolation
alone does not: any project may upload an image that asks for the Docker trait. Run by the e2e
stage after it brought the cloud up in that profile (tools/test-stages/50-e2e, step
tenant_hosts_up), beside tools/aio/smoke on every kind.

A project made for the test (not on the list) boots an image that carries the Docker trait and
``container_format=docker``: the build fails (no valid host) and not one host of its boot's
instance action events is a Docker host, not even before a reschedule. The member project,
which is on the list, boots the same image onto a Docker host.
"""

import json
import os
import uuid

from tests.e2e import faults
from tests.e2e import test_demo_task
from tests.e2e import test_isolation

BUILD_TIMEOUT = 300
# the member access mode's project (tools/aio/lib/common.sh MEMBER_USER) and the admin's: the
# projects the e2e stage lists (50-e2e, tenant_hosts_up)
LISTED = ("admin", "vmct-member")


def openstack_as(env, *argv):
    return faults.run(os.path.join(faults.AIO_DIR, "venv", "bin", "openstack"), *argv,
                      env=env)


@test_demo_task.needs_e2e
class TenantHostsTest(test_isolation.AggregateTestCase):

    def setUp(self):
        super().setUp()
        self.trait = faults.VALUES["VMCT_DOCKER_TRAIT"]

    def docker_aggregates(self):
        aggregates = json.loads(faults.openstack("aggregate", "list", "--long", "-f", "json"))
        return [a for a in aggregates
                if a["Properties"].get("trait:" + self.trait) == "required"]

    def project_id(self, name):
        return faults.openstack("project", "show", name, "-f", "value", "-c", "id").strip()

    def outsider(self):
        """A project not on the list with a member user; its environment for the CLI."""
        name = self.name + "-outsider"
        password = uuid.uuid4().hex
        project = faults.openstack("project", "create", name, "-f", "value",
                                   "-c", "id").strip()
        self.addCleanup(faults.openstack, "project", "delete", project)
        faults.openstack("user", "create", "--project", project, "--password", password, name)
        self.addCleanup(faults.openstack, "user", "delete", name)
        faults.openstack("role", "add", "--project", project, "--user", name, "member")
        env = faults.admin_env()
        env.update(OS_USERNAME=name, OS_PASSWORD=password, OS_PROJECT_NAME=name,
                   OS_PROJECT_ID=project)
        return env

    def docker_image_with_trait(self, env):
        """The Docker workload image's id; it carries the trait (tools/vmct-values)."""
        image = json.loads(openstack_as(env, "image", "show",
                                        faults.VALUES["VMCT_DOCKER_IMAGE"], "-f", "json"))
        self.assertEqual("docker", image["container_format"])
        self.assertEqual("required", image["properties"].get("trait:" + self.trait))
        return image["id"]

    def test_the_docker_aggregates_name_the_listed_projects(self):
        listed = {self.project_id(n) for n in LISTED}
        aggregates = self.docker_aggregates()
        self.assertEqual(2, len(aggregates), aggregates)
        for agg in aggregates:
            self.assertEqual(listed, set(agg["Properties"]["filter_tenant_id"].split(",")),
                             agg["Name"])

    def test_a_project_not_listed_never_lands_on_a_docker_host(self):
        env = self.outsider()
        image = self.docker_image_with_trait(env)
        server = openstack_as(env, "server", "create", "--image", image,
                              "--flavor", faults.VALUES["VMCT_FLAVOR_NAME"],
                              "--nic", "net-id=" + self.network, "-f", "value", "-c", "id",
                              self.name).strip()
        self.addCleanup(faults.openstack, "server", "delete", "--wait", server)
        faults.until(lambda: faults.openstack("server", "show", server, "-f", "value",
                                              "-c", "status").strip() != "BUILD",
                     BUILD_TIMEOUT, "server %s built or failed" % server, 2)
        fault = json.loads(faults.openstack("server", "show", server, "-f", "json"))
        self.assertEqual("ERROR", fault["status"], fault)
        self.assertIn("No valid host", json.dumps(fault.get("fault")), fault)
        self.assertEqual(set(), self.hosts_tried(server) & self.docker_hosts)

    def test_a_listed_project_lands_on_a_docker_host(self):
        env = dict(faults.admin_env(), **dict(faults.ENV_VALUES(
            os.path.join(faults.AIO_DIR, "member-openrc"))))
        image = self.docker_image_with_trait(env)
        server = openstack_as(env, "server", "create", "--image", image,
                              "--flavor", faults.VALUES["VMCT_FLAVOR_NAME"],
                              "--nic", "net-id=" + self.network, "--wait", "-f", "value",
                              "-c", "id", self.name).strip()
        self.addCleanup(faults.openstack, "server", "delete", "--wait", server)
        self.assertIn(self.host(server), self.docker_hosts)
