"""devstack/local.conf*.example: their localrc, run with devstack's functions stubbed, passes
the plugin's own settings checks and enables what each node needs."""

import os
import shlex
import subprocess

from tests.unit.devstack import base

# stackrc's default services (an all-in-one with OVN), before local.conf changes them
STACKRC_SERVICES = ("key,n-api,n-api-meta,n-cpu,n-cond,n-sch,n-novnc,placement-api,"
                    "placement-client,g-api,c-sch,c-api,c-vol,horizon,rabbit,tempest,mysql,"
                    "etcd3,dstat,ovn-northd,ovn-controller,q-ovn-metadata-agent,q-svc,"
                    "ovsdb-server,ovs-vswitchd")


def localrc(path):
    lines, inside = [], False
    with open(path) as f:
        for line in f:
            if line.startswith("[["):
                inside = line.strip() == "[[local|localrc]]"
                continue
            if inside:
                lines.append(line)
    return "".join(lines)


class ExamplesTestCase(base.PluginTestCase):

    def apply(self, name):
        path = os.path.join(base.DEVSTACK, name)
        script = "\n".join([
            "set -o errexit",
            "source %s" % shlex.quote(base.STUBS),
            "function enable_plugin {\n    stub_record enable_plugin \"$@\"\n}",
            "function disable_all_services {\n    ENABLED_SERVICES=\n}",
            localrc(path),
            "source %s" % shlex.quote(os.path.join(base.DEVSTACK, "override-defaults")),
            "source %s" % shlex.quote(os.path.join(base.DEVSTACK, "settings")),
            "source %s" % shlex.quote(os.path.join(base.DEVSTACK, "lib", "vmct")),
            "vmct_check_settings",
            "echo \"$ENABLED_SERVICES\"; vmct_kinds | paste -sd' '; echo \"$VMCT_DOCKER_COMPUTE\"",
        ])
        env = self.devstack_env(STACKRC_SERVICES)
        for var in ("Q_AGENT", "VIRT_DRIVER"):
            env.pop(var)
        proc = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(0, proc.returncode, "%s: %s" % (name, proc.stderr))
        services, kinds, mode = proc.stdout.splitlines()
        with open(self.log) as f:
            plugins = [shlex.split(line)[1] for line in f if line.startswith("enable_plugin")]
        return set(services.split(",")), kinds, mode, plugins

    def test_single_node(self):
        services, kinds, mode, plugins = self.apply("local.conf.example")
        self.assertEqual(["rally-openstack", "rally-vmct"], plugins)
        self.assertTrue({"vmct", "vmct-docker", "n-cpu", "q-agt", "q-dhcp"} <= services,
                        services)
        self.assertFalse({"ovn-controller", "ovn-northd"} & services)
        self.assertEqual("kvm docker", kinds)
        self.assertEqual("separate", mode)

    def test_multinode_controller(self):
        services, kinds, _, plugins = self.apply("local.conf.multinode.example")
        self.assertEqual(["rally-openstack", "rally-vmct"], plugins)
        self.assertIn("vmct", services)
        self.assertNotIn("vmct-docker", services)
        self.assertEqual("kvm docker", kinds)

    def test_multinode_docker_compute(self):
        services, _, mode, plugins = self.apply("local.conf.multinode-compute.example")
        self.assertEqual(["rally-vmct"], plugins)
        self.assertEqual({"n-cpu", "placement-client", "q-agt", "vmct-docker"}, services)
        self.assertEqual("replace", mode)
