#!/usr/bin/env python3
"""Read a Zuul job the way Zuul and Ansible do, and write a node's devstack local.conf from it.

tools/devstack-job runs a job of .zuul.d/ outside Zuul; this module is what it knows of
Zuul, so the job definition stays the one source of what runs:

- a job's chain of parents, across the files given (ours, devstack's .zuul.yaml);
- its attributes as Zuul inherits them: ``vars``, ``group-vars`` and ``host-vars`` merged
  recursively, each job over its parent; ``required-projects`` collected; ``nodeset``,
  ``run``, ``timeout`` and ``override-checkout`` from the nearest job that sets them;
- a node's variables as Ansible sees them in Zuul's inventory: the job's ``vars``, a group's
  ``group-vars`` replacing whole variables (Ansible's default hash behaviour), then
  ``host-vars``; role defaults below all of them; Jinja2 expressions rendered with the
  facts the runner gives (``hostvars[NODE].nodepool.private_ipv4``, ``external_bridge_mtu``);
- ``zuul.projects`` and ``zuul.project`` as the executor passes them to the roles.

local.conf itself is written by devstack's own code, the module of its
write-devstack-local-conf role (``roles/write-devstack-local-conf/library/
devstack_local_conf.py`` of the devstack tree), with the arguments that role passes.

    zuul_job.py --config PATH... show JOB [--node NODE]
    zuul_job.py --config PATH... projects JOB
    zuul_job.py --config PATH... var JOB NAME [--node NODE] [--json]
    zuul_job.py --config PATH... local-conf JOB --devstack DIR --out FILE [--node NODE]
                [--localrc NAME=VALUE]...  (with what a setting needs: SITE_NEEDS)

``--config`` takes a file or a directory of ``*.yaml`` (``.zuul.d``), repeatable;
``--role-defaults FILE`` adds a role's defaults; ``--ip NODE=ADDRESS`` and ``--mtu N`` are the
facts (default: every node at 127.0.0.1, MTU 1500).
"""

import argparse
import copy
import glob
import importlib.util
import json
import os
import sys

import yaml

# where the executor places projects on a node (zuul.projects[*].src_dir), and devstack's
# default base directory (devstack_base_dir)
SRC_ROOT = "src"
DEVSTACK_BASE_DIR = "/opt/stack"
DEFAULT_HOST = "opendev.org"
# the project under test: the job runs on a change of rally-vmct
PROJECT = "opendev.org/x/rally-vmct"
LOCAL_CONF_MODULE = os.path.join("roles", "write-devstack-local-conf", "library",
                                 "devstack_local_conf.py")
# devstack's pre.yaml: the external bridge's MTU is the node's smallest minus the VXLAN (30)
# and IPv6 (40) overheads
OVERLAY_OVERHEAD = 70
RENDER_PASSES = 10


class JobError(Exception):
    """A job that cannot be read; the message names what and the fix."""


def deep_merge(base, over):
    """``over`` merged into a copy of ``base``: dicts recursively, anything else replaced."""
    merged = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def canonical(name):
    """'opendev.org/openstack/nova' of 'openstack/nova' or of the canonical name itself."""
    return name if name.count("/") >= 2 else "%s/%s" % (DEFAULT_HOST, name)


def config_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(glob.glob(os.path.join(path, "*.yaml")))
            if not found:
                raise JobError("--config %s: no *.yaml in that directory" % path)
            files.extend(found)
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise JobError("--config %s: no such file or directory" % path)
    return files


class ZuulConfig(object):
    """Jobs and nodesets of Zuul configuration files, the first definition of a name winning."""

    def __init__(self, paths):
        self.jobs, self.nodesets = {}, {}
        for path in config_files(paths):
            with open(path) as f:
                items = yaml.safe_load(f) or []
            for item in items:
                (kind, body), = item.items()
                if kind == "job":
                    # Zuul's branch variants: the runner reads one branch of each repository
                    self.jobs.setdefault(body["name"], body)
                elif kind == "nodeset":
                    self.nodesets.setdefault(body["name"], body)

    def chain(self, name):
        """The job and its parents defined in the files read, the job first."""
        if name not in self.jobs:
            raise JobError("job %s is not defined in the --config files (jobs: %s)"
                           % (name, ", ".join(sorted(self.jobs))))
        jobs, seen = [], set()
        while name in self.jobs and name not in seen:
            seen.add(name)
            jobs.append(self.jobs[name])
            name = self.jobs[name].get("parent")
        return jobs

    def job(self, name):
        return Job(self, name)


class Job(object):
    """A job with its parents' attributes merged in, as Zuul freezes it."""

    def __init__(self, config, name):
        self.name = name
        self.chain = config.chain(name)
        self.config = config
        # the first parent not in the files read (openstack-multinode-fips, base...)
        self.unresolved_parent = self.chain[-1].get("parent")
        self.vars = self._merged("vars")
        self.host_vars = self._merged("host-vars")
        self.group_vars = self._merged("group-vars")

    def _merged(self, attribute):
        value = {}
        for body in reversed(self.chain):
            value = deep_merge(value, body.get(attribute) or {})
        return value

    def nearest(self, attribute, default=None):
        for body in self.chain:
            if attribute in body:
                return body[attribute]
        return default

    def nodeset(self):
        """{'nodes': [...], 'groups': [...]} of the job's nodeset (a name or inline)."""
        nodeset = self.nearest("nodeset")
        if isinstance(nodeset, str):
            if nodeset not in self.config.nodesets:
                raise JobError("nodeset %s of job %s is not defined in the --config files"
                               % (nodeset, self.name))
            nodeset = self.config.nodesets[nodeset]
        if not nodeset:
            raise JobError("job %s has no nodeset" % self.name)
        return nodeset

    def nodes(self):
        return [node["name"] for node in self.nodeset().get("nodes", [])]

    def groups_of(self, node):
        return [g["name"] for g in self.nodeset().get("groups", []) if node in g.get("nodes", [])]

    def required_projects(self):
        """{canonical name: the ref to check out}, the job's parents' projects first."""
        job_checkout = self.nearest("override-checkout")
        projects = {}
        for body in reversed(self.chain):
            for entry in body.get("required-projects") or []:
                if isinstance(entry, str):
                    entry = {"name": entry}
                name = canonical(entry["name"])
                projects[name] = entry.get("override-checkout") or projects.get(name)
        return {name: ref or job_checkout for name, ref in projects.items()}

    def node_vars(self, node, role_defaults=None):
        """The variables Ansible sees on ``node`` (before Jinja2 renders them)."""
        if node not in self.nodes():
            raise JobError("node %s is not in job %s's nodeset (nodes: %s)"
                           % (node, self.name, ", ".join(self.nodes())))
        values = copy.deepcopy(role_defaults or {})
        values.update(copy.deepcopy(self.vars))
        for group in self.groups_of(node):
            values.update(copy.deepcopy(self.group_vars.get(group, {})))
        values.update(copy.deepcopy(self.host_vars.get(node, {})))
        return values

    def zuul_projects(self):
        """zuul.projects and zuul.project as the executor passes them to the roles."""
        projects = {}
        for name, ref in self.required_projects().items():
            projects[name] = project_info(name, ref, required=True)
        project = projects.setdefault(PROJECT, project_info(PROJECT, None, required=False))
        return projects, project


def project_info(name, ref, required):
    short = name.rsplit("/", 1)[-1]
    return {"name": name.split("/", 1)[1], "short_name": short, "canonical_name": name,
            "canonical_hostname": name.split("/", 1)[0],
            "src_dir": "%s/%s" % (SRC_ROOT, name), "required": required,
            "checkout": ref or "master"}


def facts(job, node, ips, mtu):
    """The facts the job's expressions use: hostvars[N].nodepool, external_bridge_mtu."""
    hostvars = {}
    for name in job.nodes():
        hostvars[name] = {"nodepool": {"private_ipv4": ips.get(name, "127.0.0.1")},
                          "inventory_hostname": name}
    return {"hostvars": hostvars, "inventory_hostname": node,
            "groups": {g["name"]: g.get("nodes", []) for g in job.nodeset().get("groups", [])},
            "external_bridge_mtu": mtu - OVERLAY_OVERHEAD}


def render(value, context, strict=True):
    """``value`` with every Jinja2 expression rendered, recursively, as Ansible does.

    Not ``strict``: an expression naming a variable only Ansible's run defines (stage_dir...)
    stays as written.
    """
    import jinja2

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)

    def one(item):
        if isinstance(item, dict):
            return {one(k): one(v) for k, v in item.items()}
        if isinstance(item, list):
            return [one(v) for v in item]
        if not isinstance(item, str):
            return item
        for _ in range(RENDER_PASSES):
            if "{{" not in item and "{%" not in item:
                return item
            try:
                item = env.from_string(item).render(context)
            except jinja2.UndefinedError as e:
                if not strict:
                    return item
                raise JobError("cannot render %r: %s" % (item, e))
        return item

    return one(value)


# the variables the write-devstack-local-conf role passes to its module
LOCAL_CONF_VARS = ("devstack_localrc", "devstack_local_conf", "devstack_base_services",
                   "devstack_services", "devstack_plugins", "tempest_plugins",
                   "devstack_base_dir")


def rendered_vars(job, node, ips, mtu, role_defaults=None, names=None):
    """A node's variables, rendered: ``names`` strictly, or all as far as they render."""
    values = job.node_vars(node, role_defaults)
    values.setdefault("devstack_base_dir", DEVSTACK_BASE_DIR)
    context = dict(values)
    context.update(facts(job, node, ips, mtu))
    if names is None:
        return render(values, context, strict=False)
    return {name: render(values[name], context) for name in names if name in values}


def load_local_conf_module(devstack_dir):
    path = os.path.join(devstack_dir, LOCAL_CONF_MODULE)
    if not os.path.isfile(path):
        raise JobError("--devstack %s: no %s there (give the devstack tree the job runs)"
                       % (devstack_dir, LOCAL_CONF_MODULE))
    spec = importlib.util.spec_from_file_location("devstack_local_conf", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_local_conf(job, node, devstack_dir, out, ips, mtu, site_localrc=None):
    """local.conf of ``node``, by devstack's role module with the role's arguments.

    ``site_localrc``: settings of the machine the job runs on, over the job's
    devstack_localrc (as a Zuul tenant's site variables would be).
    """
    values = rendered_vars(job, node, ips, mtu, names=LOCAL_CONF_VARS)
    values["devstack_localrc"] = dict(values.get("devstack_localrc") or {}, **(site_localrc or {}))
    projects, project = job.zuul_projects()
    module = load_local_conf_module(devstack_dir)
    conf = module.LocalConf(values.get("devstack_localrc"), values.get("devstack_local_conf"),
                            values.get("devstack_base_services"),
                            values.get("devstack_services"), values.get("devstack_plugins"),
                            values["devstack_base_dir"], projects, project,
                            values.get("tempest_plugins"))
    conf.write(out)
    return conf.warnings


# what a site setting needs beside it. Open vSwitch's userspace datapath (a kernel without the
# openvswitch module) stops serving an internal port (a tap device) once it is moved into a
# namespace: the DHCP agent's port in qdhcp-* went deaf mid-run. devstack's Q_OVS_USE_VETH
# makes the DHCP and L3 agents plug veth pairs, as the all-in-one cloud's agents do.
SITE_NEEDS = {("OVS_DATAPATH_TYPE", "netdev"): {"Q_OVS_USE_VETH": "True"}}


def site_localrc(given):
    """The site's localrc: the settings ``given`` and, unless given, what they need."""
    settings = {}
    for (name, value), needed in SITE_NEEDS.items():
        if given.get(name) == value:
            settings.update(needed)
    settings.update(given)
    return settings


def parse_pairs(option, pairs, example):
    found = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise JobError("%s %r: use NAME=VALUE, e.g. %s %s" % (option, pair, option, example))
        found[key] = value
    return found


def load_role_defaults(paths):
    values = {}
    for path in paths:
        with open(path) as f:
            values.update(yaml.safe_load(f) or {})
    return values


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", action="append", required=True, metavar="PATH",
                        help="a Zuul configuration file or directory (repeatable)")
    parser.add_argument("--role-defaults", action="append", default=[], metavar="FILE")
    parser.add_argument("--ip", action="append", default=[], metavar="NODE=ADDRESS")
    parser.add_argument("--mtu", type=int, default=1500)
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="the job's merged attributes and a node's variables")
    sub_projects = sub.add_parser("projects", help="'NAME REF' of each required project")
    var = sub.add_parser("var", help="one variable of a node, rendered")
    conf = sub.add_parser("local-conf", help="write a node's local.conf")
    for p in (show, sub_projects, var, conf):
        p.add_argument("job")
    var.add_argument("name")
    for p in (show, var, conf):
        p.add_argument("--node", default="controller")
    var.add_argument("--json", action="store_true", help="print JSON, not plain lines")
    conf.add_argument("--devstack", required=True, metavar="DIR",
                      help="the devstack tree whose write-devstack-local-conf module writes")
    conf.add_argument("--out", required=True, metavar="FILE")
    conf.add_argument("--localrc", action="append", default=[], metavar="NAME=VALUE",
                      help="a setting of this machine over the job's localrc (repeatable)")
    args = parser.parse_args(argv)
    try:
        job = ZuulConfig(args.config).job(args.job)
        ips = parse_pairs("--ip", args.ip, "controller=10.208.0.2")
        defaults = load_role_defaults(args.role_defaults)
        COMMANDS[args.command](job, args, ips, defaults)
    except JobError as e:
        print("zuul_job.py: %s" % e, file=sys.stderr)
        return 1
    return 0


def print_projects(job, args, ips, defaults):
    for name, ref in sorted(job.required_projects().items()):
        print(name, ref or "")


def print_show(job, args, ips, defaults):
    values = rendered_vars(job, args.node, ips, args.mtu, defaults)
    json.dump({"job": job.name, "unresolved_parent": job.unresolved_parent,
               "nodes": job.nodes(), "groups": job.groups_of(args.node),
               "run": job.nearest("run"), "timeout": job.nearest("timeout"),
               "required_projects": job.required_projects(), "vars": values},
              sys.stdout, indent=2, sort_keys=True)
    print()


def print_var(job, args, ips, defaults):
    """One variable: a list one item a line, a dict (or --json) as JSON, else as is."""
    values = rendered_vars(job, args.node, ips, args.mtu, defaults, [args.name])
    if args.name not in values:
        raise JobError("job %s sets no variable %s on %s" % (job.name, args.name, args.node))
    value = values[args.name]
    if args.json or isinstance(value, dict):
        print(json.dumps(value, sort_keys=True))
    elif isinstance(value, list):
        print("\n".join(str(v) for v in value))
    else:
        print(value)


def write_node_local_conf(job, args, ips, defaults):
    site = site_localrc(parse_pairs("--localrc", args.localrc, "OVS_DATAPATH_TYPE=netdev"))
    for name, value in sorted(site.items()):
        print("site setting over the job's: %s=%s" % (name, value), file=sys.stderr)
    for warning in write_local_conf(job, args.node, args.devstack, args.out, ips, args.mtu,
                                    site):
        print("warning: %s" % warning, file=sys.stderr)


COMMANDS = {"projects": print_projects, "show": print_show, "var": print_var,
            "local-conf": write_node_local_conf}


if __name__ == "__main__":
    sys.exit(main())
