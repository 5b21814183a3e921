"""The capacity arithmetic: quotas, placement inventories, demand, the sentences."""

import testtools

from rally_vmct.task import capacity

TINY = capacity.flavor_resources(1, 512, 1)


def inventory(total, reserved=0, ratio=1.0, max_unit=None):
    return {"total": total, "reserved": reserved, "allocation_ratio": ratio,
            "max_unit": total if max_unit is None else max_unit}


def hypervisor(node, host=None, status="enabled", state="up"):
    return {"hypervisor_hostname": node, "status": status, "state": state,
            "service": {"host": host or node}}


class FlavorAndDemandTestCase(testtools.TestCase):

    def test_flavor_resources_count_disk_like_nova(self):
        self.assertEqual({"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20 + 5 + 1},
                         capacity.flavor_resources(2, 2048, 20, ephemeral=5, swap=512))
        self.assertEqual({"VCPU": 1, "MEMORY_MB": 256}, capacity.flavor_resources(1, 256, 0))
        self.assertEqual("1 VCPU, 512 MB RAM, 1 GB disk", capacity.describe_resources(TINY))
        # resources:<CLASS> extra specs replace or add classes (a bare-metal flavor)
        metal = capacity.flavor_resources(8, 16384, 100, extra_specs={
            "resources:VCPU": "0", "resources:MEMORY_MB": "0", "resources:DISK_GB": "0",
            "resources:CUSTOM_BAREMETAL_GOLD": "1", "hw:cpu_policy": "shared"})
        self.assertEqual({"CUSTOM_BAREMETAL_GOLD": 1}, metal)
        self.assertEqual("1 VCPU, 1 CUSTOM_X", capacity.describe_resources(
            capacity.flavor_resources(1, 0, extra_specs={"resources:CUSTOM_X": "1"})))

    def test_demand_is_concurrency_bounded_by_times_plus_helpers_per_tenant(self):
        config = {"runner": {"times": 100, "concurrency": 32},
                  "contexts": {"users@openstack": {"tenants": 3, "users_per_tenant": 1}}}
        self.assertEqual(capacity.Demand(32, 0), capacity.demand(config))
        self.assertEqual(capacity.Demand(32, 3), capacity.demand(config, helpers_per_tenant=1))
        self.assertEqual(35, capacity.demand(config, 1).servers)
        self.assertEqual(4, capacity.demand({"runner": {"times": 4, "concurrency": 8}})
                         .concurrency)
        self.assertEqual(6, capacity.demand({"runner": {"rps": 2, "max_concurrency": 6}})
                         .concurrency)
        self.assertEqual(1, capacity.demand({"runner": {}}).concurrency)
        self.assertEqual("35 at once + 3 helper servers", capacity.Demand(32, 3).describe())
        self.assertEqual("8 at once", capacity.Demand(8).describe())

    def test_users_context_new_or_existing_and_quota_overrides(self):
        self.assertTrue(capacity.creates_users({"users": {"tenants": 1}}))
        self.assertFalse(capacity.creates_users({"users": {"user_choice_method": "random"}}))
        self.assertFalse(capacity.creates_users({"network": {}}))
        self.assertEqual(1, capacity.users_tenants({}))
        self.assertEqual({"instances": 66, "ram": -1}, capacity.quota_overrides(
            {"quotas@openstack": {"nova": {"instances": 66, "ram": -1, "key_pairs": 3},
                                  "neutron": {"port": -1}}}))
        self.assertEqual({}, capacity.quota_overrides({"quotas": {"neutron": {"port": -1}}}))


class QuotaTestCase(testtools.TestCase):

    def test_tightest_quota_wins_and_unlimited_is_none(self):
        quotas = capacity.absolute_quotas({
            "maxTotalInstances": 10, "totalInstancesUsed": 1, "maxTotalCores": 20,
            "totalCoresUsed": 1, "maxTotalRAMSize": 51200, "totalRAMUsed": 512})
        self.assertEqual(capacity.Fit("p1", 9, "quota instances 10, 1 in use"),
                         capacity.quota_fit("p1", quotas, TINY))
        big = capacity.flavor_resources(8, 4096, 10)
        self.assertEqual(capacity.Fit("p1", 2, "quota cores 20, 1 in use"),
                         capacity.quota_fit("p1", quotas, big))
        # what the quotas context sets replaces the limit (-1: none)
        self.assertEqual(capacity.Fit("p1", 99, "quota ram 51200, 512 in use"),
                         capacity.quota_fit("p1", quotas, TINY,
                                            {"instances": -1, "cores": -1}))
        unlimited = capacity.quota_fit("p1", quotas, TINY,
                                       {"instances": -1, "cores": -1, "ram": -1})
        self.assertIsNone(unlimited.count)

    def test_default_quotas_of_a_new_project(self):
        quotas = capacity.default_quotas({"instances": 10, "cores": 20, "ram": 51200,
                                          "key_pairs": 100})
        self.assertEqual({"instances": (10, 0), "cores": (20, 0), "ram": (51200, 0)}, quotas)

    def test_quota_problem_names_the_project_the_numbers_and_the_fixes(self):
        need = capacity.Demand(16)
        fits = [capacity.Fit("the users' project p1", 10, "quota instances 10, 0 in use")]
        text = capacity.quota_problem(need, fits)
        self.assertIn("the users' project p1 may start 10 more such servers "
                      "(quota instances 10, 0 in use), the workload runs 16 at once", text)
        self.assertIn("quotas: {nova: {instances: 18, cores: -1, ram: -1}}", text)
        self.assertIn("openstack quota set --instances 18", text)
        self.assertIn("lower the concurrency to 10", text)
        self.assertIsNone(capacity.quota_problem(capacity.Demand(10), fits))
        self.assertIsNone(capacity.quota_problem(need, [capacity.Fit("p", None)]))


class PlacementTestCase(testtools.TestCase):

    def test_host_fit_is_placements_rule_per_resource_class(self):
        inventories = {"VCPU": inventory(8, ratio=16.0), "MEMORY_MB": inventory(16384, 512),
                       "DISK_GB": inventory(100, ratio=1.0)}
        usages = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
        fit = capacity.host_fit("c1", inventories, usages, TINY)
        # VCPU: 8 x 16 - 2 = 126; RAM: (16384 - 512 - 1024) / 512 = 29.0; disk: 90
        self.assertEqual(29, fit.count)
        self.assertEqual("MEMORY_MB: (16384 total - 512 reserved) x allocation ratio 1, "
                         "1024 used, 512 a server", fit.reason)
        # a fractional ratio rounds down, never up
        fit = capacity.host_fit("c1", {"VCPU": inventory(3, ratio=1.5)}, {}, {"VCPU": 2})
        self.assertEqual(2, fit.count)
        # more used than there is (a ratio lowered later): none, not a negative count
        fit = capacity.host_fit("c1", {"VCPU": inventory(4)}, {"VCPU": 9}, {"VCPU": 1})
        self.assertEqual(0, fit.count)

    def test_missing_inventory_and_max_unit(self):
        fit = capacity.host_fit("c1", {"VCPU": inventory(8)}, {}, TINY)
        self.assertEqual(capacity.Fit("c1", 0, "no MEMORY_MB inventory in placement"), fit)
        fit = capacity.host_fit("c1", {"VCPU": inventory(8, max_unit=2)}, {}, {"VCPU": 4})
        self.assertEqual(capacity.Fit("c1", 0, "VCPU: a server takes 4, max_unit is 2"), fit)

    def test_zone_hosts_are_its_compute_hosts(self):
        zones = [{"zoneName": "internal", "hosts": {"ctl": {"nova-conductor": {}}}},
                 {"zoneName": "fake", "hosts": {"f1": {"nova-compute": {}},
                                                "f2": {"nova-compute": {}},
                                                "ctl": {"nova-scheduler": {}}}},
                 {"zoneName": "docker", "hosts": None}]
        self.assertEqual({"f1", "f2"}, capacity.zone_hosts(zones, "fake"))
        self.assertEqual(set(), capacity.zone_hosts(zones, "docker"))
        # Nova's ZONE:HOST[:NODE] and :HOST forms name one host
        self.assertEqual({"f2"}, capacity.zone_hosts(zones, "fake:f2"))
        self.assertEqual({"f2"}, capacity.zone_hosts(zones, ":f2:node-7"))
        self.assertEqual(set(), capacity.zone_hosts(zones, "docker:f2"))

    def test_host_fits_of_the_zone_with_down_and_unknown_nodes(self):
        hypervisors = [hypervisor("f1"), hypervisor("f2", status="disabled"),
                       hypervisor("f3.example.org", host="f3"), hypervisor("d1"),
                       hypervisor("f4", state="down")]
        providers = {"f1": "u1", "f2": "u2", "d1": "u4", "f4": "u5"}
        read = {"u1": ({"VCPU": inventory(4), "MEMORY_MB": inventory(4096),
                        "DISK_GB": inventory(40)}, {})}.get
        fits = capacity.host_fits(hypervisors, {"f1", "f2", "f3", "f4"}, providers,
                                  lambda uuid: read(uuid), TINY)
        self.assertEqual([("f1", 4), ("f2", 0), ("f3.example.org", 0), ("f4", 0)],
                         [(f.where, f.count) for f in fits])
        self.assertEqual("nova-compute is disabled and up", fits[1].reason)
        self.assertEqual("no resource provider named 'f3.example.org' in placement",
                         fits[2].reason)
        self.assertEqual("nova-compute is enabled and down", fits[3].reason)
        # without a zone: every node
        self.assertEqual(5, len(capacity.host_fits(
            hypervisors, None, providers, lambda uuid: ({}, {}), TINY)))

    def test_hosts_problem_says_how_many_fit_why_and_the_fix(self):
        fits = [capacity.Fit("f1", 20, "MEMORY_MB: (10240 total - 0 reserved) x allocation "
                             "ratio 1, 0 used, 512 a server"),
                capacity.Fit("f2", 0, "nova-compute is disabled and up")]
        text = capacity.hosts_problem(capacity.Demand(32), fits, "fake")
        self.assertIn("the compute hosts of availability zone 'fake' hold 20 such servers "
                      "at once, the workload needs 32 at once", text)
        self.assertIn("f2 holds 0 (nova-compute is disabled and up); f1 holds 20 (MEMORY_MB",
                      text)
        self.assertIn("Lower the concurrency to 20, or raise the allocation ratio of "
                      "MEMORY_MB (nova.conf [DEFAULT] ram_allocation_ratio", text)
        self.assertIn("or add compute hosts to availability zone 'fake'", text)
        self.assertIsNone(capacity.hosts_problem(capacity.Demand(20), fits, "fake"))
        # helper servers take their share of what the hosts hold
        text = capacity.hosts_problem(capacity.Demand(20, 1), fits, None)
        self.assertIn("the cloud's compute hosts hold 20", text)
        self.assertIn("Lower the concurrency to 19", text)
        self.assertIn("no server can start",
                      capacity.hosts_problem(capacity.Demand(1), [], "nowhere"))

    def test_hosts_problem_lists_a_few_hosts(self):
        fits = [capacity.Fit("c%02d" % i, 1, "VCPU: ...") for i in range(10)]
        text = capacity.hosts_problem(capacity.Demand(11), fits, "az")
        self.assertIn("c05 holds 1 (VCPU: ...); 4 more hosts", text)
        self.assertNotIn("c06", text)
