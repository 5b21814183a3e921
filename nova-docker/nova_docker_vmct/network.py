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

As Zun and kuryr plug container ports: the bridge side through os-vif
(``os_vif.plug``/``unplug``: the OVS port with Neutron's external ids, with
``port_profile.create_port``; the hybrid plug's qbr, qvb and qvo), the rest
through the driver's typed privsep entrypoints
(:mod:`nova_docker_vmct.privsep.linux_net`): the veth pair, the host end into
the hybrid plug's bridge (which os-vif leaves to the caller, as it leaves it
to libvirt), the peer into the container's network namespace, named by its
path (Docker's ``NetworkSettings.SandboxKey``), and configured there.
"""

import os

from nova import exception
import nova.conf
from oslo_log import log as logging

from nova_docker_vmct import ovs
from nova_docker_vmct.privsep import linux_net
from nova_docker_vmct import vif as vif_plan

LOG = logging.getLogger(__name__)
CONF = nova.conf.CONF
CAPABILITY_NAMES = {12: 'CAP_NET_ADMIN', 13: 'CAP_NET_RAW',
                    21: 'CAP_SYS_ADMIN'}


def device_exists(name):
    return os.path.exists('/sys/class/net/%s' % name)


def os_vif_wiring():
    """The OVS wiring store on os-vif's OVSDB connection."""
    conf = CONF.os_vif_ovs
    return ovs.Wiring(conf.ovsdb_connection, conf.ovs_vsctl_timeout)


class OsVif(object):
    """os-vif's plug and unplug of a plan's port, as Nova converts it."""

    def __init__(self):
        import os_vif
        self._os_vif = os_vif
        # nova-compute initialised it at its start; again is a no-op
        os_vif.initialize()

    @staticmethod
    def _objects(p, instance):
        from nova.network import os_vif_util
        osvif = os_vif_util.nova_to_osvif_vif(p.vif)
        osvif.vif_name = p.host_dev
        if not p.hybrid:
            # the port is ours to add: no hypervisor adds it
            osvif.port_profile.create_port = True
        return osvif, os_vif_util.nova_to_osvif_instance(instance)

    def plug(self, p, instance):
        self._os_vif.plug(*self._objects(p, instance))

    def unplug(self, p, instance):
        self._os_vif.unplug(*self._objects(p, instance))


class Plugger(object):
    """Plugs VifPlans; ``conf`` is the ``[docker]`` option group.

    ``links``: the privsep entrypoints; ``os_vif``, ``wiring``: factories of
    the os-vif adapter and the OVS wiring store (made when first needed).
    """

    def __init__(self, conf, links=linux_net, os_vif=OsVif,
                 wiring=os_vif_wiring, exists=device_exists):
        self.conf = conf
        self._links = links
        self._os_vif_factory = os_vif
        self._wiring_factory = wiring
        self._os_vif = self._wiring = None
        self._exists = exists

    @property
    def os_vif(self):
        if self._os_vif is None:
            self._os_vif = self._os_vif_factory()
        return self._os_vif

    @property
    def wiring(self):
        if self._wiring is None:
            self._wiring = self._wiring_factory()
        return self._wiring

    def close(self):
        """Let go of OVSDB (os-vif keeps its own connection)."""
        if self._wiring is not None:
            self._wiring.close()
            self._wiring = None

    @property
    def ovs(self):
        return self.conf.host_attach == 'ovs'

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

    def check_host(self, driver):
        """Refuse to start without the privsep daemons or OVSDB.

        NovaException naming what is missing. Starting the daemons here
        (each reports its capabilities) makes a node whose root helper
        cannot start them (sudo, the rootwrap filters) fail at start, not at
        its first boot; OVSDB is connected to for the same reason.
        """
        held = []
        for name in ('vif_plug', 'netns_plug'):
            try:
                caps = getattr(self._links, name + '_capabilities')()
            except Exception as e:
                raise exception.NovaException(
                    'The %(driver)s could not start its privsep daemon '
                    '%(name)s (%(e)s). Nova starts it with its root helper: '
                    'see the rootwrap filters in etc/nova/rootwrap.d/'
                    'docker.filters and the sudoers line for nova-rootwrap; '
                    '[nova_docker_%(name)s] helper_command replaces the '
                    'helper.' % {'driver': driver, 'name': name, 'e': e})
            held.append('%s (%s)' % (name, ', '.join(
                CAPABILITY_NAMES.get(c, str(c)) for c in caps) or 'none'))
        LOG.info('%s privsep daemons: %s', driver, '; '.join(held))
        if self.ovs:
            self._check_ovsdb(driver)

    def _check_ovsdb(self, driver):
        try:
            self.os_vif
            self.wiring.check()
        except Exception as e:
            raise exception.NovaException(
                'The %(driver)s cannot reach OVSDB at [os_vif_ovs] '
                'ovsdb_connection = %(conn)s (%(e)s). Point it at the local '
                'ovsdb-server\'s unix socket (unix:/run/openvswitch/db.sock; '
                'it replaces [docker] ovsdb_connection) and let '
                'nova-compute\'s user connect to it (the socket\'s group).'
                % {'driver': driver, 'e': e,
                   'conn': CONF.os_vif_ovs.ovsdb_connection})

    def is_plugged(self, plans):
        """True when every host end exists (it dies with the netns)."""
        return bool(plans) and all(self._exists(p.host_dev) for p in plans)

    def plug(self, plans, netns, instance):
        """Plug every interface into the container netns at path ``netns``."""
        self.plug_host_only(plans, instance)
        self.move_in(plans, netns)

    def plug_host_only(self, plans, instance):
        """Plug every interface as a veth pair that stays in the host netns.

        The bridge port is an instance's, with Neutron's external ids, so the
        agent wires it and Neutron sends network-vif-plugged; the peer stays
        in the host netns until :meth:`move_in`, or for good
        (:class:`~nova_docker_vmct.floor.FloorDriver`: nothing is behind it).
        """
        for p in plans:
            self._plug_one(p, instance)

    def move_in(self, plans, netns):
        """Move the peers into the container netns at ``netns``, configured.

        A failure removes the port's host end (the pair goes with it).
        """
        for p in plans:
            try:
                self._links.move_to_netns(p.peer_dev, netns)
                self._links.configure_in_netns(
                    netns, p.peer_dev, p.ifname, p.mac, p.mtu,
                    list(p.addresses), list(p.gateways),
                    [list(r) for r in p.routes])
            except Exception:
                self._links.delete_device(p.host_dev)
                raise

    def _plug_one(self, p, instance):
        wiring = self._detach(p, instance)
        for dev in (p.host_dev, p.peer_dev):
            if self._exists(dev):
                # left over from a netns that is gone: start clean
                self._links.delete_device(dev)
        self._links.create_veth_pair(p.host_dev, p.peer_dev, p.mtu)
        try:
            self._attach(p, instance, wiring)
        except Exception:
            self._remove_devices(p)
            raise
        LOG.debug('Plugged port %(port)s as %(host)s <-> %(peer)s',
                  {'port': p.port_id, 'host': p.host_dev,
                   'peer': p.peer_dev})

    def _detach(self, p, instance):
        """Remove the bridge side of a previous plug; the wiring it had.

        Removed in its own transaction: ovs-vswitchd would stay on the dead
        device if the port were removed and added in one.
        """
        if not self.ovs:
            return {}
        wiring = self._read_wiring(p)
        self.os_vif.unplug(p, instance)
        return wiring

    def _read_wiring(self, p):
        try:
            return self.wiring.get(p.ovs_dev)
        except Exception as e:
            LOG.debug('Could not read the OVS wiring of %(dev)s: %(e)s',
                      {'dev': p.ovs_dev, 'e': e})
            return {}

    def _attach(self, p, instance, wiring):
        if not self.ovs:
            self._links.add_to_bridge(p.host_dev, p.bridge)
            return
        if wiring:
            self.wiring.create(p.bridge, p.ovs_dev, **wiring)
        self.os_vif.plug(p, instance)
        if p.hybrid:
            self._links.add_to_bridge(p.host_dev, p.qbr_dev)

    def announce(self, plans, netns):
        """Gratuitous ARP from every interface (best effort, never fatal)."""
        for p in plans:
            addresses = vif_plan.ipv4_addresses(p)
            if not addresses:
                continue
            try:
                self._links.announce(netns, p.ifname, p.mac, list(addresses))
            except Exception as e:
                LOG.warning('Gratuitous ARP from %(ifname)s failed: %(e)s',
                            {'ifname': p.ifname, 'e': e})

    def unplug(self, plans, instance):
        """Remove bridge ports and host ends; tolerates missing pieces."""
        for p in plans:
            if self.ovs:
                try:
                    self.os_vif.unplug(p, instance)
                except Exception as e:
                    LOG.warning('os-vif could not unplug port %(port)s: '
                                '%(e)s', {'port': p.port_id, 'e': e})
            self._remove_devices(p)

    def _remove_devices(self, p):
        # a veth pair goes with either end; a hybrid plug's own devices are
        # os-vif's to remove
        for dev in (p.host_dev, p.peer_dev):
            if self._exists(dev):
                self._links.delete_device(dev)
