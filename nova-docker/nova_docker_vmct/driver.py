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
"""A Nova compute driver that runs instances as Docker containers.

Successor of the retired nova-docker, for current Nova. Configure with::

    [DEFAULT]
    compute_driver = docker.DockerDriver

Each instance is a container ``nova-<uuid>`` without Docker networking; its
Neutron ports are veth pairs whose container ends live in the container's
network namespace and whose host ends are on the integration bridge. Docker
destroys that namespace whenever the container stops, so the interfaces are
plugged again after every start (spawn, reboot, power on, host boot).

Suspend freezes the container (``docker pause``; its memory stays resident),
rescue runs a second container ``nova-<uuid>-rescue`` from the rescue image
with the instance's root file system mounted read-write at
``[docker]rescue_mount_path`` and the instance's ports plugged into it.
"""

import importlib.metadata
import os
import shutil
import tempfile
import time

import docker
import docker.errors
import docker.types
from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import units

from nova.compute import task_states
from nova.compute import vm_states
import nova.conf
from nova import context as nova_context
from nova import exception
from nova.objects import fields as obj_fields
from nova.virt import driver
from nova.virt import hardware

import nova_docker_vmct
from nova_docker_vmct import compat
from nova_docker_vmct import conf as docker_conf
from nova_docker_vmct import container
from nova_docker_vmct import hostinfo
from nova_docker_vmct import images
from nova_docker_vmct import network
from nova_docker_vmct import steps
from nova_docker_vmct import vif_events

LOG = logging.getLogger(__name__)
CONF = nova.conf.CONF
docker_conf.register_opts(CONF)

HYPERVISOR_TYPE = obj_fields.HVType.DOCKER          # 'docker'
VM_MODE = obj_fields.VMMode.EXE                     # containers
SIGKILL_EXIT = 137
# The trait of every Docker compute's provider: with an aggregate of Docker hosts
# that requires it ([scheduler] enable_isolated_aggregate_filtering) and the
# Docker images requiring it (trait:CUSTOM_NOVA_DOCKER=required), Docker images
# go only to Docker hosts and no other image goes there.
DOCKER_TRAIT = 'CUSTOM_NOVA_DOCKER'


class DockerEngineUnavailable(exception.NovaException):
    msg_fmt = ('The Docker engine at %(url)s does not answer: %(reason)s. '
               'Start dockerd (for example tools/docker/ensure-dockerd) or '
               'fix [docker]api_url.')


class DockerEngineMisconfigured(exception.NovaException):
    msg_fmt = ('The Docker engine at %(url)s differs from the settings the '
               'Docker driver needs: %(problems)s. Start it with %(path)s '
               '(e.g. as /etc/docker/daemon.json) and restart it.')


class DiskLimitUnavailable(exception.NovaException):
    msg_fmt = ('[docker]disk_limit = required, but the Docker engine at '
               '%(url)s cannot limit what an instance writes: %(reason)s. '
               'Put its data root (%(root)s) on XFS mounted with pquota '
               'and restart it, or set [docker]disk_limit = auto.')


class UnsupportedNovaVersion(exception.NovaException):
    msg_fmt = ('The Docker compute driver (nova-docker-vmct) supports Nova '
               '%(supported)s only, but this nova-compute runs Nova '
               '%(version)s. Run the Docker compute with a Nova of that range '
               '(pip install "nova>=%(oldest)s,<%(next)s" in its environment) '
               'or remove compute_driver = docker.DockerDriver; '
               'nova-docker/tools/install-driver checks the installed Nova '
               'before it installs the driver.')


def nova_version():
    """Version of the Nova this process runs (from its metadata)."""
    try:
        return importlib.metadata.version('nova')
    except importlib.metadata.PackageNotFoundError:
        from nova import version
        return version.version_string()


def check_nova_version(version=None):
    """UnsupportedNovaVersion unless ``version`` (default: ours) is supported.

    Supported: the series of ``nova_docker_vmct.NOVA_RELEASES``; what differs
    between them is in :mod:`nova_docker_vmct.compat`.
    """
    version = version or nova_version()
    if not nova_docker_vmct.is_supported_nova(version):
        raise UnsupportedNovaVersion(
            version=version, supported=nova_docker_vmct.supported_nova(),
            oldest=nova_docker_vmct.OLDEST_NOVA_MAJOR,
            next=nova_docker_vmct.NEWEST_NOVA_MAJOR + 1)
    return version


class DockerDriver(driver.ComputeDriver):
    """Docker containers as Nova instances."""

    capabilities = dict(
        driver.ComputeDriver.capabilities,
        # Glance images of this driver are raw docker save tarballs.
        supports_image_type_raw=True,
        # Nova calls manage_image_cache every [image_cache]manager_interval
        # seconds: cached images no instance uses are removed.
        has_imagecache=True,
    )

    def __init__(self, virtapi, client=None):
        super(DockerDriver, self).__init__(virtapi)
        self._client = client
        self._image_cache = None
        self.image_fetch = images.glance_chunks
        self.image_exists = images.glance_image_exists
        self.clock = time.monotonic     # of the spawn steps
        self._plugger = network.Plugger(CONF.docker)
        self._background = compat.spawn   # after the spawn
        self._disk_limit = None     # decided by init_host (or first use)

    # -- plumbing ---------------------------------------------------------

    @property
    def client(self):
        if self._client is None:
            self._client = docker.DockerClient(
                base_url=CONF.docker.api_url, version='auto',
                timeout=CONF.docker.api_timeout)
        return self._client

    @property
    def image_cache(self):
        if self._image_cache is None:
            self._image_cache = images.ImageCache(
                self.client, CONF.docker.image_repository,
                images.record_path(CONF.instances_path),
                fetch=lambda ctx, image_id: self.image_fetch(ctx, image_id),
                exists=lambda ctx, image_id: self.image_exists(ctx,
                                                               image_id))
        return self._image_cache

    def _inspect(self, instance, name=None):
        """docker inspect of the instance's container or InstanceNotFound.

        ``name``: another container of the instance (its rescue container).
        """
        try:
            return self.client.api.inspect_container(
                name or container.container_name(instance.uuid))
        except docker.errors.NotFound:
            raise exception.InstanceNotFound(instance_id=instance.uuid)

    def _inspect_rescue(self, instance):
        """docker inspect of the instance's rescue container, or None."""
        try:
            return self.client.api.inspect_container(
                container.rescue_name(instance.uuid))
        except docker.errors.NotFound:
            return None

    def _current(self, instance):
        """docker inspect of the container that is the instance now.

        The rescue container while the instance is rescued (its own
        container is stopped then), else the instance's container.
        """
        attrs = self._inspect(instance)
        if (attrs.get('State') or {}).get('Running'):
            return attrs
        return self._inspect_rescue(instance) or attrs

    def _nova_containers(self):
        """Low-level list entries of this host's instance containers."""
        found = self.client.api.containers(
            all=True,
            filters={'label': ['%s=%s' % (container.LABEL_HOST, CONF.host)]})
        # rescue containers carry the host label too, but are no instances
        return [c for c in found
                if container.LABEL_RESCUE not in (c.get('Labels') or {})]

    def _plans(self, network_info):
        return self._plugger.plans(network_info)

    # -- host ---------------------------------------------------------------

    def init_host(self, host):
        nova_release = check_nova_version()
        try:
            self.client.ping()
            version = self.client.version()
        except Exception as e:
            raise DockerEngineUnavailable(url=CONF.docker.api_url, reason=e)
        info = self.client.info()
        self._check_engine(info)
        self._plugger.check_host('Docker driver')
        LOG.info('Docker engine %(version)s (API %(api)s) at %(url)s, '
                 'Nova %(nova)s; user namespaces remapped: %(userns)s, '
                 'disk limit: %(disk)s, PID limit: %(pids)s',
                 {'version': version.get('Version'),
                  'api': version.get('ApiVersion'),
                  'url': CONF.docker.api_url, 'nova': nova_release,
                  'userns': 'yes' if hostinfo.remaps_users(info) else 'NO',
                  'disk': 'root_gb' if self._disk_limit else 'none',
                  'pids': (CONF.docker.pids_limit
                           if CONF.docker.pids_limit > 0 else 'none')})

    def _check_engine(self, info):
        """Refuse an engine unlike daemon.json, warn where it may differ.

        Decides the disk limit on the way (``[docker]disk_limit``).
        """
        problems = hostinfo.engine_problems(info, self.client.api.networks())
        if problems:
            raise DockerEngineMisconfigured(url=CONF.docker.api_url,
                                            problems='; '.join(problems),
                                            path=hostinfo.DAEMON_JSON)
        self._disk_limit = self._decide_disk_limit(info)
        for warning in hostinfo.engine_warnings(info):
            LOG.warning('The Docker engine at %(url)s differs from %(path)s: '
                        '%(warning)s', {'url': CONF.docker.api_url,
                                        'path': hostinfo.DAEMON_JSON,
                                        'warning': warning})

    def _decide_disk_limit(self, info):
        """Do instances get their root_gb as a disk limit?

        ``[docker]disk_limit``: off never; auto where the engine can
        (hostinfo.disk_limit_problem), logging once why not otherwise;
        required refuses an engine that cannot (DiskLimitUnavailable).
        """
        mode = CONF.docker.disk_limit
        if mode == 'off':
            return False
        root = info.get('DockerRootDir')
        problem = hostinfo.disk_limit_problem(info,
                                              hostinfo.read_mount_of(root))
        if problem is None:
            return True
        if mode == 'required':
            raise DiskLimitUnavailable(url=CONF.docker.api_url,
                                       reason=problem, root=root)
        LOG.warning('Instances get no disk limit ([docker]disk_limit = '
                    'auto): %s. One instance can fill %s for all of them.',
                    problem, root)
        return False

    @property
    def disk_limit(self):
        """Whether spawns ask for a disk limit (decided once)."""
        if self._disk_limit is None:
            self._disk_limit = self._decide_disk_limit(self.client.info())
        return self._disk_limit

    def cleanup_host(self, host):
        self._plugger.close()
        if self._client is not None:
            self._client.close()
            self._client = None
            self._image_cache = None

    def get_available_nodes(self, refresh=False):
        return [CONF.host]

    def get_host_ip_addr(self):
        return CONF.my_ip

    def network_binding_host_id(self, context, instance):
        return CONF.docker.network_binding_host or instance.get('host')

    def manages_network_binding_host_id(self):
        # Keeps the compute manager from "healing" the binding back to
        # [DEFAULT]host when [docker]network_binding_host is set.
        return bool(CONF.docker.network_binding_host)

    def get_host_uptime(self):
        with open('/proc/uptime') as f:
            seconds = float(f.read().split()[0])
        return 'up %d s' % seconds

    def _host_facts(self):
        info = self.client.info()
        root = info.get('DockerRootDir') or '/var/lib/docker'
        disk_total, disk_used, disk_free = hostinfo.disk_usage_gb(
            root if os.path.exists(root) else '/')
        mem = hostinfo.read_meminfo()
        return {
            'vcpus': int(info.get('NCPU') or os.cpu_count() or 1),
            'memory_mb': int(info.get('MemTotal') or 0) // units.Mi,
            'memory_mb_used': (mem.get('MemTotal', 0) -
                               mem.get('MemAvailable', 0)) // units.Ki,
            'disk_total': disk_total, 'disk_used': disk_used,
            'disk_free': disk_free,
            'version': info.get('ServerVersion') or '0',
            'kernel': info.get('KernelVersion'),
            'os': info.get('OperatingSystem'),
        }

    def get_available_resource(self, nodename):
        facts = self._host_facts()
        vcpus_used, _mem = hostinfo.usage_from_labels(
            [c.get('Labels') or {} for c in self._nova_containers()],
            container.LABEL_VCPUS, container.LABEL_MEMORY_MB)
        arch = obj_fields.Architecture.from_host()
        return {
            'vcpus': facts['vcpus'],
            'memory_mb': facts['memory_mb'],
            'local_gb': facts['disk_total'],
            'vcpus_used': vcpus_used,
            'memory_mb_used': facts['memory_mb_used'],
            'local_gb_used': facts['disk_used'],
            'hypervisor_type': HYPERVISOR_TYPE,
            'hypervisor_version': hostinfo.version_to_int(facts['version']),
            'hypervisor_hostname': nodename or CONF.host,
            'cpu_info': '{"arch": "%s", "features": []}' % arch,
            'disk_available_least': facts['disk_free'],
            'supported_instances': [(arch, HYPERVISOR_TYPE, VM_MODE)],
            'numa_topology': None,
        }

    def update_provider_tree(self, provider_tree, nodename, allocations=None):
        facts = self._host_facts()
        current = provider_tree.data(nodename).inventory
        ratios = self._get_allocation_ratios(current)
        inventory = hostinfo.inventory(
            facts['vcpus'], facts['memory_mb'], facts['disk_total'], ratios,
            reserved_cpus=CONF.reserved_host_cpus,
            reserved_memory_mb=CONF.reserved_host_memory_mb,
            reserved_disk_gb=self._get_reserved_host_disk_gb_from_config())
        provider_tree.update_inventory(nodename, inventory)
        provider_tree.add_traits(nodename, DOCKER_TRAIT)

    def manage_image_cache(self, context, all_instances):
        """Remove cached Glance images that no instance or container uses.

        Nova's periodic image cache pass (every ``[image_cache]
        manager_interval`` seconds, with the instances of the hosts that
        share ``instances_path``). As Nova's libvirt cache manager: nothing
        when ``[image_cache]remove_unused_base_images`` is false; an image
        in use is kept and counts as used now; an unused one goes once it
        was last used (or loaded) ``[image_cache]
        remove_unused_original_minimum_age_seconds`` ago. Unlike libvirt,
        an unused image whose Glance image is gone goes at once (a deleted
        snapshot: nothing can boot it again). See ImageCache.prune.
        """
        if not CONF.image_cache.remove_unused_base_images:
            return
        in_use = {inst.image_ref for inst in all_instances
                  if inst.image_ref}
        removed = self.image_cache.prune(
            self._glance_context(context), in_use,
            CONF.image_cache.remove_unused_original_minimum_age_seconds)
        LOG.debug('Image cache pass: %d instances, %d cached images '
                  'removed', len(all_instances), len(removed))

    @staticmethod
    def _glance_context(context):
        """A context Glance accepts, for the image cache pass.

        Nova runs periodic tasks with an admin context that carries no
        token: Glance refuses it (401) where keystone authenticates. Nova's
        service user (``[service_user]``) is asked then; without one the
        context is used as it is and a refusal keeps the images (only the
        age rule applies).
        """
        if context.auth_token or context.user_auth_plugin:
            return context
        try:
            return nova_context.get_nova_service_user_context()
        except Exception as e:
            LOG.debug('No service user context for Glance (%s): asking '
                      'with the periodic task\'s context', e)
            return context

    # -- instances: queries -------------------------------------------------

    def list_instances(self):
        return [(c.get('Labels') or {}).get(container.LABEL_NAME) or
                c['Names'][0].lstrip('/')
                for c in self._nova_containers()]

    def list_instance_uuids(self):
        return [(c.get('Labels') or {}).get(container.LABEL_UUID)
                for c in self._nova_containers()
                if (c.get('Labels') or {}).get(container.LABEL_UUID)]

    def instance_exists(self, instance):
        try:
            self._inspect(instance)
            return True
        except exception.InstanceNotFound:
            return False

    @staticmethod
    def _suspended(instance):
        """Did Nova suspend (or is it suspending) the instance?

        A frozen container is the same to Docker whether Nova paused or
        suspended it (both are ``docker pause``); the instance's own state
        tells them apart. Docker labels cannot change after create, and a
        marker kept elsewhere could outlive the freeze.
        """
        return (instance.get('vm_state', None) == vm_states.SUSPENDED or
                instance.get('task_state', None) == task_states.SUSPENDING)

    def get_info(self, instance, use_cache=True):
        attrs = self._current(instance)
        return hardware.InstanceInfo(
            state=container.power_state_of(
                attrs.get('State'), suspended=self._suspended(instance)),
            internal_id=attrs.get('Id'))

    def get_console_output(self, context, instance):
        attrs = self._current(instance)
        state = attrs.get('State') or {}
        started = container.parse_docker_time(state.get('StartedAt'))
        finished = container.parse_docker_time(state.get('FinishedAt'))
        kwargs = {'stdout': True, 'stderr': True}
        # Only the current boot: Docker keeps logs across restarts. A running
        # container's boot began when its previous run finished (none: its
        # first run, the whole log), not at StartedAt, which Docker records
        # after the process started: a quick first line (sshd's) can carry an
        # earlier log timestamp and would be lost.
        since = started
        if started and (finished is None or finished <= started):
            since = finished
        if since:
            kwargs['since'] = since
        out = self.client.api.logs(attrs['Id'], **kwargs)
        return out[-CONF.docker.console_max_bytes:]

    # -- instances: lifecycle -------------------------------------------

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        timer = self._spawn_timer(context, instance)
        try:
            self._spawn(context, instance, image_meta, network_info,
                        power_on, timer)
        finally:
            timer.send()    # the steps' events, after the spawn

    def _spawn(self, context, instance, image_meta, network_info, power_on,
               timer):
        not_docker = images.not_docker_reason(image_meta)
        if not_docker:
            # Another host may run it (a cloud without the isolated Docker
            # aggregate): Nova reschedules this error; ImageUnacceptable
            # would end the build in ERROR.
            raise exception.ComputeResourcesUnavailable(
                reason='%s: not on this Docker host' % not_docker)
        with timer.step('image_cache'):
            content_id = self.image_cache.ensure(context, image_meta)
        with timer.step('network_info'):
            # the first use of network_info waits for Nova's asynchronous
            # allocation of the ports (Neutron)
            plans = self._plans(network_info)
            self._plugger.refuse_unsupported(network_info)
        kwargs = self._create_kwargs(instance, content_id, image_meta, plans)
        name = kwargs['name']
        try:
            with timer.step('create'):
                self._create(instance, kwargs)
            if power_on:
                self._boot(instance, network_info, plans, timer)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.error('Spawning container %(name)s failed after '
                          '%(t).2f s (%(steps)s); removing it',
                          {'name': name, 't': timer.elapsed(),
                           'steps': timer.summary()}, instance=instance)
                try:
                    self._remove(instance, plans)
                except Exception:
                    LOG.exception('Removing container %s failed', name,
                                  instance=instance)
        LOG.info('Spawned container %(name)s in %(t).2f s: %(steps)s',
                 {'name': name, 't': timer.elapsed(),
                  'steps': timer.summary()}, instance=instance)

    def _spawn_timer(self, context, instance):
        """Timer of the spawn steps.

        With ``[docker]spawn_events`` each step is also an event of the
        instance's current action (the boot's), sent once the spawn is over.
        """
        return steps.spawn_timer(context, instance.uuid, CONF.host, self.clock,
                                 'docker_', events=CONF.docker.spawn_events)

    def _boot(self, instance, network_info, plans, timer):
        """Plug the host ends, start, move the peers in, wait for Neutron.

        The host ends join the bridge before the start, so Neutron's agent
        wires the ports while the container starts; the peers move into its
        netns once it exists. Neutron may report the ports up during all of
        that: the wait step is what is left to wait after them. The
        neighbours are told (gratuitous ARP) in the background.
        """
        name = container.container_name(instance.uuid)
        with timer.exit_step('wait_vif_plugged',
                             vif_events.plugged(
                                 self.virtapi, instance, network_info)):
            with timer.step('plug_host'):
                self._plugger.plug_host_only(plans, instance)
            with timer.step('start'):
                netns = self._start_container(instance, name)
            with timer.step('plug_vifs'):
                self._plug_started(instance, name, network_info, netns,
                                   move_in=plans)
        self._announce_later(plans, netns)

    def _announce_later(self, plans, netns):
        try:
            self._background(self._plugger.announce, plans, netns)
        except Exception as e:      # no thread to run it (shutting down)
            LOG.warning('Gratuitous ARP not sent: %s', e)

    def _create_kwargs(self, instance, content_id, image_meta, plans):
        try:
            return container.create_kwargs(
                instance, content_id, CONF.host, image_meta.id,
                CONF.docker.cpu_limit,
                command=container.command_from_image(image_meta),
                dns=[s for p in plans for s in p.nameservers][:3],
                ipv6=any(':' in a for p in plans for a in p.addresses),
                pids_limit=CONF.docker.pids_limit,
                disk_limit=self.disk_limit)
        except container.BadExtraSpec as e:
            # Nova aborts the build (no reschedule: every host refuses it)
            raise exception.InvalidInput(reason=str(e))

    def _create(self, instance, kwargs):
        """Create a container; the key pair goes in before its first start.

        With ``[docker]disk_limit = auto``, an engine that refuses the disk
        limit after all (its mount was not visible to init_host) gets the
        container without it, and no spawn asks again.
        """
        try:
            self.client.containers.create(**kwargs)
        except docker.errors.APIError as e:
            if ('storage_opt' not in kwargs or
                    CONF.docker.disk_limit == 'required' or
                    not hostinfo.is_disk_limit_refusal(str(e))):
                raise
            self._disk_limit = False
            LOG.warning('Instances get no disk limit ([docker]disk_limit '
                        '= auto): the engine refused one: %s', e,
                        instance=instance)
            kwargs = {k: v for k, v in kwargs.items() if k != 'storage_opt'}
            self.client.containers.create(**kwargs)
        if CONF.docker.inject_key and instance.key_data:
            self.client.api.put_archive(
                kwargs['name'], '/', container.authorized_keys_tar(
                    instance.key_data))

    def _start(self, instance, network_info, name=None):
        """Start the container, plug its interfaces; returns its netns.

        ``name``: the rescue container; default the instance's own.
        """
        name = name or container.container_name(instance.uuid)
        netns = self._start_container(instance, name)
        self._plug_started(instance, name, network_info, netns)
        return netns

    def _start_container(self, instance, name):
        """docker start; the path of the running container's netns.

        Docker's ``NetworkSettings.SandboxKey`` (/run/docker/netns/<id>):
        the namespace is named by path, which the privsep daemons accept
        whatever PID namespace nova-compute runs in.

        The instance's own container never starts while a rescue container
        exists: both would mount the same writable layer.
        """
        if (name == container.container_name(instance.uuid) and
                self._inspect_rescue(instance) is not None):
            raise exception.InstancePowerOnFailure(
                reason='the instance is rescued (container %s): unrescue '
                       'it first' % container.rescue_name(instance.uuid))
        self.client.api.start(name)
        attrs = self._inspect(instance, name)
        state = attrs.get('State') or {}
        netns = container.netns_path(attrs)
        if not state.get('Running') or not netns:
            raise self._exited(name, state, 'at once')
        return netns

    def _plug_started(self, instance, name, network_info, netns,
                      move_in=None):
        """Plug the interfaces into the netns of the started container.

        Docker creates the netns on start and destroys it on stop.
        ``move_in``: the plans whose host ends are plugged already (spawn):
        only their peers move in.
        """
        try:
            if move_in is not None:
                self._plugger.move_in(move_in, netns)
            else:
                self._plugger.plug(self._plans(network_info), netns, instance)
        except Exception:
            with excutils.save_and_reraise_exception() as ctxt:
                attrs = self._inspect(instance, name)
                state = attrs.get('State') or {}
                if not state.get('Running') or \
                        container.netns_path(attrs) != netns:
                    # Its netns vanished under the plugging: say why.
                    ctxt.reraise = False
            raise self._exited(name, state, 'during network setup')
        # A command that fails at once may still run when docker start
        # returns and exit while its ports go in: a started instance runs.
        state = self._inspect(instance, name).get('State') or {}
        if not state.get('Running'):
            raise self._exited(name, state, 'during network setup')

    def _exited(self, name, state, when):
        tail = self.client.api.logs(name, tail=20)
        return exception.InstancePowerOnFailure(
            reason='container %s exited %s (code %s): %s' % (
                name, when, state.get('ExitCode'),
                tail.decode('utf-8', 'replace').strip()))

    def _stop(self, instance, timeout):
        """Stop the container; timeout 0 kills it. Returns how it stopped."""
        name = container.container_name(instance.uuid)
        state = self._inspect(instance).get('State') or {}
        if state.get('Paused'):
            self.client.api.unpause(name)
        if not state.get('Running'):
            return 'not-running'
        started = time.monotonic()
        if timeout and timeout > 0:
            self.client.api.stop(name, timeout=int(timeout))
            after = self._inspect(instance).get('State') or {}
            how = ('killed after %ds' % timeout
                   if after.get('ExitCode') == SIGKILL_EXIT else 'graceful')
        else:
            self.client.api.kill(name)
            self.client.api.wait(name, condition='not-running',
                                 timeout=CONF.docker.api_timeout)
            how = 'killed'
        LOG.info('Container %(name)s stopped (%(how)s) in %(t).2f s',
                 {'name': name, 'how': how, 't': time.monotonic() - started},
                 instance=instance)
        return how

    def reboot(self, context, instance, network_info, reboot_type,
               block_device_info=None, bad_volumes_callback=None,
               accel_info=None, share_info=None):
        self._inspect(instance)
        # Nova reboots no RESCUED instance: a rescue container left by a
        # failed rescue or unrescue (instance in ERROR) goes, as a hard
        # reboot of a libvirt instance boots its own disk again.
        self._remove_rescue(instance)
        if reboot_type == 'SOFT':
            how = self._stop(instance, CONF.docker.soft_reboot_timeout)
        else:
            how = self._stop(instance, 0)
        try:
            self._start(instance, network_info)
        except Exception as e:
            raise exception.InstanceRebootFailure(reason=str(e))
        LOG.info('%(type)s reboot done (stop: %(how)s)',
                 {'type': reboot_type, 'how': how}, instance=instance)

    def power_off(self, instance, timeout=0, retry_interval=0):
        self._stop(instance, timeout)
        self._plugger.unplug(self._plans(instance.get_network_info()),
                             instance)

    def power_on(self, context, instance, network_info,
                 block_device_info=None, accel_info=None, share_info=None):
        rescue = self._inspect_rescue(instance)
        if rescue is not None:
            if instance.get('vm_state', None) == vm_states.RESCUED:
                # host boot of a rescued instance: the rescue goes on
                self._ensure_running(instance, network_info, rescue)
                return
            self._remove_rescue(instance)
        self._ensure_running(instance, network_info, self._inspect(instance))

    def _ensure_running(self, instance, network_info, attrs):
        """Unfreeze, start or replug the container of ``attrs``."""
        name = attrs['Name'].lstrip('/')
        state = attrs.get('State') or {}
        if state.get('Paused'):
            self.client.api.unpause(name)
        if not state.get('Running'):
            self._start(instance, network_info, name=name)
            return
        plans = self._plans(network_info)
        if plans and not self._plugger.is_plugged(plans):
            self._plugger.plug(plans, container.netns_path(attrs), instance)

    def resume_state_on_host_boot(self, context, instance, network_info,
                                  share_info, block_device_info=None):
        self.power_on(context, instance, network_info, block_device_info)

    def pause(self, instance):
        self.client.api.pause(container.container_name(instance.uuid))

    def unpause(self, instance):
        self.client.api.unpause(container.container_name(instance.uuid))

    def suspend(self, context, instance):
        """Freeze every process of the container (``docker pause``).

        The cgroup freezer stops the processes where they are; they keep
        their memory, open files and sockets, and continue on resume.
        Unlike libvirt's suspend (memory saved to disk), the memory stays
        resident: Docker's checkpoint (CRIU) would free it, but it is
        experimental and needs criu on the host. get_info reports the
        frozen container as SUSPENDED (suspend to RAM) while Nova suspends
        or has suspended it, PAUSED otherwise.
        """
        state = self._inspect(instance).get('State') or {}
        if state.get('Paused'):
            return
        if not state.get('Running'):
            # Nothing to freeze: the instance stays as it is (vm_state
            # restored, fault recorded) instead of going to ERROR.
            raise exception.InstanceFaultRollback(
                inner_exception=exception.InstanceSuspendFailure(
                    reason='container %s is not running (%s)' % (
                        container.container_name(instance.uuid),
                        state.get('Status'))))
        self.client.api.pause(container.container_name(instance.uuid))

    def resume(self, context, instance, network_info, block_device_info=None,
               share_info=None):
        """Thaw the container; start it if it stopped in the meantime.

        A container stops while frozen only when the engine or the host
        restarts; its processes are gone then, so resume boots it again.
        """
        attrs = self._inspect(instance)
        if not (attrs.get('State') or {}).get('Running'):
            LOG.warning('Container stopped while suspended (engine or host '
                        'restart): starting it again', instance=instance)
        self._ensure_running(instance, network_info, attrs)

    def plug_vifs(self, instance, network_info):
        plans = self._plans(network_info)
        if not plans:
            return
        try:
            attrs = self._current(instance)
        except exception.InstanceNotFound:
            # nova-compute's init_host plugs every instance of the host; one
            # whose container is gone (removed behind Nova's back, e.g. the
            # engine's data wiped) must not stop the service: the power
            # state sync reports it, delete cleans up.
            LOG.warning('No container for this instance: nothing to plug',
                        instance=instance)
            return
        if (attrs.get('State') or {}).get('Running') and \
                not self._plugger.is_plugged(plans):
            self._plugger.plug(plans, container.netns_path(attrs), instance)

    def unplug_vifs(self, instance, network_info):
        self._plugger.unplug(self._plans(network_info), instance)

    def detach_interface(self, context, instance, vif):
        """Unplug one port: its bridge port and veth pair go.

        The container end of the pair goes with its host end; a container
        that is not running has nothing plugged. Attaching is not supported
        (``supports_attach_interface`` is false: Nova's API answers 400).
        """
        self._plugger.unplug(self._plans([vif]), instance)

    def _remove(self, instance, plans):
        name = container.container_name(instance.uuid)
        try:
            self.client.api.remove_container(name, v=True, force=True)
        except docker.errors.NotFound:
            LOG.warning('Container %s is already gone', name,
                        instance=instance)
        self._plugger.unplug(plans, instance)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        self._remove_rescue(instance)
        self._remove(instance, self._plans(network_info))

    # -- rescue ------------------------------------------------------------

    def rescue(self, context, instance, network_info, image_meta,
               rescue_password, block_device_info, share_info):
        """Boot a rescue container with the instance's root file system.

        Nova powered the instance off before. The rescue container runs the
        rescue image with the instance's limits, hostname, key pair and
        Neutron ports; the instance's root file system (the overlay of its
        image layers and its writable layer, as Docker mounts it on start)
        is a ``local`` volume at ``[docker]rescue_mount_path``: Docker
        mounts it when the rescue container starts and unmounts it when it
        stops. The rescue password is not set (there is no agent; like
        libvirt with ``inject_password = False``).

        Nova sets a failed rescue to ERROR whatever the driver raises; the
        instance is started again then (when it was ACTIVE), and a hard
        reboot makes it ACTIVE.
        """
        attrs = self._inspect(instance)
        if (attrs.get('State') or {}).get('Running'):
            self._stop(instance, 0)
            attrs = self._inspect(instance)
        try:
            options = container.overlay_volume_options(
                attrs.get('GraphDriver'))
        except container.NotRescuable as e:
            raise exception.InstanceNotRescuable(instance_id=instance.uuid,
                                                 reason=str(e))
        self._remove_rescue(instance)   # a leftover of a failed attempt
        name = container.rescue_name(instance.uuid)
        try:
            content_id = self.image_cache.ensure(context, image_meta)
            kwargs = container.rescue_kwargs(self._create_kwargs(
                instance, content_id, image_meta, self._plans(network_info)),
                instance.uuid)
            kwargs['mounts'] = [docker.types.Mount(
                CONF.docker.rescue_mount_path, None, type='volume',
                # never copy the rescue image's files into the instance's
                no_copy=True,
                driver_config=docker.types.DriverConfig('local', options))]
            self._create(instance, kwargs)
            self._start(instance, network_info, name=name)
        except Exception:
            with excutils.save_and_reraise_exception():
                LOG.error('Rescue failed; removing %s', name,
                          instance=instance)
                self._restore_after_failed_rescue(instance, network_info)
        LOG.info('Rescued in container %(name)s (instance root file '
                 'system at %(path)s)',
                 {'name': name, 'path': CONF.docker.rescue_mount_path},
                 instance=instance)

    def _restore_after_failed_rescue(self, instance, network_info):
        try:
            self._remove_rescue(instance)
            if instance.get('vm_state', None) == vm_states.ACTIVE:
                self._start(instance, network_info)
        except Exception:
            LOG.exception('Could not restart the instance after the failed '
                          'rescue', instance=instance)

    def unrescue(self, context, instance):
        """Remove the rescue container and start the instance's own."""
        self._inspect(instance)
        self._remove_rescue(instance)
        self._start(instance, instance.get_network_info())

    def _remove_rescue(self, instance):
        """Remove the rescue container and its volume; False if none.

        The volume is removed after the container (Docker unmounts it when
        the container stops) and only when it is no longer mounted here:
        removing a volume deletes what is in it, which would be the
        instance's files while they are still mounted.
        """
        attrs = self._inspect_rescue(instance)
        if attrs is None:
            return False
        name = container.rescue_name(instance.uuid)
        try:
            self.client.api.remove_container(name, force=True)
        except docker.errors.NotFound:
            pass
        for m in attrs.get('Mounts') or []:
            if m.get('Type') != 'volume' or not m.get('Name'):
                continue
            if m.get('Source') and os.path.ismount(m['Source']):
                LOG.error('Keeping volume %(vol)s of %(name)s: still '
                          'mounted at %(path)s (docker volume rm it once '
                          'unmounted)', {'vol': m['Name'], 'name': name,
                                         'path': m['Source']},
                          instance=instance)
                continue
            try:
                self.client.api.remove_volume(m['Name'])
            except docker.errors.NotFound:
                pass
        return True

    def cleanup(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, migrate_data=None, destroy_vifs=True,
                destroy_secrets=True):
        if destroy_vifs:
            self._plugger.unplug(self._plans(network_info), instance)

    # -- refused early ------------------------------------------------------

    def check_can_live_migrate_destination(
            self, context, instance, src_compute_info, dst_compute_info,
            block_migration=False, disk_over_commit=False):
        # MigrationPreCheckError (not NotImplementedError, which the
        # conductor turns into ERROR): the scheduler tries another host or
        # gives up, the instance stays as it is.
        raise exception.MigrationPreCheckError(
            reason='the Docker compute driver cannot live-migrate '
                   'containers')

    def check_can_live_migrate_source(self, context, instance,
                                      dest_check_data,
                                      block_device_info=None):
        raise exception.MigrationPreCheckError(
            reason='the Docker compute driver cannot live-migrate '
                   'containers')

    def migrate_disk_and_power_off(self, context, instance, dest, flavor,
                                   network_info, block_device_info=None,
                                   timeout=0, retry_interval=0):
        # Before anything changed: Nova puts the instance back to its
        # vm_state (ACTIVE or STOPPED) and records this reason as its fault.
        raise exception.InstanceFaultRollback(
            inner_exception=exception.MigrationError(
                reason='the Docker compute driver cannot resize or migrate '
                       'instances; the instance was not changed'))

    def snapshot(self, context, instance, image_id, update_task_state):
        """docker commit, docker save, upload to Glance."""
        from nova.image import glance
        name = container.container_name(instance.uuid)
        self._inspect(instance)
        update_task_state(task_state=task_states.IMAGE_PENDING_UPLOAD)
        # Untagged: saved by id, the tarball names no repository, so loading
        # it later (as a Glance image) leaves only the cache tag behind.
        ref = self.client.api.commit(name, pause=True)['Id']
        update_task_state(task_state=task_states.IMAGE_UPLOADING,
                          expected_state=task_states.IMAGE_PENDING_UPLOAD)
        workdir = tempfile.mkdtemp(prefix='docker-snapshot-',
                                   dir=CONF.instances_path
                                   if os.path.isdir(CONF.instances_path)
                                   else None)
        try:
            path = os.path.join(workdir, 'image.tar')
            with open(path, 'wb') as f:
                for chunk in self.client.api.get_image(ref):
                    f.write(chunk)
            metadata = {'disk_format': 'raw', 'container_format': 'docker',
                        'properties': {'img_hv_type': HYPERVISOR_TYPE}}
            with open(path, 'rb') as f:
                glance.API().update(context, image_id, metadata, f)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            try:
                self.client.api.remove_image(ref)
            except docker.errors.APIError as e:
                LOG.debug('Could not remove snapshot image %s: %s', ref, e)
        LOG.info('Snapshot %s uploaded', image_id, instance=instance)
