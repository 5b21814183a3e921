"""devstack/plugin.sh, phase by phase, in a real bash with devstack's functions stubbed."""

import os

import yaml

from tests.unit.devstack import base

VALUES = os.path.join(base.ROOT, "tools", "vmct-values")
ROOT = base.ROOT
INSTALL_DRIVER = os.path.join(ROOT, "nova-docker", "tools", "install-driver")


class SettingsTestCase(base.PluginTestCase):

    def enabled(self, result):
        return result.env_after["ENABLED_SERVICES"].split(",")

    def test_vmct_enabled_where_keystone_runs(self):
        r = self.run_plugin("override_defaults", services="key,n-api")
        self.assertRan(r)
        self.assertIn("vmct", self.enabled(r))

    def test_vmct_not_enabled_on_a_compute_node(self):
        r = self.run_plugin("override_defaults", services=base.DOCKER_ONLY_NODE,
                            VMCT_DOCKER_COMPUTE="replace")
        self.assertRan(r)
        self.assertNotIn("vmct", self.enabled(r))

    def test_auto_enable_can_be_turned_off(self):
        r = self.run_plugin("override_defaults", services="key", VMCT_AUTO_ENABLE="False")
        self.assertRan(r)
        self.assertNotIn("vmct", self.enabled(r))

    def test_config_drive_forced_unless_local_conf_says_otherwise(self):
        r = self.run_plugin("override_defaults")
        self.assertEqual("True", r.env_after["FORCE_CONFIG_DRIVE"])
        r = self.run_plugin("override_defaults", FORCE_CONFIG_DRIVE="False")
        self.assertEqual("False", r.env_after["FORCE_CONFIG_DRIVE"])

    def test_nothing_runs_without_a_vmct_service(self):
        for mode, phase in (("stack", "install"), ("stack", "post-config"),
                            ("stack", "extra"), ("unstack", None), ("clean", None)):
            r = self.run_plugin(mode, phase, services="n-cpu,q-agt")
            self.assertRan(r)
            self.assertEqual([], r.calls, "%s %s" % (mode, phase))

    def test_xtrace_setting_restored(self):
        r = self.run_plugin("stack", "install")
        self.assertRan(r)
        self.assertEqual("yes", r.env_after["XTRACE_KEPT"])


class InstallTestCase(base.PluginTestCase):

    def test_controller_without_docker(self):
        r = self.run_plugin("stack", "install", services="key,n-api,n-cpu")
        self.assertRan(r)
        self.assertInOrder(r, ("echo_summary", "Installing rally-vmct"),
                           ("setup_develop", ROOT),
                           ("install_package", "netcat-openbsd"))
        # the image builders install their own packages (tools/vmct-apt)
        self.assertEqual([["netcat-openbsd"]], r.named("install_package"))
        flat = [" ".join(c) for c in r.calls]
        self.assertFalse([c for c in flat if "docker" in c], flat)

    def test_single_node_with_docker_compute(self):
        r = self.run_plugin("stack", "install")
        self.assertRan(r)
        self.assertInOrder(r, ("setup_develop", ROOT),
                           ("install_package", "docker.io"),
                           ("sudo", os.path.join(ROOT, "tools", "docker", "ensure-dockerd")),
                           ("add_user_to_group", "stack", "docker"),
                           ("echo_summary", "Installing the Docker engine and compute driver"),
                           # in the python nova is installed in; pip resolves the driver's
                           # dependencies with nova pinned (no REQUIREMENTS_DIR here)
                           ("python3", INSTALL_DRIVER))
        self.assertIn(["python3", INSTALL_DRIVER], r.calls)
        self.assertEqual([], r.named("pip_install"))

    def test_packaged_engine_gets_the_drivers_settings_before_it_starts(self):
        """The driver's engine settings go in before docker.io is installed.

        systemd starts the packaged engine with Docker's defaults (its docker0 bridge),
        which the driver refuses when it starts.
        """
        conf = os.path.join(self.tmp, "etc-docker", "daemon.json")
        settings = os.path.join(ROOT, "nova-docker", "etc", "docker", "daemon.json")
        r = self.run_plugin("stack", "install", VMCT_DOCKER_DAEMON_JSON=conf)
        self.assertRan(r)
        self.assertInOrder(r, ("sudo", "install", "-D", "-m", "0644", settings, conf),
                           ("install_package", "docker.io"))
        self.assertEqual([], r.named("restart_service"))

    def test_installed_engine_restarted_with_the_drivers_settings(self):
        conf = os.path.join(self.tmp, "daemon.json")
        r = self.run_plugin("stack", "install", VMCT_DOCKER_DAEMON_JSON=conf,
                            STUB_INSTALLED_PACKAGES="docker.io")
        self.assertRan(r)
        self.assertInOrder(r, ("sudo", "install", "-D", "-m", "0644"),
                           ("restart_service", "docker"), ("install_package", "docker.io"))
        # already the driver's settings: nothing written, nothing restarted
        with open(os.path.join(ROOT, "nova-docker", "etc", "docker", "daemon.json")) as f:
            with open(conf, "w") as out:
                out.write(f.read())
        r = self.run_plugin("stack", "install", VMCT_DOCKER_DAEMON_JSON=conf,
                            STUB_INSTALLED_PACKAGES="docker.io")
        self.assertRan(r)
        self.assertEqual([], r.named("restart_service"))
        self.assertFalse([c for c in r.named("sudo") if c[:1] == ["install"] and conf in c])

    def test_docker_only_compute_node_installs_no_rally_vmct(self):
        requirements = os.path.join(self.tmp, "requirements")
        os.makedirs(requirements)
        open(os.path.join(requirements, "upper-constraints.txt"), "w").close()
        r = self.run_plugin("stack", "install", services=base.DOCKER_ONLY_NODE,
                            VMCT_DOCKER_COMPUTE="replace", Q_AGENT="ovn",
                            REQUIREMENTS_DIR=requirements)
        self.assertRan(r)
        self.assertEqual([], r.named("setup_develop"))
        self.assertIn([INSTALL_DRIVER, "--constraints",
                       os.path.join(requirements, "upper-constraints.txt")], r.named("python3"))

    def test_prebuilt_images_need_no_build_tools(self):
        r = self.run_plugin("stack", "install", VMCT_QEMU_GUEST_DIR=self.make_qemu_guest(),
                            VMCT_DOCKER_IMAGE_FILE=self.make_docker_tar(),
                            services="key,n-api,n-cpu", VMCT_KINDS="kvm docker")
        self.assertRan(r)
        self.assertEqual([["netcat-openbsd"]], r.named("install_package"))


class CheckSettingsTestCase(base.PluginTestCase):

    def test_unknown_docker_compute_mode(self):
        r = self.run_plugin("stack", "install", VMCT_DOCKER_COMPUTE="sideways")
        self.assertDies(r, "VMCT_DOCKER_COMPUTE='sideways'", "separate", "replace")
        self.assertEqual([], r.named("setup_develop"))

    def test_any_neutron_backend_is_fine(self):
        r = self.run_plugin("stack", "install", Q_AGENT="ovn")
        self.assertRan(r)

    def test_unknown_kind(self):
        r = self.run_plugin("stack", "install", VMCT_KINDS="kvm xen")
        self.assertDies(r, "VMCT_KINDS", "'xen'")

    def test_vmct_needs_rally_openstacks_plugin(self):
        r = self.run_plugin("stack", "install", DEVSTACK_PLUGINS="rally-vmct")
        self.assertDies(r, "enable_plugin rally-openstack", "disable_service vmct")

    def test_docker_only_compute_needs_no_rally(self):
        r = self.run_plugin("stack", "install", services=base.DOCKER_ONLY_NODE,
                            VMCT_DOCKER_COMPUTE="replace", DEVSTACK_PLUGINS="rally-vmct")
        self.assertRan(r)

    def test_docker_compute_needs_n_cpu(self):
        r = self.run_plugin("stack", "install", services="key,vmct-docker")
        self.assertDies(r, "enable_service n-cpu")


class PostConfigTestCase(base.PluginTestCase):

    def test_separate_docker_compute(self):
        r = self.run_plugin("stack", "post-config")
        self.assertRan(r)
        nova = "/etc/nova/nova-vmct-docker.conf"
        state = os.path.join(self.data, "vmct", "docker-compute")
        self.assertEqual([
            ["/etc/nova/nova.conf", "libvirt", "wait_soft_reboot_seconds", "20"],
            [nova, "DEFAULT", "compute_driver", "docker.DockerDriver"],
            [nova, "docker", "soft_reboot_timeout", "20"],
            [nova, "DEFAULT", "host", "node1-docker"],
            [nova, "DEFAULT", "state_path", state],
            [nova, "DEFAULT", "instances_path", state + "/instances"],
            [nova, "oslo_concurrency", "lock_path", state + "/locks"],
            # ports bound to this node's own agent, on its integration bridge
            [nova, "docker", "network_binding_host", "node1"],
            [nova, "docker", "integration_bridge", "br-int"],
            # os-vif on OVSDB's unix socket, never devstack's TCP remote
            [nova, "os_vif_ovs", "ovsdb_connection", "unix:/var/run/openvswitch/db.sock"],
        ], r.named("iniset"))
        self.assertTrue(os.path.isdir(state + "/instances"))
        self.assertTrue(os.path.isdir(state + "/locks"))

    def test_separate_docker_compute_names_can_be_set(self):
        r = self.run_plugin("stack", "post-config", VMCT_DOCKER_COMPUTE_HOST="dock1",
                            VMCT_DOCKER_NETWORK_BINDING_HOST="node1.example.org",
                            OVS_BRIDGE="br-int2")
        self.assertRan(r)
        inisets = r.named("iniset")
        nova = "/etc/nova/nova-vmct-docker.conf"
        self.assertIn([nova, "DEFAULT", "host", "dock1"], inisets)
        self.assertIn([nova, "docker", "network_binding_host", "node1.example.org"], inisets)
        self.assertIn([nova, "docker", "integration_bridge", "br-int2"], inisets)

    def test_driver_rootwrap_filters_join_novas(self):
        for kw in ({}, {"services": base.DOCKER_ONLY_NODE, "VMCT_DOCKER_COMPUTE": "replace",
                        "Q_AGENT": "ovn"}):
            r = self.run_plugin("stack", "post-config", **kw)
            self.assertRan(r)
            self.assertIn(["sudo", "install", "-o", "root", "-g", "root", "-m", "0644",
                           os.path.join(ROOT, "nova-docker", "etc", "nova", "rootwrap.d",
                                        "docker.filters"), "/etc/nova/rootwrap.d/"],
                          r.calls)

    def test_replace_mode_switches_this_nodes_driver(self):
        r = self.run_plugin("stack", "post-config", services=base.DOCKER_ONLY_NODE,
                            VMCT_DOCKER_COMPUTE="replace", Q_AGENT="ovn")
        self.assertRan(r)
        self.assertEqual([["/etc/nova/nova.conf", "DEFAULT", "compute_driver",
                           "docker.DockerDriver"],
                          ["/etc/nova/nova.conf", "docker", "soft_reboot_timeout", "20"],
                          # nova-cpu.conf gets devstack's TCP remote after post-config: the
                          # Docker compute reads this file last
                          ["/etc/nova/nova-vmct-docker.conf", "os_vif_ovs", "ovsdb_connection",
                           "unix:/var/run/openvswitch/db.sock"]],
                         r.named("iniset"))

    def test_ovsdb_socket_of_ovn_built_from_source(self):
        r = self.run_plugin("stack", "post-config", OVS_RUNDIR="/usr/local/var/run/openvswitch")
        self.assertRan(r)
        self.assertIn(["/etc/nova/nova-vmct-docker.conf", "os_vif_ovs", "ovsdb_connection",
                       "unix:/usr/local/var/run/openvswitch/db.sock"], r.named("iniset"))

    OVN_NODE = base.SINGLE_NODE.replace("q-agt,q-dhcp", "ovn-controller,ovn-northd,q-ovn-agent")

    def ovs_vsctl(self, result):
        return [c for c in result.named("sudo") if c[:1] == ["ovs-vsctl"]]

    def test_ovn_on_the_userspace_datapath_gets_its_br_int_there(self):
        r = self.run_plugin("stack", "post-config", services=self.OVN_NODE, Q_AGENT="ovn",
                            OVS_DATAPATH_TYPE="netdev")
        self.assertRan(r)
        self.assertEqual([["ovs-vsctl", "--timeout=60", "--no-wait", "set", "Open_vSwitch", ".",
                           "external-ids:ovn-bridge-datapath-type=netdev"]], self.ovs_vsctl(r))

    def test_kernel_datapath_or_ovs_agent_leave_ovn_alone(self):
        for env in ({"Q_AGENT": "ovn"}, {"Q_AGENT": "ovn", "OVS_DATAPATH_TYPE": "system"},
                    {"Q_AGENT": "openvswitch", "OVS_DATAPATH_TYPE": "netdev"}):
            r = self.run_plugin("stack", "post-config", services=self.OVN_NODE, **env)
            self.assertRan(r)
            self.assertEqual([], self.ovs_vsctl(r), env)

    def test_ovn_datapath_without_open_vswitch_stops_stacking(self):
        r = self.run_plugin("stack", "post-config", services=self.OVN_NODE, Q_AGENT="ovn",
                            OVS_DATAPATH_TYPE="netdev", prelude="""
function stub_sudo_hook {
    [[ "$1" != ovs-vsctl ]]
}""")
        self.assertDies(r, "OVS_DATAPATH_TYPE=netdev under OVN", "OVN_BUILD_FROM_SOURCE")

    def test_libvirt_only_node(self):
        r = self.run_plugin("stack", "post-config", services="key,n-api,n-cpu")
        self.assertRan(r)
        self.assertEqual([["/etc/nova/nova.conf", "libvirt", "wait_soft_reboot_seconds", "20"]],
                         r.named("iniset"))

    def test_other_virt_driver_left_alone(self):
        r = self.run_plugin("stack", "post-config", services="key,n-api,n-cpu",
                            VIRT_DRIVER="ironic")
        self.assertRan(r)
        self.assertEqual([], r.named("iniset"))


class ExtraTestCase(base.PluginTestCase):

    def run_extra(self, **kw):
        kw.setdefault("VMCT_QEMU_GUEST_DIR", self.make_qemu_guest())
        kw.setdefault("VMCT_DOCKER_IMAGE_FILE", self.make_docker_tar())
        return self.run_plugin("stack", "extra", **kw)

    def task_args(self):
        with open(os.path.join(self.data, "vmct", "task-args.yaml")) as f:
            return yaml.safe_load(f)

    def test_single_node(self):
        guest = self.make_qemu_guest()
        tar = self.make_docker_tar()
        r = self.run_extra(VMCT_QEMU_GUEST_DIR=guest, VMCT_DOCKER_IMAGE_FILE=tar)
        self.assertRan(r)
        os_ = ("openstack", "--os-cloud", "devstack-admin", "--os-region-name", "RegionOne")
        self.assertInOrder(
            r,
            ("echo_summary", "Starting the Docker compute"),
            ("run_process", "vmct-docker",
             "%s/nova-compute --config-file /etc/nova/nova-cpu.conf "
             "--config-file /etc/nova/nova-vmct-docker.conf" % self.bin, "docker"),
            os_ + ("compute", "service", "list", "--service", "nova-compute",
                   "--host", "node1-docker"),
            os_ + ("flavor", "create", "--public", "--ram", "256", "--vcpus", "1",
                   "--disk", "1", "vmct.tiny"),
            os_ + ("network", "create", "--share", "vmct-net"),
            os_ + ("subnet", "create", "--network", "vmct-net", "--subnet-range",
                   "10.77.0.0/24", "--gateway", "none", "--dhcp", "--allocation-pool",
                   "start=10.77.0.100,end=10.77.0.250", "vmct-net-subnet"),
            ("python3", os.path.join(ROOT, "tools", "images", "upload_image.py"), guest),
            os_ + ("image", "create", "--public", "--container-format", "docker",
                   "--disk-format", "raw", "--file", tar,
                   "--property", "img_hv_type=docker", "--property", "hw_architecture=x86_64",
                   "--property", "trait:CUSTOM_NOVA_DOCKER=required", "vmct-workload-docker"),
            os_ + ("compute", "service", "list", "--service", "nova-compute",
                   "--host", "node1"),
            ("nova-manage", "--config-file", "/etc/nova/nova.conf", "cell_v2",
             "discover_hosts", "--verbose"),
            ("python3", os.path.join(base.DEVSTACK, "tools", "vmct_aggregates.py"),
             "--values", VALUES, "--timeout", "300", "--expect", "kvm=1",
             "--expect", "docker=1"),
        )
        self.assertEqual(1, len(r.named("run_process")))
        # no image was built: prebuilt ones were given
        self.assertEqual([], [c for c in r.named("sudo") if "build" in " ".join(c)])
        args = self.task_args()
        proxy = os.path.join(self.data, "vmct", "proxy-command")
        kinds = [("kvm", "vmct-qemu-guest", "qemu"), ("docker", "vmct-workload-docker", "docker")]
        # every argument of every sample (the writer the AIO uses: tools/task_args.py)
        self.assertEqual({
            "libvirt_kind": "kvm",
            "instance_kinds": {
                name: {"image": image, "flavor": "vmct.tiny", "availability_zone": zone}
                for name, image, zone in kinds},
            "network": "vmct-net", "network_id": "id-of-vmct-net", "ssh_user": "root",
            "proxy_command": proxy + " %h %p", "access_namespace": "qdhcp-id-of-vmct-net",
            "kinds": [{"name": name, "image": {"name": image}, "flavor": {"name": "vmct.tiny"},
                       "availability_zone": zone, "ssh_user": "root"}
                      for name, image, zone in kinds],
            "boot_args": {"nics": [{"net-id": "id-of-vmct-net"}]},
            "contexts": {"users": {"tenants": 1, "users_per_tenant": 1}, "keypair": {},
                         "allow_ssh": None},
            "soft_reboot_fallback_seconds": 20,
        }, args)
        self.assertTrue(os.access(proxy, os.X_OK))
        with open(proxy) as f:
            # -q 0: it ends when Rally (the stack user, who may not signal sudo) closes it
            self.assertIn('exec sudo ip netns exec qdhcp-id-of-vmct-net nc -q 0 -- "$1" "$2"',
                          f.read())

    def test_images_built_when_not_given(self):
        data = os.path.join(self.data, "vmct")
        guest = os.path.join(data, "images", "qemu-guest")
        tar = os.path.join(data, "images", "vmct-workload.tar")
        # the builders (run through sudo) leave their outputs where asked
        prelude = r'''
function stub_sudo_hook {
    if [[ "$1" == */tools/images/build-qemu-guest ]]; then
        mkdir -p "$3"; for f in vmlinuz initrd.img disk.qcow2 build-id; do echo x > "$3/$f"; done
    elif [[ "$1" == */tools/images/docker/build ]]; then
        echo x > "$5"
    fi
}'''
        r = self.run_plugin("stack", "extra", prelude=prelude)
        self.assertRan(r)
        self.assertInOrder(
            r,
            ("sudo", os.path.join(ROOT, "tools", "images", "build-qemu-guest"), "--out", guest,
             "--cache", os.path.join(data, "images", "cache")),
            ("python3", os.path.join(ROOT, "tools", "images", "upload_image.py"), guest),
            ("sudo", os.path.join(ROOT, "tools", "images", "docker", "build"),
             "--tag", "vmct-workload:latest", "--save", tar,
             "--cache-dir", os.path.join(data, "images", "docker")),
            ("openstack", "--os-cloud", "devstack-admin", "--os-region-name", "RegionOne",
             "image", "create", "--public", "--container-format", "docker"))

    def test_missing_guest_files_stop_stacking_with_the_fix(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        r = self.run_extra(VMCT_QEMU_GUEST_DIR=empty)
        self.assertDies(r, empty + "/vmlinuz", "VMCT_QEMU_GUEST_DIR")

    def test_existing_resources_are_not_created_again(self):
        r = self.run_extra(STUB_EXISTS=0)
        self.assertRan(r)
        creates = [c for c in r.named("openstack") if "create" in c]
        self.assertEqual([], creates)
        self.assertTrue(os.path.exists(os.path.join(self.data, "vmct", "task-args.yaml")))

    def test_replace_mode_restarts_n_cpu_in_the_docker_group(self):
        r = self.run_plugin("stack", "extra", services=base.DOCKER_ONLY_NODE,
                            VMCT_DOCKER_COMPUTE="replace", Q_AGENT="ovn")
        self.assertRan(r)
        self.assertEqual(
            [["stop_process", "n-cpu"],
             ["run_process", "n-cpu", "%s/nova-compute --config-file /etc/nova/nova-cpu.conf "
              "--config-file /etc/nova/nova-vmct-docker.conf" % self.bin, "docker"]],
            [c for c in r.calls if c[0] in ("stop_process", "run_process")])
        self.assertEqual([], r.named("openstack"))
        # the stack user's nova-compute may connect to OVSDB's unix socket, before it starts
        sock = "/var/run/openvswitch/db.sock"
        self.assertEqual([["chgrp", "stack", sock], ["chmod", "0770", sock]],
                         r.named("sudo"))
        self.assertLess(r.calls.index(["sudo", "chmod", "0770", sock]),
                        r.calls.index(["stop_process", "n-cpu"]))

    def test_multinode_controller_describes_both_kinds(self):
        r = self.run_extra(services="key,n-api,n-cpu,q-dhcp", VMCT_KINDS="kvm docker",
                           Q_AGENT="ovn")
        self.assertRan(r)
        self.assertEqual(["kvm", "docker"], list(self.task_args()["instance_kinds"]))
        self.assertEqual("ovnmeta-id-of-vmct-net", self.task_args()["access_namespace"])
        self.assertEqual([], r.named("run_process"))

    def test_local_conf_overrides_shared_values(self):
        r = self.run_extra(services="key,n-api,n-cpu", VMCT_KVM_AZ="fast",
                           VMCT_FLAVOR_NAME="m1.vmct")
        self.assertRan(r)
        self.assertEqual({"image": "vmct-qemu-guest", "flavor": "m1.vmct",
                          "availability_zone": "fast"}, self.task_args()["instance_kinds"]["kvm"])
        self.assertIn("m1.vmct", r.named("openstack")[1])

    def test_an_emulating_libvirt_compute_is_named_qemu_tcg(self):
        r = self.run_extra(services="key,n-api,n-cpu", LIBVIRT_TYPE="qemu")
        self.assertRan(r)
        self.assertEqual(["qemu-tcg"], list(self.task_args()["instance_kinds"]))
        self.assertEqual("qemu-tcg", self.task_args()["libvirt_kind"])

    def test_kvm_only(self):
        r = self.run_extra(services="key,n-api,n-cpu")
        self.assertRan(r)
        aggregates = [c for c in r.named("python3") if c[0].endswith("vmct_aggregates.py")]
        self.assertEqual(["--timeout", "300", "--expect", "kvm=1"], aggregates[0][3:])
        self.assertEqual(["kvm"], list(self.task_args()["instance_kinds"]))
        self.assertFalse([c for c in r.named("openstack") if "vmct-workload-docker" in c])


class UnstackCleanTestCase(base.PluginTestCase):

    def test_unstack_stops_the_docker_compute_and_agent(self):
        r = self.run_plugin("unstack")
        self.assertRan(r)
        self.assertEqual([["vmct-docker"]], r.named("stop_process"))

    def test_clean_removes_containers_images_config_and_data(self):
        prelude = r'''
function stub_sudo_hook {
    if [[ "$1 $2" == "docker ps" ]]; then echo c1; echo c2;
    elif [[ "$1 $2" == "docker images" ]]; then echo i1; fi
}'''
        r = self.run_plugin("clean", prelude=prelude)
        self.assertRan(r)
        self.assertInOrder(
            r,
            ("sudo", "docker", "ps", "-aq", "--filter", "name=^nova-"),
            ("sudo", "docker", "rm", "-f", "c1", "c2"),
            ("sudo", "docker", "images", "-q", "glance/*"),
            ("sudo", "docker", "rmi", "-f", "i1"),
            ("sudo", "rm", "-f", "/etc/nova/nova-vmct-docker.conf"),
            ("sudo", "rm", "-rf", os.path.join(self.data, "vmct")))

    def test_clean_on_a_controller_without_docker_compute(self):
        r = self.run_plugin("clean", services="key,n-api,n-cpu")
        self.assertRan(r)
        self.assertEqual([["rm", "-rf", os.path.join(self.data, "vmct")]], r.named("sudo"))
