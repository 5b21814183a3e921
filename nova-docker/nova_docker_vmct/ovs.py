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
"""The OVS wiring a replugged port keeps (OVSDB, from nova-compute).

os-vif adds and removes the instance's port on the integration bridge. A
container's host end dies with its network namespace at every stop, so every
start plugs a new device under the old name; the port is removed in a
transaction of its own first (removed and added in one, ovs-vswitchd would
stay on the dead device). What this module adds: the old port's VLAN tag and
OpenFlow port number are read before, and the new port is created with them
before os-vif adds it (os-vif's add keeps an existing port), so the Neutron
agent's flows for it stay valid and the instance is reachable at once after
a restart instead of once the agent has rewired it.

OVSDB is reached as os-vif reaches it: ``[os_vif_ovs] ovsdb_connection``
(a unix socket on this host), from the nova-compute process.
"""

from oslo_log import log as logging

LOG = logging.getLogger(__name__)


def _idl_api(connection, timeout):
    from ovsdbapp.backend.ovs_idl import connection as ovs_connection
    from ovsdbapp.backend.ovs_idl import idlutils
    from ovsdbapp.schema.open_vswitch import impl_idl
    from ovs.db import idl

    helper = idlutils.get_schema_helper(connection, 'Open_vSwitch')
    for table in ('Open_vSwitch', 'Bridge', 'Port', 'Interface'):
        helper.register_table(table)
    return impl_idl.OvsdbIdl(ovs_connection.Connection(
        idl=idl.Idl(connection, helper), timeout=timeout))


def _single(value):
    """An OVSDB optional integer (a list of 0 or 1 items) or -1 as None."""
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, int) and value > 0 else None


class Wiring(object):
    """Read and restore a port's tag and OpenFlow port number."""

    def __init__(self, connection, timeout, api_factory=_idl_api):
        self._connection = connection
        self._timeout = timeout
        self._api_factory = api_factory
        self._api = None

    @property
    def api(self):
        if self._api is None:
            self._api = self._api_factory(self._connection, self._timeout)
        return self._api

    def check(self):
        """Connect now (nova-compute's start), so a refusal says why."""
        return self.api

    def close(self):
        """Stop the connection's thread (nova-compute's stop)."""
        if self._api is not None:
            self._api.ovsdb_connection.stop()
            self._api = None

    def get(self, dev):
        """{'tag': int|None, 'ofport': int|None} of the port ``dev``.

        Empty when there is no such port (a first plug).
        """
        ports = self.api.db_find('Port', ('name', '=', dev),
                                 columns=['tag']).execute(check_error=True)
        if not ports:
            return {}
        ifaces = self.api.db_find('Interface', ('name', '=', dev),
                                  columns=['ofport']).execute(
                                      check_error=True)
        return {'tag': _single(ports[0].get('tag')),
                'ofport': _single(ifaces[0].get('ofport')
                                  if ifaces else None)}

    def create(self, bridge, dev, tag=None, ofport=None):
        """Add ``dev`` to ``bridge`` with a VLAN tag and OpenFlow port.

        Nothing when neither is known. os-vif's add that follows keeps the
        port and sets Neutron's external ids on it.
        """
        if tag is None and ofport is None:
            return
        with self.api.transaction(check_error=True) as txn:
            txn.add(self.api.add_port(bridge, dev, may_exist=True))
            if tag is not None:
                txn.add(self.api.db_set('Port', dev, ('tag', tag)))
            if ofport is not None:
                txn.add(self.api.db_set('Interface', dev,
                                        ('ofport_request', ofport)))
        LOG.debug('Port %(dev)s created on %(br)s with tag %(tag)s, '
                  'OpenFlow port %(ofport)s', {'dev': dev, 'br': bridge,
                                               'tag': tag, 'ofport': ofport})
