"""The Zuul jobs, playbooks and roles: parsed and checked for names, files and artifacts."""

import configparser
import glob
import os
import re

import testtools
import yaml

from tests.unit.devstack import base

ROOT = base.ROOT
JOBS = ("rally-vmct-devstack-base", "rally-vmct-devstack-lifecycle",
        "rally-vmct-devstack-benchmark", "rally-vmct-devstack-multinode")
# openstack-zuul-jobs' tox jobs (tox -e pep8, tox -e py311 on debian-bookworm) and their envs
TOX_JOBS = {"openstack-tox-pep8": "pep8", "openstack-tox-py311": "py311"}
UNIT_PYTHON = "3.11"  # openstack-tox-py311's python_version
# roles that come from devstack (roles: - zuul: opendev.org/openstack/devstack)
DEVSTACK_ROLES = {"orchestrate-devstack"}
# files vmct-run-tasks writes whatever the tasks are
ALWAYS_WRITTEN = {"status.txt", "comparison.csv", "comparison.json"}


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


class ZuulConfigTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.jobs, self.nodesets, self.projects = {}, {}, []
        files = sorted(glob.glob(os.path.join(ROOT, ".zuul.d", "*.yaml")))
        self.assertTrue(files)
        for path in files:
            for item in yaml.safe_load(open(path)):
                (kind, body), = item.items()
                if kind == "job":
                    self.assertNotIn(body["name"], self.jobs, "job defined twice")
                    self.jobs[body["name"]] = body
                elif kind == "nodeset":
                    self.nodesets[body["name"]] = body
                elif kind == "project":
                    self.projects.append(body)
                else:
                    self.fail("unexpected %s in %s" % (kind, path))

    def var(self, job, name):
        """A job variable, looked up through the job's parents (ours only)."""
        while job in self.jobs:
            if name in self.jobs[job].get("vars", {}):
                return self.jobs[job]["vars"][name]
            job = self.jobs[job].get("parent")
        raise KeyError(name)

    def attr(self, job, name):
        while job in self.jobs:
            if name in self.jobs[job]:
                return self.jobs[job][name]
            job = self.jobs[job].get("parent")
        raise KeyError(name)

    def test_job_names(self):
        self.assertEqual(set(JOBS), set(self.jobs))
        self.assertTrue(self.jobs["rally-vmct-devstack-base"]["abstract"])
        self.assertEqual("devstack", self.jobs["rally-vmct-devstack-base"]["parent"])
        for name in JOBS[1:]:
            self.assertEqual("rally-vmct-devstack-base", self.jobs[name]["parent"])
            self.assertTrue(self.jobs[name].get("description"))

    def test_tasks_of_each_job(self):
        """Every job runs sample tasks that exist, each once; multinode runs none of its own."""
        single = set()
        for name in JOBS[1:]:
            tasks = self.var(name, "vmct_tasks")
            self.assertTrue(tasks, name)
            self.assertEqual(len(tasks), len(set(tasks)), name)
            for task in tasks:
                self.assertRegex(task, r"^samples/tasks/[\w-]+\.yaml$", name)
                self.assertTrue(os.path.isfile(os.path.join(ROOT, task)), (name, task))
            if name != "rally-vmct-devstack-multinode":
                single.update(tasks)
        # what two hosts run was proven on one first
        self.assertLessEqual(set(self.var("rally-vmct-devstack-multinode", "vmct_tasks")),
                             single)

    def test_plugins_rally_before_vmct(self):
        plugins = list(self.var("rally-vmct-devstack-base", "devstack_plugins"))
        self.assertEqual(["rally-openstack", "rally-vmct"], plugins)
        required = self.jobs["rally-vmct-devstack-base"]["required-projects"]
        self.assertIn("opendev.org/openstack/rally-openstack", required)
        self.assertIn("opendev.org/openstack/rally", required)

    def plugin_services(self):
        """The services devstack/plugin.sh and devstack/lib/vmct act on."""
        text = ""
        for path in ("plugin.sh", os.path.join("lib", "vmct")):
            with open(os.path.join(base.DEVSTACK, path)) as f:
                text += f.read()
        return {word for names in re.findall(r"is_service_enabled ([\w -]+)", text)
                for word in names.split()}

    def test_single_node_runs_both_computes(self):
        services = self.var("rally-vmct-devstack-base", "devstack_services")
        # the plugin's own services exist in the plugin, and both of its computes run
        ours = {s for s in services if s.startswith("vmct")}
        self.assertLessEqual(ours, self.plugin_services())
        self.assertTrue(all(services[s] for s in ours), services)
        localrc = self.var("rally-vmct-devstack-base", "devstack_localrc")
        # one Neutron backend: OVS agents with OVS, no OVN services
        if localrc["Q_AGENT"] == "openvswitch":
            self.assertTrue(services["q-agt"])
            self.assertFalse([s for s, on in services.items() if s.startswith("ovn") and on])
        with open(os.path.join(base.DEVSTACK, "lib", "vmct")) as f:
            modes = re.search(r'VMCT_DOCKER_COMPUTE_MODES="([^"]+)"', f.read()).group(1)
        self.assertIn(localrc["VMCT_DOCKER_COMPUTE"], modes.split())

    def test_multinode_docker_compute_on_the_subnode(self):
        job = self.jobs["rally-vmct-devstack-multinode"]
        nodeset = self.nodesets[job["nodeset"]]
        groups = {g["name"]: g["nodes"] for g in nodeset["groups"]}
        self.assertEqual(["compute1"], groups["subnode"])
        sub = job["group-vars"]["subnode"]
        self.assertTrue(sub["devstack_services"]["vmct-docker"])
        self.assertEqual("replace", sub["devstack_localrc"]["VMCT_DOCKER_COMPUTE"])
        self.assertIn("rally-vmct", sub["devstack_plugins"])
        self.assertFalse(job["vars"]["devstack_services"]["vmct-docker"])
        self.assertEqual("kvm docker", job["vars"]["devstack_localrc"]["VMCT_KINDS"])

    def test_nodesets_exist(self):
        for name in JOBS:
            self.assertIn(self.attr(name, "nodeset"), self.nodesets)
        for nodeset in self.nodesets.values():
            for node in nodeset["nodes"]:
                self.assertEqual("debian-bookworm", node["label"])

    def test_playbooks_and_roles_exist(self):
        for kind in ("run", "post-run"):
            path = self.attr("rally-vmct-devstack-base", kind)
            self.assertTrue(os.path.isfile(os.path.join(ROOT, path)), path)
            for play in load(path):
                for role in play["roles"]:
                    if role in DEVSTACK_ROLES:
                        continue
                    self.assertTrue(os.path.isfile(
                        os.path.join(ROOT, "roles", role, "tasks", "main.yaml")), role)

    def test_project_pipelines(self):
        (project,) = self.projects
        for pipeline in ("check", "gate"):
            names = [j if isinstance(j, str) else next(iter(j))
                     for j in project[pipeline]["jobs"]]
            self.assertTrue(set(names) <= (set(JOBS) - {"rally-vmct-devstack-base"})
                            | set(TOX_JOBS), names)
            for name in ("rally-vmct-devstack-lifecycle", "rally-vmct-devstack-benchmark",
                         *TOX_JOBS):
                self.assertIn(name, names, pipeline)
            # the tox jobs vote (not listed with options such as voting: false)
            for job in project[pipeline]["jobs"]:
                if not isinstance(job, str):
                    self.assertNotIn(next(iter(job)), TOX_JOBS)

    def test_tox_jobs_run_envs_that_exist(self):
        tox = configparser.ConfigParser(interpolation=None)
        tox.read(os.path.join(ROOT, "tox.ini"))
        self.assertIn("testenv:pep8", tox)
        self.assertIn("stestr --test-path ./tests/unit run", tox["testenv"]["commands"])
        # plain `tox`: unit tests and pep8, not the functional tests (sysbench, netperf, sshd)
        self.assertEqual(["py3", "pep8"], tox["tox"]["envlist"].split(","))
        # the Python the unit job runs is the one the package declares
        setup = configparser.ConfigParser(interpolation=None)
        setup.read(os.path.join(ROOT, "setup.cfg"))
        self.assertEqual("py" + UNIT_PYTHON.replace(".", ""), TOX_JOBS["openstack-tox-py311"])
        self.assertIn("Programming Language :: Python :: " + UNIT_PYTHON,
                      setup["metadata"]["classifier"].splitlines())
        self.assertEqual(">=" + UNIT_PYTHON, setup["options"]["python_requires"])


class RolesTestCase(testtools.TestCase):

    def test_artifacts_are_what_vmct_run_tasks_writes(self):
        artifacts = load("roles/fetch-vmct-task-results/defaults/main.yaml")["vmct_artifacts"]
        files = {a["url"].split("/", 1)[1] for a in artifacts}
        for a in artifacts:
            self.assertTrue(a["url"].startswith("vmct-results/"), a)
            self.assertEqual({"name", "url"}, set(a))
        with open(os.path.join(base.DEVSTACK, "tools", "vmct-run-tasks")) as f:
            script = f.read()
        defaults = set(re.findall(r"[\w-]+=([\w.-]+\.(?:html|json|xml))\b",
                                  script.split("EXPORTS=(", 1)[1].split("fi\n", 1)[0]))
        self.assertEqual({"report.html", "report.json", "junit.xml", "comparison.html"},
                         defaults)
        self.assertEqual(defaults | ALWAYS_WRITTEN, files)

    def test_run_role_fails_on_sla_after_the_reports(self):
        tasks = load("roles/run-vmct-tasks/tasks/main.yaml")
        names = [t["name"] for t in tasks]
        run = next(t for t in tasks if "vmct-run-tasks" in str(t.get("command", "")))
        self.assertFalse(run["failed_when"])
        self.assertEqual("vmct_run", run["register"])
        fail = tasks[-1]
        self.assertIn("fail", fail)
        self.assertEqual("vmct_run.rc != 0", fail["when"])
        self.assertIn("rally exit code 2", fail["fail"]["msg"])
        self.assertLess(names.index(run["name"]), names.index(fail["name"]))
        # hosts that joined after the controller stacked: wait, map into the cell, zone them
        wait, aggr = [t for t in tasks if "vmct_aggregates.py" in str(t.get("command", ""))]
        self.assertIn("--wait-only", wait["command"]["argv"])
        self.assertNotIn("--wait-only", aggr["command"]["argv"])
        discover = next(t for t in tasks if "discover_hosts" in str(t.get("command", "")))
        self.assertLess(tasks.index(wait), tasks.index(discover))
        self.assertLess(tasks.index(discover), tasks.index(aggr))
        self.assertLess(tasks.index(aggr), tasks.index(run))

    def test_fetch_role_publishes_only_existing_files(self):
        tasks = load("roles/fetch-vmct-task-results/tasks/main.yaml")
        ret = next(t for t in tasks if "zuul_return" in t)
        self.assertIn("selectattr('stat.exists')",
                      ret["zuul_return"]["data"]["zuul"]["artifacts"])
        sync = next(t for t in tasks if "synchronize" in t)
        self.assertEqual("pull", sync["synchronize"]["mode"])
        self.assertIn("zuul.executor.log_root", sync["synchronize"]["dest"])
