"""The Zuul jobs, playbooks and roles: parsed and checked for names, files and artifacts."""

import configparser
import glob
import importlib.util
import os
import re
import tomllib

import testtools
import yaml

from tests.unit.devstack import base

ROOT = base.ROOT
BASE = "rally-vmct-devstack-base"
LIFECYCLE = "rally-vmct-devstack-lifecycle"
BENCHMARK = "rally-vmct-devstack-benchmark"
MULTINODE = "rally-vmct-devstack-multinode"
OVN_JOB = "rally-vmct-devstack-lifecycle-ovn"
# the devstack jobs on devstack's master: ML2/OVS but OVN_JOB
JOBS = (BASE, LIFECYCLE, BENCHMARK, MULTINODE, OVN_JOB)
# the lifecycle job on a stable branch: rally-vmct-devstack-lifecycle-2025-1 on stable/2025.1
STABLE_JOB_RE = re.compile(r"^%s-(\d{4})-(\d)$" % LIFECYCLE)
# openstack-zuul-jobs' tox jobs (tox -e pep8, tox -e py311 on debian-bookworm) and their envs
TOX_JOBS = {"openstack-tox-pep8": "pep8", "openstack-tox-py311": "py311"}
UNIT_PYTHON = "3.11"  # openstack-tox-py311's python_version
# the Docker driver's unit tests (nova-docker/tests/unit): the tox env and the job running it
DRIVER_TOX_ENV = "nova-docker"
DRIVER_TOX_JOB = "rally-vmct-tox-nova-docker"
# devstack's services of ML2/OVN, which devstack's own job enables (q-ovn-agent from 2025.2
# on, its metadata extension replacing q-ovn-metadata-agent), and of ML2/OVS
OVN_SERVICES = ("ovn-controller", "ovn-northd", "ovs-vswitchd", "ovsdb-server", "q-ovn-agent")
OVN_METADATA_AGENT = "q-ovn-metadata-agent"
# on a subnode (devstack's group-vars): all but the northbound/southbound databases
SUBNODE_OVN_SERVICES = tuple(s for s in OVN_SERVICES if s != "ovn-northd")
OVS_AGENTS = ("q-agt", "q-dhcp", "q-l3", "q-meta")
# roles that come from devstack (roles: - zuul: opendev.org/openstack/devstack)
DEVSTACK_ROLES = {"orchestrate-devstack"}
# vmct.tiny servers (1 VCPU) one devstack compute holds at once: 2 vCPUs on this machine's node
# x Nova's default cpu_allocation_ratio 4.0 (placement, 2026-11-28); the Docker compute the same
SERVERS_PER_COMPUTE = 8
# files vmct-run-tasks writes whatever the tasks are
ALWAYS_WRITTEN = {"status.txt", "comparison.csv", "comparison.json"}


_spec = importlib.util.spec_from_file_location(
    "zuul_job", os.path.join(ROOT, "tools", "devstack", "zuul_job.py"))
zuul_job = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zuul_job)


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def nova_releases():
    """nova_docker_vmct.NOVA_RELEASES ({31: '2025.1 Epoxy', ...}) without importing Nova."""
    path = os.path.join(ROOT, "nova-docker", "nova_docker_vmct", "__init__.py")
    spec = importlib.util.spec_from_file_location("_nova_docker_vmct", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.NOVA_RELEASES


def project_name(entry):
    """'openstack/nova' of a required-projects entry (string or dict, with or without host)."""
    name = entry if isinstance(entry, str) else entry["name"]
    return "/".join(name.split("/")[-2:])


def pipeline_jobs(project, pipeline):
    """{job name: its options in that pipeline ({} when listed as a plain name)}."""
    jobs = {}
    for job in project.get(pipeline, {}).get("jobs", []):
        if isinstance(job, str):
            jobs[job] = {}
        else:
            (name, options), = job.items()
            jobs[name] = options or {}
    return jobs


class ZuulConfig(object):
    """A test case's mixin: .zuul.d/*.yaml loaded, and how Zuul reads a job."""

    def setUp(self):
        super().setUp()
        self.jobs, self.nodesets, self.projects = {}, {}, []
        files = sorted(glob.glob(os.path.join(ROOT, ".zuul.d", "*.yaml")))
        self.assertTrue(files)
        for path in files:
            with open(path) as f:
                items = yaml.safe_load(f)
            for item in items:
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
        self.zuul = zuul_job.ZuulConfig(files)

    def chain(self, job):
        """The job and its parents defined here, the job first."""
        return self.zuul.chain(job)

    def var(self, job, name):
        """A job variable as Zuul merges it through the job's parents (ours only)."""
        return self.zuul.job(job).vars[name]

    def merged(self, job, name, group=None):
        """A dict variable as Zuul merges it; with ``group``, that group's group-vars."""
        frozen = self.zuul.job(job)
        where = frozen.group_vars.get(group, {}) if group else frozen.vars
        return where.get(name, {})

    def attr(self, job, name):
        value = self.zuul.job(job).nearest(name, KeyError)
        if value is KeyError:
            raise KeyError(name)
        return value

    def required_projects(self, job):
        return {project_name(p) for p in self.zuul.job(job).required_projects()}

    def checkout(self, job, project):
        """The ref Zuul checks out for ``project`` in ``job``, None for the change's branch."""
        return self.zuul.job(job).required_projects().get(zuul_job.canonical(project))

    def stable_jobs(self):
        """{job name: the stable branch its name says}, e.g. ...-2025-1: stable/2025.1."""
        found = {}
        for name in self.jobs:
            m = STABLE_JOB_RE.match(name)
            if m:
                found[name] = "stable/%s.%s" % m.groups()
        return found

    def devstack_jobs(self):
        """The base job's descendants: the jobs on master and the stable ones."""
        return [name for name in self.jobs
                if any(b["name"] == BASE for b in self.chain(name)[1:])]


class ZuulConfigTestCase(ZuulConfig, testtools.TestCase):

    def test_job_names(self):
        self.assertEqual(set(JOBS) | set(self.stable_jobs()) | {DRIVER_TOX_JOB},
                         set(self.jobs))
        self.assertTrue(self.jobs[BASE]["abstract"])
        self.assertEqual("devstack", self.jobs[BASE]["parent"])
        for name in (LIFECYCLE, BENCHMARK, MULTINODE):
            self.assertEqual(BASE, self.jobs[name]["parent"])
        # the OVN job and the stable ones are the lifecycle job with another Neutron or branch
        for name in [OVN_JOB, *self.stable_jobs()]:
            self.assertEqual(LIFECYCLE, self.jobs[name]["parent"], name)
        for name in self.jobs:
            if name != BASE:
                self.assertTrue(self.jobs[name].get("description"), name)

    def test_tasks_of_each_job(self):
        """Every job runs sample tasks that exist, each once; multinode runs none of its own."""
        single = set()
        for name in self.devstack_jobs():
            tasks = self.var(name, "vmct_tasks")
            self.assertTrue(tasks, name)
            self.assertEqual(len(tasks), len(set(tasks)), name)
            for task in tasks:
                self.assertRegex(task, r"^samples/tasks/[\w-]+\.yaml$", name)
                self.assertTrue(os.path.isfile(os.path.join(ROOT, task)), (name, task))
            if name != MULTINODE:
                single.update(tasks)
        # what two hosts run was proven on one first
        self.assertLessEqual(set(self.var(MULTINODE, "vmct_tasks")), single)

    def test_every_level_fits_one_node(self):
        """No task of a job starts more servers of a kind than one devstack node holds.

        The job's task args over each sample's default levels; "never fewer than the level"
        makes a level its own number of servers at once.
        """
        for name in self.devstack_jobs():
            args = self.var(name, "vmct_task_args")
            for task in self.var(name, "vmct_tasks"):
                with open(os.path.join(ROOT, task)) as f:
                    default = re.search(r"concurrency \| default\((\[[^]]*\])\)", f.read())
                levels = args.get("concurrency") or yaml.safe_load(default.group(1))
                self.assertLessEqual(max(levels), SERVERS_PER_COMPUTE, (name, task, levels))

    def test_plugins_rally_before_vmct(self):
        plugins = list(self.var(BASE, "devstack_plugins"))
        self.assertEqual(["rally-openstack", "rally-vmct"], plugins)
        required = self.required_projects(BASE)
        self.assertIn("openstack/rally-openstack", required)
        self.assertIn("openstack/rally", required)

    def plugin_services(self):
        """The services devstack/plugin.sh and devstack/lib/vmct act on."""
        text = ""
        for path in ("plugin.sh", os.path.join("lib", "vmct")):
            with open(os.path.join(base.DEVSTACK, path)) as f:
                text += f.read()
        return {word for names in re.findall(r"is_service_enabled ([\w -]+)", text)
                for word in names.split()}

    def test_single_node_runs_both_computes(self):
        services = self.var(BASE, "devstack_services")
        # the plugin's own services exist in the plugin, and both of its computes run
        ours = {s for s in services if s.startswith("vmct")}
        self.assertLessEqual(ours, self.plugin_services())
        self.assertTrue(all(services[s] for s in ours), services)
        localrc = self.var(BASE, "devstack_localrc")
        with open(os.path.join(base.DEVSTACK, "lib", "vmct")) as f:
            modes = re.search(r'VMCT_DOCKER_COMPUTE_MODES="([^"]+)"', f.read()).group(1)
        self.assertIn(localrc["VMCT_DOCKER_COMPUTE"], modes.split())

    def assertOvs(self, job, localrc, services, agents=OVS_AGENTS, ovn=OVN_SERVICES):
        self.assertEqual("openvswitch", localrc.get("Q_AGENT"), job)
        self.assertEqual("openvswitch", localrc.get("Q_ML2_PLUGIN_MECHANISM_DRIVERS"), job)
        self.assertEqual("vxlan", localrc.get("Q_ML2_TENANT_NETWORK_TYPE"), job)
        for service in agents:
            self.assertIs(True, services.get(service), (job, service))
        # devstack's job enables them: off, each by name
        for service in ovn + (OVN_METADATA_AGENT,):
            self.assertIs(False, services.get(service), (job, service))

    def assertOvn(self, job, localrc, services):
        self.assertEqual("ovn", localrc.get("Q_AGENT"), job)
        self.assertEqual("ovn", localrc.get("Q_ML2_PLUGIN_MECHANISM_DRIVERS"), job)
        self.assertEqual("geneve", localrc.get("Q_ML2_TENANT_NETWORK_TYPE"), job)
        # on again over the base job's ML2/OVS, each by name
        for service in OVN_SERVICES:
            self.assertIs(True, services.get(service), (job, service))
        # one metadata service (the OVN agent's extension), and none of the OVS agents
        for service in OVS_AGENTS + (OVN_METADATA_AGENT,):
            self.assertIs(False, services.get(service), (job, service))

    def test_neutron_backend_of_each_job(self):
        """ML2/OVN and its services in the OVN job, ML2/OVS and its agents in the others.

        Each service named (devstack's job enables the OVN ones), subnodes included.
        """
        for name in self.devstack_jobs():
            localrc = self.merged(name, "devstack_localrc")
            services = self.merged(name, "devstack_services")
            if name == OVN_JOB:
                self.assertOvn(name, localrc, services)
            else:
                self.assertOvs(name, localrc, services)
        self.assertOvs(MULTINODE + " subnode",
                       self.merged(MULTINODE, "devstack_localrc", group="subnode"),
                       self.merged(MULTINODE, "devstack_services", group="subnode"),
                       agents=("q-agt",), ovn=SUBNODE_OVN_SERVICES)
        # the OVN job is the OVS lifecycle job but for Neutron
        self.assertEqual(self.var(LIFECYCLE, "vmct_tasks"), self.var(OVN_JOB, "vmct_tasks"))
        self.assertEqual({"devstack_localrc", "devstack_services"},
                         set(self.jobs[OVN_JOB]["vars"]))

    def test_stable_jobs_pin_devstack_and_nova_to_their_branch(self):
        stable = self.stable_jobs()
        self.assertTrue(stable)
        for name, branch in stable.items():
            # the job's override: every project of the job that has the branch, requirements'
            # upper constraints and devstack's job variant included
            self.assertEqual(branch, self.jobs[name].get("override-checkout"), name)
            required = self.required_projects(name)
            for project in ("openstack/devstack", "openstack/nova"):
                self.assertIn(project, required, name)
                self.assertEqual(branch, self.checkout(name, project), (name, project))
        # the others run devstack's master
        for name in JOBS:
            for project in ("openstack/devstack", "openstack/nova"):
                self.assertIsNone(self.checkout(name, project), (name, project))

    def test_each_stable_nova_series_has_its_job(self):
        """A lifecycle job per stable Nova series of the driver, on its branch.

        Every series of NOVA_RELEASES but the newest (devstack's master), and none that the
        driver does not run under.
        """
        releases = nova_releases()
        stable = {m: "stable/" + releases[m].split()[0] for m in releases if m != max(releases)}
        self.assertTrue(stable)
        jobs = {branch: name for name, branch in self.stable_jobs().items()}
        self.assertEqual(set(stable.values()), set(jobs))
        for major, branch in stable.items():
            self.assertIn("Nova %d" % major, self.jobs[jobs[branch]]["description"])

    def test_stable_jobs_in_pipelines(self):
        (project,) = self.projects
        check = pipeline_jobs(project, "check")
        by_branch = sorted(self.stable_jobs(), key=lambda n: self.stable_jobs()[n])
        # the oldest and the newest on every change, voting; every one daily and on demand
        for name in (by_branch[0], by_branch[-1]):
            self.assertIn(name, check)
            self.assertNotIn("voting", check[name])
        on_demand = set(check) | set(pipeline_jobs(project, "experimental"))
        self.assertLessEqual(set(by_branch), on_demand)
        self.assertLessEqual(set(by_branch), set(pipeline_jobs(project, "periodic")))

    def test_multinode_docker_compute_on_the_subnode(self):
        job = self.jobs[MULTINODE]
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
        for name in self.devstack_jobs():
            self.assertIn(self.attr(name, "nodeset"), self.nodesets)
        for nodeset in self.nodesets.values():
            for node in nodeset["nodes"]:
                self.assertEqual("debian-bookworm", node["label"])

    def test_playbooks_and_roles_exist(self):
        for kind in ("run", "post-run"):
            path = self.attr(BASE, kind)
            self.assertTrue(os.path.isfile(os.path.join(ROOT, path)), path)
            for play in load(path):
                for role in play["roles"]:
                    if role in DEVSTACK_ROLES:
                        continue
                    self.assertTrue(os.path.isfile(
                        os.path.join(ROOT, "roles", role, "tasks", "main.yaml")), role)

    def test_project_pipelines(self):
        (project,) = self.projects
        ours = {name for name, body in self.jobs.items() if not body.get("abstract")}
        listed = set()
        for pipeline in ("check", "gate", "experimental", "periodic"):
            jobs = pipeline_jobs(project, pipeline)
            self.assertTrue(set(jobs) <= ours | set(TOX_JOBS), (pipeline, jobs))
            listed.update(jobs)
        # no job defined for nothing
        self.assertEqual(ours, listed - set(TOX_JOBS))
        for pipeline in ("check", "gate"):
            jobs = pipeline_jobs(project, pipeline)
            for name in (LIFECYCLE, BENCHMARK, OVN_JOB, DRIVER_TOX_JOB, *TOX_JOBS):
                self.assertIn(name, jobs, pipeline)
            # the tox jobs vote (not listed with options such as voting: false)
            for name in (DRIVER_TOX_JOB, *TOX_JOBS):
                self.assertEqual({}, jobs[name], (pipeline, name))
        # what gates votes
        for name, options in pipeline_jobs(project, "gate").items():
            self.assertNotEqual(False, options.get("voting"), name)

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

    def test_driver_tests_have_their_tox_env_and_job(self):
        tox = configparser.ConfigParser(interpolation=None)
        tox.read(os.path.join(ROOT, "tox.ini"))
        section = "testenv:" + DRIVER_TOX_ENV
        self.assertIn(section, tox, "tox -e %s runs the Docker driver's unit tests (Zuul job"
                      " %s)" % (DRIVER_TOX_ENV, DRIVER_TOX_JOB))
        env = tox[section]
        # in nova-docker/, its unit tests, the driver installed as devstack installs it
        self.assertEqual("{toxinidir}/nova-docker", env["changedir"])
        self.assertTrue(os.path.isdir(os.path.join(ROOT, "nova-docker", "tests", "unit")))
        self.assertIn("stestr --test-path ./tests/unit run", env["commands"])
        self.assertIn("nova-docker/tools/install-driver --python {envpython} --editable",
                      env["commands_pre"])
        self.assertEqual("True", env["skip_install"])
        # the driver's dependencies (Nova's range) and test tools, as its package says
        with open(os.path.join(ROOT, "nova-docker", "pyproject.toml"), "rb") as f:
            package = tomllib.load(f)["project"]
        deps = [line.strip() for line in env["deps"].splitlines()
                if line.strip() and not line.strip().startswith(("#", "-c"))]
        self.assertEqual(package["dependencies"] + package["optional-dependencies"]["test"],
                         deps)
        # constraints that exist and pick the newest series (not a Nova pip falls back to)
        (constraints,) = [line.strip()[2:] for line in env["deps"].splitlines()
                          if line.strip().startswith("-c")]
        constraints = constraints.replace("{toxinidir}", ROOT)
        self.assertTrue(os.path.isfile(constraints), constraints)
        with open(constraints) as f:
            novas = [line.strip()[len("nova=="):] for line in f if line.startswith("nova==")]
        self.assertEqual([str(max(nova_releases()))], [v.split(".")[0] for v in novas])
        # the Zuul job: that env, on the unit tests' Python, for changes to the driver
        job = self.jobs[DRIVER_TOX_JOB]
        self.assertEqual("openstack-tox", job["parent"])
        self.assertEqual(DRIVER_TOX_ENV, job["vars"]["tox_envlist"])
        self.assertEqual(UNIT_PYTHON, job["vars"]["python_version"])
        for path in ("nova-docker/nova_docker_vmct/driver.py", "tox.ini"):
            self.assertTrue(any(re.match(f, path) for f in job["files"]), path)


class JobsOnThePluginTestCase(ZuulConfig, base.PluginTestCase):
    """devstack/plugin.sh given a job's Neutron settings: where Rally reaches instances."""

    def access_namespace(self, job):
        localrc = self.merged(job, "devstack_localrc")
        services = self.merged(job, "devstack_services")
        enabled = [s for s in base.SINGLE_NODE.split(",") if services.get(s, True)]
        enabled += [s for s, on in services.items() if on and s not in enabled]
        r = self.run_plugin("stack", "extra", services=",".join(enabled),
                            Q_AGENT=localrc["Q_AGENT"],
                            VMCT_QEMU_GUEST_DIR=self.make_qemu_guest(),
                            VMCT_DOCKER_IMAGE_FILE=self.make_docker_tar())
        self.assertRan(r)
        with open(os.path.join(self.data, "vmct", "task-args.yaml")) as f:
            return yaml.safe_load(f)["access_namespace"]

    def test_ovn_job_reaches_instances_from_the_ovn_metadata_namespace(self):
        # the OVN metadata port's namespace: there is no DHCP agent, no qdhcp namespace
        self.assertEqual("ovnmeta-id-of-vmct-net", self.access_namespace(OVN_JOB))

    def test_ovs_job_reaches_instances_from_the_dhcp_namespace(self):
        self.assertEqual("qdhcp-id-of-vmct-net", self.access_namespace(LIFECYCLE))


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
        run = next(t for t in tasks if "vmct-job-tasks" in str(t.get("command", "")))
        self.assertFalse(run["failed_when"])
        self.assertEqual("vmct_run", run["register"])
        fail = tasks[-1]
        self.assertIn("fail", fail)
        self.assertEqual("vmct_run.rc != 0", fail["when"])
        self.assertIn("rally exit code 2", fail["fail"]["msg"])
        self.assertLess(names.index(run["name"]), names.index(fail["name"]))

    def test_run_role_passes_only_options_the_script_takes(self):
        """The role and tools/devstack-job run one script: each option the role gives exists."""
        with open(os.path.join(ROOT, "roles", "run-vmct-tasks", "tasks", "main.yaml")) as f:
            given = set(re.findall(r"'(--[\w-]+)'", f.read()))
        with open(os.path.join(base.DEVSTACK, "tools", "vmct-job-tasks")) as f:
            accepted = set(re.findall(r"^\s+(--[\w-]+)\)", f.read(), re.M))
        self.assertLessEqual(given, accepted)
        self.assertIn("--expect", given)
        # tools/devstack-job's node gives the same ones, from the same job variables
        with open(os.path.join(ROOT, "tools", "devstack", "node-steps")) as f:
            runner = f.read().split("tasks() {", 1)[1].split("\n}\n", 1)[0]
        self.assertEqual(given, set(re.findall(r"(--[\w-]+) ", runner)) - {"--json"})

    def test_fetch_role_publishes_only_existing_files(self):
        tasks = load("roles/fetch-vmct-task-results/tasks/main.yaml")
        ret = next(t for t in tasks if "zuul_return" in t)
        self.assertIn("selectattr('stat.exists')",
                      ret["zuul_return"]["data"]["zuul"]["artifacts"])
        sync = next(t for t in tasks if "synchronize" in t)
        self.assertEqual("pull", sync["synchronize"]["mode"])
        self.assertIn("zuul.executor.log_root", sync["synchronize"]["dest"])
