# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Validators of the rally-vmct scenario arguments (run by ``rally task validate``).

* ``vmct_kind`` (syntax): what the ``kind`` JSON schema cannot say.
* ``vmct_access`` (syntax): ``probe``, ``proxy_command``, ``wait_for_ssh``,
  ``boot_args`` and the SSH key source fit together (``probe: none``, instances
  that cannot be reached, never with ``wait_for_ssh``).
* ``vmct_kind_resources`` (semantic, needs the cloud): the kind's image,
  flavor, availability zone and floating network exist, each spec names one
  resource (several matches are refused, naming them), the image is a disk (not
  a kernel or ramdisk), the floating network is external, and the image fits the
  flavor (rally-openstack's ``image_valid_on_flavor`` applied to the nested
  ``kind.image``/``kind.flavor``).
* ``vmct_capacity`` (semantic): the workload's concurrency fits the users' Nova
  quotas and placement's capacity of the kind's compute hosts
  (:mod:`rally_vmct.task.capacity`), so a level that cannot run says why before
  it starts.
* ``vmct_workloads``, ``vmct_workload_options``, ``vmct_non_empty_list``: the
  benchmark scenarios' ``workloads`` plan, ``fileio_dir`` and run counts, hosts.
* ``vmct_benchmark_access``: VMCT.boot_and_benchmark's SSH key and netperf peer
  fit its workloads and contexts.
* ``vmct_hosts``: the proxy commands of the SSH hosts (``hosts``,
  ``netperf_peer.ssh``) of the benchmark scenarios.
* ``vmct_native_monitor``: with the ``vmct_host_monitor`` context,
  VMCT.native_benchmark's hosts' SSH ports are in its ``native_ports``.

``vmct_kind``, ``vmct_kind_resources`` and ``vmct_access`` check a ``vmct_*``
context's config too (its ``kind``, ``proxy_command``, ``boot_args``).

:func:`instance_scenario` adds the validators every scenario that boots servers
of a kind has. Every message names the argument and says how to fix it.
"""

from rally.common import logging
from rally.common import validation
from rally.task import validation as task_validation
from rally_openstack.common import consts

from rally_vmct.access import probes
from rally_vmct.access import ssh as vmct_ssh
from rally_vmct import opts
from rally_vmct.task import capacity
from rally_vmct.task.contexts import netperf_peer as peer_context
from rally_vmct.hostcost import iteration
from rally_vmct.task import kinds
from rally_vmct.timing import session as server_session
from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import repeat
from rally_vmct.workloads import storage

LOG = logging.getLogger(__name__)

RESERVED_BOOT_ARGS = ("name", "image", "flavor", "availability_zone", "scheduler_hints")


def arguments(config, plugin_cfg=None):
    """A plugin's arguments: a scenario's (the workload's ``args``), a context's (its config).

    Rally calls a scenario's validators with the workload as ``config``, a context's
    with ``config=None`` and the context's own config as ``plugin_cfg``.
    """
    if config is None and isinstance(plugin_cfg, dict):
        return plugin_cfg
    return (config or {}).get("args", {})


def proxy_problem(template):
    """Why ``template`` is not a proxy command (None when it is one)."""
    try:
        vmct_ssh.expand_proxy_command(template, "192.0.2.1", 22, "root")
    except ValueError as e:
        return str(e)
    return None


def has_context(config, name):
    """Does the workload's config list context ``name`` (with or without @platform)?"""
    return any(key.split("@")[0] == name for key in (config.get("contexts") or {}))


def instance_scenario(cls):
    """The validators every scenario that boots a server of a kind has."""
    for name, kwargs in (("vmct_capacity", {}),
                         ("vmct_kind_resources", {}),
                         ("required_services", {"services": [consts.Service.NOVA]}),
                         ("required_platform", {"platform": "openstack", "users": True}),
                         ("vmct_access", {}),
                         ("vmct_kind", {})):
        cls = task_validation.add(name, **kwargs)(cls)
    return cls


class ArgumentValidator(validation.Validator):
    """A validator of one argument, ``param_name``, of a scenario or a context."""

    def __init__(self, param_name):
        super().__init__()
        self.param_name = param_name

    def argument(self, config, plugin_cfg=None):
        """The argument's value (None when not given); see :func:`arguments`."""
        return arguments(config, plugin_cfg).get(self.param_name)


@validation.configure(name="vmct_kind")
class KindValidator(ArgumentValidator):
    """Checks the ``kind`` argument beyond its JSON schema."""

    def __init__(self, param_name="kind"):
        super().__init__(param_name)

    def validate(self, context, config, plugin_cls, plugin_cfg):
        kind = self.argument(config, plugin_cfg)
        if kind is None:
            return          # args-spec (a context: its schema) reports the missing argument
        wrong = kinds.problems(kind)
        if wrong:
            self.fail("Argument '%s' is invalid: %s" % (self.param_name, "; ".join(wrong)))


@validation.configure(name="vmct_access")
class AccessValidator(validation.Validator):
    """Checks that the reachability probe, proxy command, SSH and boot args fit together.

    Of a scenario's arguments, or of a ``vmct_*`` context's config (its server).
    """

    def validate(self, context, config, plugin_cls, plugin_cfg):
        args = arguments(config, plugin_cfg)
        config = config or {}
        probe = args.get("probe", "tcp")
        proxy = args.get("proxy_command")
        source = "Argument 'proxy_command'"
        if proxy is None:
            proxy = opts.get("ssh_proxy_command")
            source = "Option [vmct] ssh_proxy_command"
        problem = proxy_problem(proxy) if isinstance(proxy, str) and proxy else None
        if problem:     # not a string: args-spec reports it
            self.fail("%s is invalid: %s" % (source, problem))
        if probe == "ping" and proxy:
            self.fail("Argument 'probe' is 'ping', which cannot go through the proxy command "
                      "(%s %r): use probe 'tcp' or 'ssh', or set proxy_command: ''"
                      % (source.lower(), proxy))
        if probe == server_session.NO_PROBE and args.get("wait_for_ssh"):
            self.fail(server_session.NO_PROBE_WITH_SSH)
        if probe not in probes.PROBES + (server_session.NO_PROBE,):
            return          # args-spec reports it
        kind = args.get("kind") if isinstance(args.get("kind"), dict) else {}
        needs_ssh = probe == "ssh" or args.get("wait_for_ssh")
        if needs_ssh and not kind.get("ssh_key_file") and not has_context(config, "keypair"):
            what = "probe: ssh" if probe == "ssh" else "wait_for_ssh: true"
            self.fail("Argument %r needs an SSH key: add the 'keypair' context to the "
                      "workload's contexts, or set kind.ssh_key_file" % what)
        boot_args = args.get("boot_args") or {}
        if isinstance(boot_args, dict):
            clash = sorted(set(boot_args) & set(RESERVED_BOOT_ARGS))
            if clash:
                self.fail("Argument 'boot_args' must not set %s: the scenario sets the name "
                          "and the kind sets image, flavor, availability_zone and "
                          "scheduler_hints" % ", ".join(repr(c) for c in clash))


@validation.add("required_platform", platform="openstack", users=True)
@validation.configure(name="vmct_kind_resources", platform="openstack")
class KindResourcesValidator(ArgumentValidator):
    """The kind's image, flavor, zone and floating network exist; the image fits the flavor.

    An image or flavor spec that matches several resources is refused naming them,
    as is a kernel or ramdisk image (aki/ari) and a floating network that is not
    external (:mod:`rally_vmct.task.lookup`); the users' view of the cloud decides.
    """

    def __init__(self, param_name="kind"):
        super().__init__(param_name)

    def validate(self, context, config, plugin_cls, plugin_cfg):
        # Imported here: rally_openstack's validators need Rally's options loaded.
        from rally_openstack.common import validators as openstack_validators

        from rally_vmct.task import lookup

        kind = self.argument(config, plugin_cfg)
        if not isinstance(kind, dict) or kinds.problems(kind):
            return          # the syntax validators report it
        where = "Argument '%s' (kind %r)" % (self.param_name, kind.get("name"))
        try:
            clients = lookup.clients_of(context)
            image = lookup.image(clients, kind["image"])
            flavor = lookup.flavor(clients, kind["flavor"])
        except lookup.ResourceError as e:
            self.fail("%s: %s" % (where, e))
        flat = {"args": {"image": {"id": image.id}, "flavor": {"id": flavor.id}},
                "contexts": (config or {}).get("contexts", {})}
        fits = openstack_validators.ImageValidOnFlavorValidator(flavor_param="flavor",
                                                                image_param="image")
        try:
            fits.validate(context, flat, plugin_cls, plugin_cfg)
        except validation.ValidationError as e:
            self.fail("%s: %s" % (where, e.message))
        zone = (kind.get("availability_zone") or "").partition(":")[0]
        known = self._zones(context) if zone else None
        if known is not None and zone not in known:
            self.fail("%s: availability zone %r not found; the cloud's zones: %s"
                      % (where, zone, ", ".join(sorted(known)) or "none"))
        if kind.get("floating_network"):
            self._floating_network(where, clients, kind["floating_network"])

    def _floating_network(self, where, clients, name):
        from rally_vmct.task import lookup

        try:
            lookup.external_network(clients.neutron(), name)
        except lookup.ResourceError as e:
            self.fail("%s: %s" % (where, e))
        except Exception as e:
            self.fail("%s: kind.floating_network %r could not be checked, Neutron did not "
                      "answer (%s: %s): floating IPs need Neutron; leave floating_network "
                      "out to reach instances on their fixed address"
                      % (where, name, type(e).__name__, e))

    @staticmethod
    def _zones(context):
        """The availability zones the users see; None when the cloud does not say."""
        try:
            nova = context["users"][0]["credential"].clients().nova()
            return {zone.zoneName for zone in nova.availability_zones.list(detailed=False)}
        except Exception as e:
            LOG.debug("vmct_kind_resources: availability zone not checked (%s: %s)"
                      % (type(e).__name__, e))
            return None


def placement_reader(clients):
    """callable(path) -> placement's JSON answer, through the credential's session."""
    credential = clients.credential
    session = clients.keystone.get_session()[0]
    endpoint = {"service_type": "placement", "region_name": credential.region_name}
    if credential.endpoint_type:
        endpoint["interface"] = credential.endpoint_type
    return lambda path: session.get(path, endpoint_filter=endpoint).json()


@validation.add("required_platform", platform="openstack", users=True)
@validation.configure(name="vmct_capacity", platform="openstack")
class CapacityValidator(ArgumentValidator):
    """The workload's concurrency fits the users' Nova quotas and the kind's compute hosts.

    (a) The Nova quotas (instances, cores, ram) of the users' projects, after what
    the workload's ``quotas`` context sets (a new project's: the defaults); (b)
    placement's capacity of the compute nodes of the kind's availability zone
    (every node without one). (b) and the defaults need the admin credential.
    What cannot be read is skipped with a debug log: the check never blocks a
    task because it could not be made.
    """

    def __init__(self, param_name="kind"):
        super().__init__(param_name)

    def validate(self, context, config, plugin_cls, plugin_cfg):
        kind = self.argument(config)
        users = context.get("users") or []
        admin_credential = (context.get("admin") or {}).get("credential")
        if not isinstance(kind, dict) or kinds.problems(kind) or not (users or admin_credential):
            return          # the syntax validators report the kind
        need = capacity.demand(config, 1 if has_context(config, peer_context.KEY) else 0)
        admin = admin_credential.clients() if admin_credential else None
        flavor = self._read("the flavor", self._flavor,
                            admin or users[0]["credential"].clients(), kind)
        if flavor is None:
            return
        flavor_name, resources = flavor
        problems = [self._read("the quotas", self._quota_problem, users, admin, config, need,
                               resources),
                    self._read("placement", self._hosts_problem, admin, kind, need, resources)]
        problems = [problem for problem in problems if problem]
        if problems:
            self.fail("%s at concurrency %d on kind %r (flavor %r: %s) cannot run: %s"
                      % (plugin_cls.get_name(), need.concurrency, kind["name"], flavor_name,
                         capacity.describe_resources(resources), "; and ".join(problems)))

    @staticmethod
    def _read(what, read, *args):
        try:
            return read(*args)
        except Exception as e:
            LOG.debug("vmct_capacity: %s not checked (%s: %s)" % (what, type(e).__name__, e))
            return None

    @staticmethod
    def _flavor(clients, kind):
        """(name, resources) of the kind's flavor."""
        # Imported here: rally_openstack is only needed when validating against a cloud.
        from rally_openstack.task import types as openstack_types

        lookup = openstack_types.Flavor(context={"admin": {"credential": clients.credential}})
        flavor = clients.nova().flavors.get(lookup.pre_process(kind["flavor"], config={}))
        return flavor.name, capacity.flavor_resources(
            flavor.vcpus, flavor.ram, flavor.disk,
            getattr(flavor, "OS-FLV-EXT-DATA:ephemeral", 0), getattr(flavor, "swap", 0),
            flavor.get_keys())

    @staticmethod
    def _quota_problem(users, admin, config, need, resources):
        overrides = capacity.quota_overrides(config.get("contexts"))
        if admin and users and capacity.creates_users(config.get("contexts")):
            defaults = admin.nova().quotas.defaults(users[0]["tenant_id"]).to_dict()
            fits = [capacity.quota_fit("a new project of the users context (default quotas)",
                                       capacity.default_quotas(defaults), resources, overrides)]
        else:
            fits = []
            for tenant_id, credential in {u["tenant_id"]: u["credential"] for u in users}.items():
                limits = credential.clients().nova().limits.get().absolute
                absolute = capacity.absolute_quotas({limit.name: limit.value for limit in limits})
                fits.append(capacity.quota_fit("the users' project %s" % tenant_id, absolute,
                                               resources, overrides))
        return capacity.quota_problem(need, fits)

    @staticmethod
    def _hosts_problem(admin, kind, need, resources):
        if admin is None:
            LOG.debug("vmct_capacity: placement not checked (no admin credential)")
            return None
        nova = admin.nova()
        zone = kind.get("availability_zone")
        hosts = None
        if zone:
            hosts = capacity.zone_hosts(
                [z.to_dict() for z in nova.availability_zones.list(detailed=True)], zone)
        get = placement_reader(admin)
        providers = {rp["name"]: rp["uuid"]
                     for rp in get("/resource_providers")["resource_providers"]}

        def read(uuid):
            return (get("/resource_providers/%s/inventories" % uuid)["inventories"],
                    get("/resource_providers/%s/usages" % uuid)["usages"])
        fits = capacity.host_fits([h.to_dict() for h in nova.hypervisors.list(detailed=True)],
                                  hosts, providers, read, resources)
        return capacity.hosts_problem(need, fits, zone)


@validation.configure(name="vmct_workloads")
class WorkloadsValidator(ArgumentValidator):
    """The ``workloads`` list names known tools, tests and parameters.

    :param param_name: scenario argument holding the list
    :param peer_param: argument that must be set when a netperf workload is
        listed (None: the scenario provides a peer itself)
    """

    def __init__(self, param_name="workloads", peer_param=None):
        super().__init__(param_name)
        self.peer_param = peer_param

    def validate(self, context, config, plugin_cls, plugin_cfg):
        args = (config or {}).get("args", {})
        if self.param_name not in args:
            return  # the scenario's default plan is valid by construction
        try:
            workloads = plan_lib.parse_plan(args[self.param_name])
        except plan_lib.PlanError as e:
            self.fail("Invalid argument '%s': %s" % (self.param_name, e))
        if (self.peer_param and "netperf" in plan_lib.needed_tools(workloads)
                and not args.get(self.peer_param)):
            self.fail("Argument '%s' lists netperf workloads, so '%s' must name the "
                      "netserver peer, e.g. {host: 10.0.0.2, control_port: 12865, "
                      "data_port: 12866}" % (self.param_name, self.peer_param))


@validation.configure(name="vmct_non_empty_list")
class NonEmptyListValidator(ArgumentValidator):
    """A list argument has at least one item (JSON schema minItems for typed args).

    :param param_name: scenario argument that must be a non-empty list
    """

    def validate(self, context, config, plugin_cls, plugin_cfg):
        value = self.argument(config)
        if not isinstance(value, list) or not value:
            self.fail("Argument '%s' must be a non-empty list, got %r"
                      % (self.param_name, value))


@validation.configure(name="vmct_workload_options")
class WorkloadOptionsValidator(validation.Validator):
    """``fileio_dir`` is an absolute path; ``min_runs``/``max_runs``/``cv_target`` fit.

    The same checks the scenarios make at run time (storage.check_fileio_dir,
    repeat.RunPolicy), reported before the task starts.
    """

    def validate(self, context, config, plugin_cls, plugin_cfg):
        args = (config or {}).get("args", {})
        try:
            if args.get("fileio_dir") is not None:
                storage.check_fileio_dir(args["fileio_dir"])
            repeat.RunPolicy(args.get("min_runs", 1), args.get("max_runs"),
                             args.get("cv_target"))
        except (storage.StorageError, repeat.RunPolicyError) as e:
            self.fail(str(e))


@validation.configure(name="vmct_benchmark_access")
class BenchmarkAccessValidator(validation.Validator):
    """SSH key and netperf peer of VMCT.boot_and_benchmark fit the workloads and contexts."""

    def validate(self, context, config, plugin_cls, plugin_cfg):
        config = config or {}
        args = config.get("args", {})
        kind = args.get("kind") if isinstance(args.get("kind"), dict) else {}
        if not kind.get("ssh_key_file") and not has_context(config, "keypair"):
            self.fail("VMCT.boot_and_benchmark runs its workloads over SSH: add the 'keypair' "
                      "context to the workload's contexts, or set kind.ssh_key_file")
        peer = args.get("netperf_peer")
        has_peer_context = has_context(config, peer_context.KEY)
        if peer == peer_context.PEER_INSTANCE and not has_peer_context:
            self.fail("Argument 'netperf_peer' is 'instance', which needs the '%s' context "
                      "(one netserver instance per tenant): add it, e.g. %s: {kind: <the same "
                      "kind>}, or give netperf_peer: {host, control_port, data_port}"
                      % (peer_context.KEY, peer_context.KEY))
        if isinstance(peer, str) and peer not in (peer_context.PEER_INSTANCE,
                                                  peer_context.PEER_NONE):
            return          # args-spec reports it
        peer_instance = peer == peer_context.PEER_INSTANCE or (peer is None and has_peer_context)
        if args.get("peer_placement") and not peer_instance:
            self.fail("Argument 'peer_placement' (%s) places the instance relative to the "
                      "netperf peer instance, so it needs the '%s' context and netperf_peer "
                      "'instance' (its default with the context); leave peer_placement out "
                      "for a peer outside Nova" % (args["peer_placement"], peer_context.KEY))
        if "workloads" not in args:
            return
        try:
            plan = plan_lib.parse_plan(args["workloads"])
        except plan_lib.PlanError:
            return          # vmct_workloads reports it
        without_peer = peer == peer_context.PEER_NONE or (peer is None and not has_peer_context)
        if "netperf" in plan_lib.needed_tools(plan) and without_peer:
            self.fail("Argument 'workloads' lists netperf workloads but there is no netserver "
                      "peer: add the '%s' context (netperf_peer 'instance', the default with "
                      "it), or set netperf_peer to {host, control_port, data_port}"
                      % peer_context.KEY)


@validation.configure(name="vmct_hosts")
class HostsValidator(validation.Validator):
    """The proxy commands of the SSH hosts (``hosts``, ``netperf_peer.ssh``) expand.

    What ``vmct_access`` checks of a scenario's own ``proxy_command``, for each
    :class:`rally_vmct.task.scenarios.benchmark.shared.Host` entry ("" or none: the default).
    """

    def validate(self, context, config, plugin_cls, plugin_cfg):
        args = arguments(config, plugin_cfg)
        hosts = args.get("hosts") if isinstance(args.get("hosts"), list) else []
        entries = [("hosts", "hosts[%d]" % i, host) for i, host in enumerate(hosts)]
        peer = args.get("netperf_peer")
        if isinstance(peer, dict):
            entries.append(("netperf_peer", "netperf_peer.ssh", peer.get("ssh")))
        for argument, where, host in entries:
            proxy = host.get("proxy_command") if isinstance(host, dict) else None
            problem = proxy_problem(proxy) if isinstance(proxy, str) and proxy else None
            if problem:
                self.fail("Argument '%s' is invalid: %s.proxy_command: %s"
                          % (argument, where, problem))


@validation.configure(name="vmct_native_monitor")
class NativeMonitorValidator(validation.Validator):
    """With ``vmct_host_monitor``, its ``native_ports`` has the SSH port of every host.

    VMCT.native_benchmark's instance is its host's sshd process tree, which the
    context measures only on the ports it is given: without them the host cost
    tables would have host figures only, and the comparison no native baseline.
    """

    def validate(self, context, config, plugin_cls, plugin_cfg):
        config = config or {}
        hosts = config.get("args", {}).get("hosts")
        if not has_context(config, iteration.KEY) or not isinstance(hosts, list):
            return
        monitor = capacity.context_config(config.get("contexts"), iteration.KEY)
        ports = monitor.get(iteration.NATIVE_PORTS) or []
        missing = ["hosts[%d] (%s port %s)" % (i, host.get("host"), vmct_ssh.spec_port(host))
                   for i, host in enumerate(hosts)
                   if isinstance(host, dict) and vmct_ssh.spec_port(host) not in ports]
        if missing:
            wanted = sorted(set(ports) | {vmct_ssh.spec_port(h) for h in hosts
                                          if isinstance(h, dict)})
            self.fail("Argument 'hosts': the %s context does not measure the sshd of %s (its "
                      "%s: %s), so their host cost would have no native instance: add the "
                      "hosts' SSH ports to that context's config, e.g. %s: {%s: %s}"
                      % (iteration.KEY, ", ".join(missing),
                         iteration.NATIVE_PORTS, ports, iteration.KEY,
                         iteration.NATIVE_PORTS, wanted))
