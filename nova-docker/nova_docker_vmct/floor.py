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
"""The floor: Nova's fake driver plus the network work every real driver does.

``compute_driver = docker.floor.FloorDriver``. Nova's fake driver waits for
the ports' allocation (it reads ``network_info``) and nothing else, so its
servers go ACTIVE before Neutron has wired a port: an optimistic floor for
drivers that plug their ports and wait for ``network-vif-plugged`` (libvirt,
this package's Docker driver). The floor plugs each port as the Docker
driver does, a veth pair whose host end joins the integration bridge with
Neutron's external ids (it stays in the host netns: there is no instance),
and waits for ``network-vif-plugged`` with the same code. A Docker boot minus
a floor boot is then the driver's own cost (image, create, start).

The spawn steps (``network_info``, ``plug_vifs``, ``wait_vif_plugged``) are
logged and, with ``[docker]spawn_events``, recorded as ``floor_<step>``
events of the instance's action. Ports are unplugged on destroy. The
``[docker]`` options ``host_attach`` and ``integration_bridge`` apply, and
os-vif's ``[os_vif_ovs]``. Everything else
(power, reboot, snapshot, resources: 1000 VCPU, 800000 MB) is Nova's fake.
"""

import time

from oslo_log import log as logging

import nova.conf
from nova.virt import fake

from nova_docker_vmct import conf as docker_conf
from nova_docker_vmct import network
from nova_docker_vmct import steps
from nova_docker_vmct import vif_events

LOG = logging.getLogger(__name__)
CONF = nova.conf.CONF
docker_conf.register_opts(CONF)
EVENT_PREFIX = 'floor_'


class FloorDriver(fake.FakeDriverWithoutFakeNodes):
    """Fake instances whose ports are plugged and waited for."""

    def __init__(self, virtapi, read_only=False, plugger=None,
                 clock=time.monotonic):
        super().__init__(virtapi, read_only)
        self._plugger = plugger or network.Plugger(CONF.docker)
        self.clock = clock

    def init_host(self, host):
        self._plugger.check_host('floor driver')
        super().init_host(host)

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        timer = steps.spawn_timer(context, instance.uuid, CONF.host,
                                  self.clock, EVENT_PREFIX,
                                  events=CONF.docker.spawn_events)
        try:
            with timer.step('network_info'):
                # waits for Nova's asynchronous allocation of the ports
                plans = self._plugger.plans(network_info)
            self._plug(instance, network_info, plans, timer)
            super().spawn(context, instance, image_meta, injected_files,
                          admin_password, allocations, network_info,
                          block_device_info, power_on, accel_info)
        finally:
            timer.send()
        LOG.info('Spawned floor instance in %(t).2f s: %(steps)s',
                 {'t': timer.elapsed(), 'steps': timer.summary()},
                 instance=instance)

    def _plug(self, instance, network_info, plans, timer):
        try:
            with timer.exit_step('wait_vif_plugged', vif_events.plugged(
                    self.virtapi, instance, network_info)):
                with timer.step('plug_vifs'):
                    self._plugger.plug_host_only(plans, instance)
        except Exception:
            LOG.error('Plugging the ports failed after %(t).2f s (%(steps)s);'
                      ' unplugging them', {'t': timer.elapsed(),
                                           'steps': timer.summary()},
                      instance=instance)
            self._plugger.unplug(plans, instance)
            raise

    def plug_vifs(self, instance, network_info):
        self._plugger.plug_host_only(self._plugger.plans(network_info), instance)

    def unplug_vifs(self, instance, network_info):
        self._plugger.unplug(self._plugger.plans(network_info), instance)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        self._plugger.unplug(self._plugger.plans(network_info), instance)
        super().destroy(context, instance, network_info, block_device_info,
                        destroy_disks, destroy_secrets)
