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
"""Waiting for Neutron's network-vif-plugged, as the libvirt driver does.

Shared by :class:`~nova_docker_vmct.driver.DockerDriver` and
:class:`~nova_docker_vmct.floor.FloorDriver`, so the floor waits exactly as
the Docker driver does.
"""

import contextlib

from oslo_log import log as logging

import nova.conf
from nova import exception
from nova.network import model as network_model

from nova_docker_vmct import compat

LOG = logging.getLogger(__name__)
CONF = nova.conf.CONF


def expected(network_info):
    """The network-vif-plugged events of the ports Neutron has not up yet."""
    return [('network-vif-plugged', vif['id'])
            for vif in network_info or []
            if vif.get('active', True) is False and
            vif.get('vnic_type') != network_model.VNIC_TYPE_REMOTE_MANAGED]


def _failed(event_name, instance):
    LOG.error('Neutron reported failure on event %(event)s',
              {'event': event_name}, instance=instance)
    if CONF.vif_plugging_is_fatal:
        raise exception.VirtualInterfaceCreateException()


@contextlib.contextmanager
def plugged(virtapi, instance, network_info):
    """After the body, wait for network-vif-plugged of inactive ports.

    ``vif_plugging_timeout`` and ``vif_plugging_is_fatal`` as libvirt.
    """
    timeout = CONF.vif_plugging_timeout
    events = expected(network_info) if timeout else []
    try:
        with compat.wait_for_instance_event(
                virtapi, instance, events, timeout, error_callback=_failed):
            yield
    except compat.InstanceEventTimeout:
        if CONF.vif_plugging_is_fatal:
            raise exception.VirtualInterfaceCreateException()
        LOG.warning('Timed out waiting for network-vif-plugged; '
                    'continuing (vif_plugging_is_fatal=False)',
                    instance=instance)
