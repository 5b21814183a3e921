"""tools/devstack/zuul_job.py: a job read as Zuul and Ansible read it, local.conf written.

The parent jobs here stand for devstack's .zuul.yaml (CI has no devstack tree); the module
that writes local.conf is a recorder with the signature of devstack's
write-devstack-local-conf module. tools/devstack-job runs both for real with devstack's own.
"""

import contextlib
import io
import json
import os
import re
import textwrap

import fixtures
import testtools

from tests.unit.devstack import base
from tests.unit.devstack import test_zuul

zuul_job = test_zuul.zuul_job

PARENTS = """
- job:
    name: devstack-base
    parent: openstack-multinode-fips
    required-projects:
      - opendev.org/openstack/devstack
    vars:
      devstack_localrc:
        ADMIN_PASSWORD: secretadmin
        LIBVIRT_TYPE: '{{ devstack_libvirt_type | default("qemu") }}'
      devstack_services:
        base: false
    group-vars:
      subnode:
        devstack_localrc:
          ADMIN_PASSWORD: secretadmin
        devstack_services:
          base: false
- job:
    name: devstack
    parent: devstack-base
    nodeset: openstack-single-node-noble
    required-projects:
      - opendev.org/openstack/nova
      - opendev.org/openstack/requirements
    vars:
      devstack_localrc:
        HOST_IP: "{{ hostvars['controller']['nodepool']['private_ipv4'] }}"
        PUBLIC_BRIDGE_MTU: '{{ external_bridge_mtu }}'
      devstack_local_conf:
        post-config:
          $NEUTRON_CONF:
            DEFAULT:
              global_physnet_mtu: '{{ external_bridge_mtu }}'
      devstack_services:
        n-cpu: true
        c-vol: true
      zuul_copy_output:
        '{{ stage_dir }}/df.txt': logs
    group-vars:
      subnode:
        devstack_localrc:
          HOST_IP: "{{ hostvars[inventory_hostname]['nodepool']['private_ipv4'] }}"
        # devstack's subnode services (devstack-minimal's and devstack's group-vars)
        devstack_services:
          dstat: false
          memory_tracker: true
          file_tracker: true
          openstack-cli-server: true
          tls-proxy: true
          n-cpu: true
          placement-client: true
          ovn-controller: true
          ovs-vswitchd: true
          ovsdb-server: true
          q-ovn-agent: true
          c-bak: true
          c-vol: true
          horizon: false
          tempest: false
"""

# records what the role passes to devstack's module, and writes it as local.conf
RECORDER = """
import json


class LocalConf(object):
    def __init__(self, localrc, localconf, base_services, services, plugins, base_dir,
                 projects, project, tempest_plugins):
        self.args = dict(localrc=localrc, localconf=localconf, base_services=base_services,
                         services=services, plugins=plugins, base_dir=base_dir,
                         projects=projects, project=project, tempest_plugins=tempest_plugins)
        self.warnings = ["recorded"]

    def write(self, path):
        with open(path, "w") as f:
            json.dump(self.args, f)
"""

LIFECYCLE = test_zuul.LIFECYCLE
MULTINODE = test_zuul.MULTINODE


class ZuulJobTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.parents = os.path.join(self.tmp, "devstack.zuul.yaml")
        with open(self.parents, "w") as f:
            f.write(PARENTS)
        self.config = zuul_job.ZuulConfig([os.path.join(base.ROOT, ".zuul.d"), self.parents])

    def cli(self, *args):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = zuul_job.main(["--config", os.path.join(base.ROOT, ".zuul.d"),
                                "--config", self.parents] + list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_deep_merge_replaces_all_but_dicts(self):
        merged = zuul_job.deep_merge({"a": {"x": 1, "y": [1]}, "b": 1},
                                     {"a": {"y": [2], "z": 3}, "c": {}})
        self.assertEqual({"a": {"x": 1, "y": [2], "z": 3}, "b": 1, "c": {}}, merged)

    def test_chain_reaches_the_parents_files_and_names_the_first_missing(self):
        job = self.config.job(LIFECYCLE)
        self.assertEqual([LIFECYCLE, "rally-vmct-devstack-base", "devstack", "devstack-base"],
                         [b["name"] for b in job.chain])
        self.assertEqual("openstack-multinode-fips", job.unresolved_parent)

    def test_vars_merged_recursively_each_job_over_its_parent(self):
        job = self.config.job(LIFECYCLE)
        localrc = job.vars["devstack_localrc"]
        # devstack-base's, devstack's and ours, ours winning where both set one
        self.assertEqual("secretadmin", localrc["ADMIN_PASSWORD"])
        self.assertIn("HOST_IP", localrc)
        self.assertEqual("openvswitch", localrc["Q_AGENT"])
        services = job.vars["devstack_services"]
        self.assertIs(False, services["c-vol"])
        self.assertIs(True, services["n-cpu"])
        self.assertIs(False, services["base"])
        self.assertEqual({"times": 4, "concurrency": [1, 2, 4]}, job.vars["vmct_task_args"])
        self.assertIn("global_physnet_mtu",
                      job.vars["devstack_local_conf"]["post-config"]["$NEUTRON_CONF"]["DEFAULT"])

    def test_group_vars_replace_whole_variables_on_the_subnode(self):
        job = self.config.job(MULTINODE)
        sub = job.node_vars("compute1")
        # the job's vars do not leak into the subnode's devstack_localrc: Ansible replaces it
        self.assertNotIn("VMCT_KINDS", sub["devstack_localrc"])
        self.assertEqual("replace", sub["devstack_localrc"]["VMCT_DOCKER_COMPUTE"])
        self.assertEqual("secretadmin", sub["devstack_localrc"]["ADMIN_PASSWORD"])
        # group-vars merged across the chain: devstack's subnode services and ours
        self.assertIs(True, sub["devstack_services"]["vmct-docker"])
        self.assertIn("c-bak", sub["devstack_services"])
        # variables the group does not set come from the job's vars
        self.assertEqual(job.vars["vmct_tasks"], sub["vmct_tasks"])
        controller = job.node_vars("controller")
        self.assertEqual("kvm docker", controller["devstack_localrc"]["VMCT_KINDS"])
        self.assertIs(False, controller["devstack_services"]["vmct-docker"])

    def test_the_subnode_is_a_docker_only_compute(self):
        """The multinode job's subnode runs only a Docker-only compute's services.

        Over devstack's subnode services, what node-steps check-nodes accepts (it checks
        with devstack's own .zuul.yaml and functions; here, devstack's services as the
        fixture copies them).
        """
        with open(os.path.join(base.ROOT, "tools", "devstack", "node-steps")) as f:
            script = f.read()
        docker_only = set(re.search(r'DOCKER_ONLY_COMPUTE="([^"]+)"', script).group(1).split())
        helpers = set(re.search(r'NODE_HELPERS="([^"]+)"', script).group(1).split())
        services = self.config.job(MULTINODE).node_vars("compute1")["devstack_services"]
        self.assertIs(False, services.get("base"))
        enabled = {name for name, on in services.items() if on is True}
        self.assertEqual(docker_only, enabled - helpers)

    def test_required_projects_collected_and_the_job_branch_applied(self):
        projects = self.config.job("rally-vmct-devstack-lifecycle-2025-1").required_projects()
        for name in ("devstack", "nova", "requirements", "rally", "rally-openstack"):
            self.assertEqual("stable/2025.1", projects["opendev.org/openstack/" + name], name)
        self.assertEqual({None}, set(self.config.job(LIFECYCLE).required_projects().values()))

    def test_expressions_rendered_with_the_node_facts(self):
        job = self.config.job(MULTINODE)
        ips = {"controller": "10.0.0.1", "compute1": "10.0.0.2"}
        names = ["devstack_localrc", "devstack_local_conf"]
        values = zuul_job.rendered_vars(job, "controller", ips, 1500, names=names)
        self.assertEqual("10.0.0.1", values["devstack_localrc"]["HOST_IP"])
        self.assertEqual("1430", values["devstack_localrc"]["PUBLIC_BRIDGE_MTU"])
        self.assertEqual("qemu", values["devstack_localrc"]["LIBVIRT_TYPE"])
        conf = values["devstack_local_conf"]["post-config"]["$NEUTRON_CONF"]["DEFAULT"]
        self.assertEqual("1430", conf["global_physnet_mtu"])
        sub = zuul_job.rendered_vars(job, "compute1", ips, 9000, names=names)
        self.assertEqual("10.0.0.2", sub["devstack_localrc"]["HOST_IP"])

    def test_role_defaults_below_the_job_and_rendered(self):
        defaults = {"vmct_tasks": ["never"], "vmct_results_dir":
                    "{{ devstack_base_dir | default('/opt/stack') }}/vmct-results"}
        values = zuul_job.rendered_vars(self.config.job(LIFECYCLE), "controller", {}, 1500,
                                        defaults, ["vmct_tasks", "vmct_results_dir"])
        self.assertEqual("/opt/stack/vmct-results", values["vmct_results_dir"])
        self.assertIn("samples/tasks/lifecycle.yaml", values["vmct_tasks"])

    def test_an_expression_that_cannot_render_names_itself(self):
        job = self.config.job(LIFECYCLE)
        e = self.assertRaises(zuul_job.JobError, zuul_job.rendered_vars, job, "controller",
                              {}, 1500, None, ["zuul_copy_output"])
        self.assertIn("stage_dir", str(e))
        # show renders what it can and keeps the rest as written
        values = zuul_job.rendered_vars(job, "controller", {}, 1500)
        self.assertIn("{{ stage_dir }}/df.txt", values["zuul_copy_output"])

    def test_unknown_job_and_node_are_named(self):
        e = self.assertRaises(zuul_job.JobError, self.config.job, "rally-vmct-nope")
        self.assertIn("rally-vmct-nope", str(e))
        self.assertIn(LIFECYCLE, str(e))
        e = self.assertRaises(zuul_job.JobError, self.config.job(LIFECYCLE).node_vars,
                              "compute1")
        self.assertIn("nodes: controller", str(e))

    def test_zuul_projects_as_the_executor_passes_them(self):
        projects, project = self.config.job(LIFECYCLE).zuul_projects()
        self.assertEqual("rally-vmct", project["short_name"])
        self.assertFalse(project["required"])
        nova = projects["opendev.org/openstack/nova"]
        self.assertEqual({"name": "openstack/nova", "short_name": "nova", "required": True,
                          "canonical_name": "opendev.org/openstack/nova",
                          "canonical_hostname": "opendev.org", "checkout": "master",
                          "src_dir": "src/opendev.org/openstack/nova"}, nova)

    def fake_devstack(self):
        devstack = os.path.join(self.tmp, "devstack")
        path = os.path.join(devstack, zuul_job.LOCAL_CONF_MODULE)
        os.makedirs(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(textwrap.dedent(RECORDER))
        return devstack

    def test_local_conf_written_by_devstacks_module_with_the_roles_arguments(self):
        out = os.path.join(self.tmp, "local.conf")
        rc, _, err = self.cli("--ip", "controller=10.208.0.2", "local-conf", LIFECYCLE,
                              "--devstack", self.fake_devstack(), "--out", out,
                              "--localrc", "OVS_DATAPATH_TYPE=netdev",
                              "--localrc", "LIBVIRT_TYPE=kvm")
        self.assertEqual(0, rc, err)
        self.assertIn("warning: recorded", err)
        with open(out) as f:
            args = json.load(f)
        self.assertEqual("10.208.0.2", args["localrc"]["HOST_IP"])
        # this machine's settings over the job's
        self.assertEqual("netdev", args["localrc"]["OVS_DATAPATH_TYPE"])
        self.assertEqual("kvm", args["localrc"]["LIBVIRT_TYPE"])
        # the netdev datapath's internal ports go deaf in a namespace: agents plug veths
        self.assertEqual("True", args["localrc"]["Q_OVS_USE_VETH"])
        self.assertIn("site setting over the job's: Q_OVS_USE_VETH=True", err)
        self.assertEqual(["rally-openstack", "rally-vmct"], list(args["plugins"]))
        self.assertIs(False, args["services"]["etcd3"])
        self.assertEqual("/opt/stack", args["base_dir"])
        self.assertEqual("rally-vmct", args["project"]["short_name"])
        self.assertIn("opendev.org/openstack/rally", args["projects"])

    def test_site_settings_bring_what_they_need_unless_given(self):
        self.assertEqual({"OVS_DATAPATH_TYPE": "netdev", "Q_OVS_USE_VETH": "True"},
                         zuul_job.site_localrc({"OVS_DATAPATH_TYPE": "netdev"}))
        self.assertEqual({"OVS_DATAPATH_TYPE": "netdev", "Q_OVS_USE_VETH": "False"},
                         zuul_job.site_localrc({"OVS_DATAPATH_TYPE": "netdev",
                                                "Q_OVS_USE_VETH": "False"}))
        self.assertEqual({"OVS_DATAPATH_TYPE": "system"},
                         zuul_job.site_localrc({"OVS_DATAPATH_TYPE": "system"}))

    def test_local_conf_needs_the_devstack_tree(self):
        rc, _, err = self.cli("local-conf", LIFECYCLE, "--devstack", self.tmp,
                              "--out", os.path.join(self.tmp, "x"))
        self.assertEqual(1, rc)
        self.assertIn("write-devstack-local-conf", err)

    def test_var_prints_lists_as_lines_and_dicts_as_json(self):
        rc, out, _ = self.cli("var", LIFECYCLE, "vmct_tasks")
        self.assertEqual(0, rc)
        self.assertEqual(["samples/tasks/lifecycle.yaml", "samples/tasks/reboot.yaml",
                          "samples/tasks/stop-start.yaml"], out.split())
        rc, out, _ = self.cli("var", LIFECYCLE, "vmct_expect_kinds")
        self.assertEqual({"kvm": 1, "docker": 1}, json.loads(out))
        rc, _, err = self.cli("var", LIFECYCLE, "vmct_nope")
        self.assertEqual(1, rc)
        self.assertIn("sets no variable vmct_nope", err)

    def test_bad_pairs_name_the_option(self):
        rc, _, err = self.cli("--ip", "10.0.0.1", "projects", LIFECYCLE)
        self.assertEqual(1, rc)
        self.assertIn("--ip '10.0.0.1': use NAME=VALUE", err)

    def test_projects_lists_each_with_its_branch(self):
        rc, out, _ = self.cli("projects", "rally-vmct-devstack-lifecycle-2026-1")
        self.assertEqual(0, rc)
        lines = dict(line.split() for line in out.splitlines())
        self.assertEqual("stable/2026.1", lines["opendev.org/openstack/nova"])
        self.assertEqual("stable/2026.1", lines["opendev.org/openstack/devstack"])
