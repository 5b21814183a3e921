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
"""The ``[docker]`` options of the Docker compute driver."""

from oslo_config import cfg

GROUP = 'docker'

docker_group = cfg.OptGroup(
    GROUP, title='Docker compute driver',
    help='Options of the Docker compute driver (compute_driver = '
         'docker.DockerDriver).')

opts = [
    cfg.StrOpt('api_url', default='unix:///var/run/docker.sock',
               help='URL of the Docker engine API.'),
    cfg.IntOpt('api_timeout', default=120, min=1,
               help='Timeout in seconds of one Docker API call.'),
    cfg.StrOpt('host_attach', default='ovs',
               choices=[('ovs', 'add the host end of the veth pair to the Open vSwitch '
                                'bridge of the port with the external ids Neutron needs '
                                '(iface-id, attached-mac, iface-status, vm-uuid)'),
                        ('linuxbridge', 'enslave the host end of the veth pair to the Linux '
                                        'bridge of the port (tests, setups without Neutron)')],
               help='How the host end of an instance interface is attached.'),
    cfg.StrOpt('integration_bridge', default='br-int',
               help='Bridge used when the port binding names none.'),
    cfg.StrOpt('network_binding_host',
               help='Neutron binding:host_id for the ports of this '
                    'compute\'s instances. Set it to the host name of the '
                    'Open vSwitch agent on this machine when this '
                    'nova-compute runs with a [DEFAULT]host of its own next '
                    'to another nova-compute (for example a libvirt one) on '
                    'the same machine: Neutron then binds the ports to the '
                    'agent that wires the integration bridge. Default: the '
                    'instance host (Nova\'s normal behaviour).'),
    cfg.IntOpt('soft_reboot_timeout', default=60, min=0,
               help='Seconds a soft reboot waits for the container to stop '
                    'after SIGTERM before it is killed. The log says which '
                    'way the container stopped.'),
    cfg.StrOpt('cpu_limit', default='quota',
               choices=[('quota', 'hard limit of flavor.vcpus CPUs (CFS quota, like a VM '
                                  'with that many vCPUs) plus CPU shares proportional to '
                                  'flavor.vcpus'),
                        ('shares', 'CPU shares proportional to flavor.vcpus only'),
                        ('none', 'no CPU limit')],
               help='How flavor.vcpus limits a container.'),
    cfg.IntOpt('pids_limit', default=1024, min=-1,
               help='Most tasks (processes and threads together) one '
                    'instance may run: its container\'s pids cgroup makes '
                    'fork and clone fail (EAGAIN) beyond it. Without a '
                    'limit one instance\'s fork bomb takes every PID of '
                    'the host (kernel.pid_max, 32768 by default) and no '
                    'process of any instance, or of the host, can start. '
                    '1024 leaves room for sshd, some sessions and a few '
                    'hundred worker threads, and at the default pid_max '
                    'it takes 32 instances at their limit to exhaust the '
                    'host. A flavor overrides it with the extra spec '
                    'docker:pids_limit. 0 or -1: no limit (Docker\'s '
                    'default).'),
    cfg.StrOpt('disk_limit', default='auto',
               choices=[('auto', 'limit where the engine can; where it '
                                 'cannot, say so once in the log at start '
                                 'and run instances without a disk limit'),
                        ('required', 'init_host refuses to start on an '
                                     'engine that cannot limit'),
                        ('off', 'no disk limit')],
               help='Whether an instance may write at most its flavor\'s '
                    'root_gb (Docker\'s storage_opt size: a project quota '
                    'on the container\'s writable layer; the image layers '
                    'do not count, root_gb 0 is no limit). Only the '
                    'overlay2 storage driver over XFS mounted with pquota '
                    'can: init_host decides from what the engine reports '
                    '(docker info: Driver, Backing Filesystem) and the '
                    'mount options of its data root where this process '
                    'sees them. Without it one instance can fill the '
                    'engine\'s file system for every instance of the '
                    'host.'),
    cfg.BoolOpt('inject_key', default=True,
                help='Write the instance key pair into '
                     '/root/.ssh/authorized_keys of the container.'),
    cfg.StrOpt('image_repository', default='glance',
               help='Repository under which Glance images are cached in the '
                    'Docker engine, as <repository>/<image id>:latest.'),
    cfg.IntOpt('console_max_bytes', default=100 * 1024, min=1,
               help='Most bytes of console output (container logs of the '
                    'current boot) returned.'),
    cfg.StrOpt('rescue_mount_path', default='/mnt/instance',
               help='Where the rescue container sees the root file system '
                    'of the instance it rescues (read-write: changes made '
                    'there are the instance\'s after unrescue).'),
    cfg.BoolOpt('spawn_events', default=True,
                help='Record each step of spawn (docker_image_cache, '
                     'docker_network_info, docker_create, docker_plug_host, docker_start, '
                     'docker_plug_vifs, docker_wait_vif_plugged) as an '
                     'event of the instance\'s action, with its start and '
                     'finish time (openstack server event show). The times '
                     'are noted during the spawn and the events created '
                     'after it in the background, one conductor call each, '
                     'so the instance is not ACTIVE later for them. The log '
                     'line "Spawned container ... in ... s: <step> '
                     '<seconds>, ..." is written either way.'),
]


def register_opts(conf):
    conf.register_group(docker_group)
    conf.register_opts(opts, group=docker_group)


def list_opts():
    return {docker_group: opts}
