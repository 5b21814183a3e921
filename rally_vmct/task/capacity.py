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
"""How many servers of a flavor a cloud runs at once: quotas and placement, as arithmetic.

No OpenStack import and no I/O: the ``vmct_capacity`` validator
(:mod:`rally_vmct.task.validators`) reads Nova and placement and hands the
numbers here, which say how many servers fit and what stops the next one.

* :func:`flavor_resources`: what one server of a flavor claims in placement.
* :func:`demand`: how many servers a workload keeps at once (the runner's
  concurrency, bounded by its times, plus the helper servers of its contexts).
* :func:`quota_fit`: how many more a project may start under its Nova quotas
  (instances, cores, ram), after what the workload's ``quotas`` context sets.
* :func:`host_fits`: per compute node of the kind's hosts, how many more fit:
  per resource class floor(((total - reserved) * allocation_ratio - used) / size),
  the smallest of VCPU, MEMORY_MB and DISK_GB (placement's own rule).
* :func:`quota_problem`, :func:`hosts_problem`: the validator's sentences when
  the workload does not fit, each with the fix.
"""

import dataclasses
import math

VCPU, MEMORY_MB, DISK_GB = "VCPU", "MEMORY_MB", "DISK_GB"
UNITS = {VCPU: "VCPU", MEMORY_MB: "MB RAM", DISK_GB: "GB disk"}
# the nova.conf option of a compute host that sets its resource class's allocation ratio
RATIO_OPTIONS = {VCPU: "cpu_allocation_ratio", MEMORY_MB: "ram_allocation_ratio",
                 DISK_GB: "disk_allocation_ratio"}
# Nova quota -> (absolute limit, its usage, the resource class one server takes of it)
QUOTAS = {"instances": ("maxTotalInstances", "totalInstancesUsed", None),
          "cores": ("maxTotalCores", "totalCoresUsed", VCPU),
          "ram": ("maxTotalRAMSize", "totalRAMUsed", MEMORY_MB)}
# hosts named in a message, at most
SHOWN_HOSTS = 6
# flavor extra specs that set what a server claims in placement (resources:VCPU=0...)
RESOURCES_SPEC = "resources:"


@dataclasses.dataclass(frozen=True)
class Fit:
    """How many more servers fit in one place (a host, a project); None: no limit."""

    where: str
    count: int | None
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class Demand:
    """Servers a workload keeps at once: its own iterations' and its contexts' helpers."""

    concurrency: int
    helpers: int = 0

    @property
    def servers(self):
        return self.concurrency + self.helpers

    def describe(self):
        helpers = " + %d helper server%s" % (self.helpers, "s" * (self.helpers != 1))
        return "%d at once%s" % (self.servers, helpers if self.helpers else "")


def flavor_resources(vcpus, ram, disk=0, ephemeral=0, swap=0, extra_specs=None):
    """{resource class: amount} one server of the flavor claims (zero amounts left out).

    DISK_GB is root + ephemeral + swap (MB, rounded up to GB), as Nova asks placement;
    the flavor's ``resources:<CLASS>`` extra specs replace or add classes, as in Nova.
    """
    amounts = {VCPU: vcpus, MEMORY_MB: ram,
               DISK_GB: (disk or 0) + (ephemeral or 0) + math.ceil((swap or 0) / 1024)}
    for key, value in (extra_specs or {}).items():
        if key.startswith(RESOURCES_SPEC):
            amounts[key[len(RESOURCES_SPEC):]] = int(value)
    return {rc: int(amount) for rc, amount in amounts.items() if amount}


def describe_resources(resources):
    """'1 VCPU, 512 MB RAM, 1 GB disk' (other classes by name: '1 CUSTOM_BAREMETAL')."""
    order = sorted(resources, key=lambda rc: (list(UNITS).index(rc) if rc in UNITS
                                              else len(UNITS), rc))
    return ", ".join("%d %s" % (resources[rc], UNITS.get(rc, rc)) for rc in order)


def context_config(contexts, name):
    """The config of the workload's context ``name`` (with or without @platform), or {}."""
    for key, conf in (contexts or {}).items():
        if key.split("@")[0] == name and isinstance(conf, dict):
            return conf
    return {}


def users_tenants(contexts):
    """Tenants the workload's ``users`` context makes (1 unless it says otherwise)."""
    return int(context_config(contexts, "users").get("tenants") or 1)


def creates_users(contexts):
    """Does the ``users`` context make new projects (rather than use the env's users)?"""
    return bool(set(context_config(contexts, "users")) - {"user_choice_method"})


def demand(config, helpers_per_tenant=0):
    """The :class:`Demand` of a workload config (Rally's: runner, contexts).

    Concurrency is the runner's ``concurrency`` (``max_concurrency`` for rps, 1
    for serial), never more than its ``times``; helpers are per tenant.
    """
    runner = config.get("runner") or {}
    concurrency = runner.get("concurrency") or runner.get("max_concurrency") or 1
    if runner.get("times"):
        concurrency = min(concurrency, runner["times"])
    return Demand(int(concurrency),
                  helpers_per_tenant * users_tenants(config.get("contexts")))


def quota_overrides(contexts):
    """{quota: value} that rally-openstack's ``quotas`` context sets for Nova."""
    nova = context_config(contexts, "quotas").get("nova") or {}
    return {quota: nova[quota] for quota in QUOTAS if quota in nova}


def absolute_quotas(absolute):
    """{quota: (limit, used)} from Nova's absolute limits (``GET /limits``)."""
    return {quota: (absolute.get(limit), absolute.get(used) or 0)
            for quota, (limit, used, _) in QUOTAS.items()}


def default_quotas(quota_set):
    """{quota: (limit, 0)} from a quota set (a new project's: nothing used yet)."""
    return {quota: (quota_set.get(quota), 0) for quota in QUOTAS}


def quota_fit(project, quotas, resources, overrides=None):
    """How many more servers ``project`` may start: the tightest of its Nova quotas.

    :param quotas: {quota: (limit, used)} (:func:`absolute_quotas`); a limit of
        None or -1 is no limit
    :param overrides: {quota: limit} the workload's quotas context sets
    """
    best = Fit(project, None)
    for quota, (limit, used) in quotas.items():
        limit = (overrides or {}).get(quota, limit)
        rc = QUOTAS[quota][2]
        per_server = resources.get(rc, 0) if rc else 1
        if limit is None or limit < 0 or not per_server:
            continue
        count = max(0, (limit - used) // per_server)
        if best.count is None or count < best.count:
            best = Fit(project, count, "quota %s %d, %d in use" % (quota, limit, used))
    return best


def zone_hosts(zones, zone):
    """Names of the nova-compute hosts of availability zone ``zone``.

    ``zone`` may name a host too, as Nova takes it: ``ZONE:HOST[:NODE]`` (``:HOST``: any
    zone); then only that host.

    :param zones: Nova's detailed availability zones, as dicts (zoneName, hosts)
    """
    name, _, host = zone.partition(":")
    found = {h for z in zones if not name or z.get("zoneName") == name
             for h, services in (z.get("hosts") or {}).items() if "nova-compute" in services}
    host = host.split(":")[0]
    return found & {host} if host else found


def host_fit(node, inventories, usages, resources):
    """How many more servers fit on one resource provider (a compute node).

    :param inventories: placement's {resource class: {total, reserved,
        allocation_ratio, max_unit}}
    :param usages: placement's {resource class: used}
    """
    best = None
    for rc, size in resources.items():
        inventory = inventories.get(rc)
        if inventory is None:
            fit = Fit(node, 0, "no %s inventory in placement" % rc)
        elif size > inventory.get("max_unit", size):
            fit = Fit(node, 0, "%s: a server takes %d, max_unit is %d"
                      % (rc, size, inventory["max_unit"]))
        else:
            total, reserved = inventory["total"], inventory.get("reserved", 0)
            ratio = inventory.get("allocation_ratio", 1.0)
            used = usages.get(rc, 0)
            count = max(0, math.floor(((total - reserved) * ratio - used) / size))
            fit = Fit(node, count, "%s: (%d total - %d reserved) x allocation ratio %g, "
                      "%d used, %d a server" % (rc, total, reserved, ratio, used, size))
        if best is None or fit.count < best.count:
            best = fit
    return best or Fit(node, None)


def host_fits(hypervisors, hosts, providers, read, resources):
    """A :class:`Fit` per compute node of ``hosts`` (every host when None).

    :param hypervisors: Nova's detailed hypervisors, as dicts (hypervisor_hostname,
        status, state, service: {host})
    :param providers: {resource provider name: uuid} from placement
    :param read: callable(uuid) -> (inventories, usages), placement's
    """
    fits = []
    for hypervisor in hypervisors:
        if hosts is not None and (hypervisor.get("service") or {}).get("host") not in hosts:
            continue
        node = hypervisor["hypervisor_hostname"]
        if hypervisor.get("status") != "enabled" or hypervisor.get("state") != "up":
            fits.append(Fit(node, 0, "nova-compute is %s and %s"
                            % (hypervisor.get("status"), hypervisor.get("state"))))
        elif node not in providers:
            fits.append(Fit(node, 0, "no resource provider named %r in placement" % node))
        else:
            fits.append(host_fit(node, *read(providers[node]), resources))
    return fits


def quota_problem(need, fits):
    """The sentence saying which project's quota the workload exceeds, or None."""
    short = [fit for fit in fits if fit.count is not None and fit.count < need.servers]
    if not short:
        return None
    fit = min(short, key=lambda f: f.count)
    instances = need.servers + 2
    fixes = ["add rally-openstack's quotas context, e.g. quotas: {nova: {instances: %d, "
             "cores: -1, ram: -1}} (it needs the admin credential)" % instances,
             "raise the quotas of the project (openstack quota set --instances %d "
             "--cores -1 --ram -1 PROJECT)" % instances,
             "lower the concurrency to %d" % max(fit.count - need.helpers, 0)]
    return ("%s may start %d more such servers (%s), the workload runs "
            "%s: %s" % (fit.where, fit.count, fit.reason, need.describe(), ", or ".join(fixes)))


def hosts_problem(need, fits, zone):
    """The sentence saying how many the kind's hosts hold and what stops more, or None."""
    bounded = [fit for fit in fits if fit.count is not None]
    if len(bounded) < len(fits):
        return None          # a node without inventories limits nothing we know of
    holds = sum(fit.count for fit in bounded)
    if holds >= need.servers:
        return None
    where = ("the compute hosts of availability zone %r" % zone if zone
             else "the cloud's compute hosts")
    if not fits:
        return "%s: there is none, so no server can start" % where
    shown = sorted(fits, key=lambda f: (f.count, f.where))
    listing = "; ".join("%s holds %d (%s)" % (f.where, f.count, f.reason)
                        for f in shown[:SHOWN_HOSTS])
    if len(shown) > SHOWN_HOSTS:
        listing += "; %d more hosts" % (len(shown) - SHOWN_HOSTS)
    binding = sorted({rc for f in fits for rc in RATIO_OPTIONS if f.reason.startswith(rc)})
    ratios = (" (nova.conf [DEFAULT] %s on the computes, or openstack resource provider "
              "inventory set)" % " / ".join(RATIO_OPTIONS[rc] for rc in binding)
              if binding else "")
    more = max(holds - need.helpers, 0)
    return ("%s hold %d such servers at once, the workload needs %s: %s. Lower the "
            "concurrency to %d, or raise the allocation ratio of %s%s, or add compute hosts%s"
            % (where, holds, need.describe(), listing, more,
               " and ".join(binding) or "the hosts' resources", ratios,
               " to availability zone %r" % zone if zone else ""))
