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
"""Plug and unplug instance interfaces (veth pair, bridge, container netns).

Runs the argv lists built by :mod:`nova_docker_vmct.vif` (never through a
shell) in the driver's privsep daemon (:mod:`nova_docker_vmct.privsep`):
nova-compute itself needs no root.
"""

import os
import shutil
import sys

from nova import exception
from oslo_log import log as logging

from nova_docker_vmct.privsep import linux_net
from nova_docker_vmct import vif as vif_plan

LOG = logging.getLogger(__name__)


def device_exists(name):
    return os.path.exists('/sys/class/net/%s' % name)


class Plugger(object):
    """Plugs VifPlans; ``conf`` is the ``[docker]`` option group."""

    def __init__(self, conf, run=linux_net.run_plug_command,
                 exists=device_exists):
        self.conf = conf
        self._run = run
        self._exists = exists

    def plans(self, network_info):
        """The VifPlans of network_info (the bridge: the port's, else ours)."""
        return vif_plan.plans(network_info or [], self.conf.integration_bridge)

    def refuse_unsupported(self, network_info):
        """Refuse a port bound for a plug the driver cannot do.

        InvalidInput naming the port and its type (:func:`vif.unsupported`):
        Nova aborts the build with it as the fault and does not reschedule,
        since no host of this driver could plug it.
        """
        for vif in network_info or []:
            reason = vif_plan.unsupported(vif, self.conf.host_attach)
            if reason:
                raise exception.InvalidInput(reason=reason)

    def missing_tools(self, *extra):
        """The tools plugging needs (and ``extra``) that are not on the PATH."""
        tools = ['ip'] + list(extra)
        if self.conf.host_attach == 'ovs':
            tools.append('ovs-vsctl')
        return [t for t in tools if shutil.which(t) is None]

    def check_host(self, driver, *extra):
        """Refuse to start without the tools or the privsep daemon.

        NovaException naming what is missing: the tools plugging needs
        (and ``extra``) on the PATH, or a daemon that runs a harmless
        command. That call starts the daemon, so a node whose root helper
        cannot (sudo, the rootwrap filters) fails at start, not at its
        first boot.
        """
        missing = self.missing_tools(*extra)
        if missing:
            raise exception.NovaException(
                'The %s needs %s on the PATH' % (driver, ', '.join(missing)))
        try:
            self._run(['ip', '-o', 'link', 'show', 'lo'])
        except Exception as e:
            raise exception.NovaException(
                'The %(driver)s could not run a command through its privsep '
                'daemon (%(e)s). Nova starts it with its root helper: see '
                'the rootwrap filters in etc/nova/rootwrap.d/docker.filters '
                'and the sudoers line for nova-rootwrap; '
                '[nova_docker_vif_plug] helper_command replaces the helper.'
                % {'driver': driver, 'e': e})

    def _attach(self, p, instance_uuid):
        if self.conf.host_attach == 'ovs':
            # A port left from the previous boot names a device that is gone.
            # Removing and re-adding it in one transaction leaves
            # ovs-vswitchd on the dead device: remove it in its own, and
            # re-add it with the same tag and OpenFlow port number.
            keep = self._wiring(p)
            self._detach(p)
            if p.hybrid:
                self._run(['ip', '-batch', '-'],
                          stdin=vif_plan.ip_batch(vif_plan.hybrid_commands(p)))
            self._run(vif_plan.ovs_attach_command(
                p, instance_uuid, db=self.conf.ovsdb_connection,
                timeout=self.conf.ovs_vsctl_timeout, keep=keep))
        else:
            self._run(vif_plan.linuxbridge_attach_command(p))

    def _wiring(self, p):
        try:
            return vif_plan.parse_ovs_wiring(self._run(
                vif_plan.ovs_wiring_command(
                    p, db=self.conf.ovsdb_connection,
                    timeout=self.conf.ovs_vsctl_timeout), check=False))
        except Exception as e:
            LOG.debug('Could not read the OVS wiring of %(dev)s: %(e)s',
                      {'dev': p.host_dev, 'e': e})
            return {}

    def _detach(self, p):
        if self.conf.host_attach == 'ovs':
            self._run(vif_plan.ovs_detach_command(
                p, db=self.conf.ovsdb_connection,
                timeout=self.conf.ovs_vsctl_timeout), check=False)

    def is_plugged(self, plans):
        """True when every host end exists (it dies with the netns)."""
        return bool(plans) and all(self._exists(p.host_dev) for p in plans)

    def plug(self, plans, netns_pid, instance_uuid):
        """Plug every interface into the netns of process netns_pid.

        Per port: veth pair created, peer moved into the netns and host end
        up (one ``ip -batch``), host end attached to the bridge, peer
        configured inside the netns (one ``nsenter ... ip -batch``).
        """
        prefix = vif_plan.netns_prefix(netns_pid)
        for index, p in enumerate(plans):
            # Two ip processes per port: host side, then container side.
            self._plug_one(p, instance_uuid,
                           vif_plan.veth_commands(p, netns_pid),
                           prefix + ['ip', '-batch', '-'],
                           vif_plan.container_commands(p, first=index == 0))

    def plug_host_only(self, plans, instance_uuid):
        """Plug every interface as a veth pair that stays in the host netns.

        The bridge port is an instance's, with Neutron's external ids, so the
        agent wires it and Neutron sends network-vif-plugged; nothing is
        behind it (:class:`~nova_docker_vmct.floor.FloorDriver`).
        """
        for p in plans:
            self._plug_one(p, instance_uuid, vif_plan.host_veth_commands(p))

    def move_in(self, plans, netns_pid):
        """Move the peers :meth:`plug_host_only` plugged into a netns.

        Configured there as :meth:`plug` configures them, with an IPv6
        link-local address again (the host netns gave them none).
        """
        prefix = vif_plan.netns_prefix(netns_pid)
        for index, p in enumerate(plans):
            try:
                self._run(['ip', 'link', 'set', p.peer_dev, 'netns',
                           str(int(netns_pid))])
                self._run(prefix + ['ip', '-batch', '-'],
                          stdin=vif_plan.ip_batch(
                              vif_plan.moved_in_commands(p, index == 0)))
            except Exception:
                self._run(['ip', 'link', 'del', p.host_dev], check=False)
                raise

    def _plug_one(self, p, instance_uuid, host_cmds, inside=None,
                  inside_cmds=()):
        for dev in p.host_devs:
            if self._exists(dev):
                # Left over from a netns that is gone: start clean.
                self._run(['ip', 'link', 'del', dev], check=False)
        self._run(['ip', '-batch', '-'], stdin=vif_plan.ip_batch(host_cmds))
        try:
            self._attach(p, instance_uuid)
            if inside:
                self._run(inside, stdin=vif_plan.ip_batch(inside_cmds))
        except Exception:
            self._remove_devices(p)
            raise
        LOG.debug('Plugged port %(port)s as %(host)s <-> %(ifname)s',
                  {'port': p.port_id, 'host': p.host_dev,
                   'ifname': p.ifname if inside else p.peer_dev})

    def announce(self, plans, netns_pid):
        """Gratuitous ARP from every interface (best effort, never fatal)."""
        prefix = vif_plan.netns_prefix(netns_pid)
        for p in plans:
            cmd = vif_plan.announce_command(p, sys.executable)
            if cmd is None:
                continue
            try:
                self._run(prefix + cmd)
            except Exception as e:
                LOG.warning('Gratuitous ARP from %(ifname)s failed: %(e)s',
                            {'ifname': p.ifname, 'e': e})

    def unplug(self, plans):
        """Remove host ends and bridge ports; tolerates missing pieces."""
        for p in plans:
            self._detach(p)
            self._remove_devices(p)

    def _remove_devices(self, p):
        # a veth pair goes with either end; a hybrid plug's bridge last
        for dev in p.host_devs:
            if self._exists(dev):
                self._run(['ip', 'link', 'del', dev], check=False)
