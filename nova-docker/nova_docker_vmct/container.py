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
"""Container naming, creation arguments and state mapping (pure logic)."""

import datetime
import io
import shlex
import tarfile

from nova.compute import power_state

from nova_docker_vmct import extra_specs

NAME_PREFIX = 'nova-'
LABEL_UUID = 'nova.instance_uuid'
LABEL_NAME = 'nova.instance_name'
LABEL_HOST = 'nova.host'
LABEL_IMAGE = 'nova.image_id'
LABEL_VCPUS = 'nova.flavor.vcpus'
LABEL_MEMORY_MB = 'nova.flavor.memory_mb'
# On the rescue container only: the uuid of the instance it rescues.
LABEL_RESCUE = 'nova.rescue_of'
RESCUE_SUFFIX = '-rescue'

MIB = 1024 * 1024
CPU_PERIOD_NS = 10 ** 9

# Docker's State.Status -> Nova power state.
_POWER_STATES = {
    'created': power_state.SHUTDOWN,
    'running': power_state.RUNNING,
    'restarting': power_state.RUNNING,
    'paused': power_state.PAUSED,
    'removing': power_state.SHUTDOWN,
    'exited': power_state.SHUTDOWN,
    'dead': power_state.CRASHED,
}


def container_name(instance_uuid):
    return NAME_PREFIX + instance_uuid


def rescue_name(instance_uuid):
    return NAME_PREFIX + instance_uuid + RESCUE_SUFFIX


def power_state_of(state, suspended=False):
    """Nova power state of a container from its State dict (docker inspect).

    Suspend and pause both freeze the container (``docker pause``): a frozen
    container is SUSPENDED when Nova suspended it (``suspended``), PAUSED
    otherwise.
    """
    if not state:
        return power_state.NOSTATE
    found = _POWER_STATES.get(state.get('Status'), power_state.NOSTATE)
    if found == power_state.PAUSED and suspended:
        return power_state.SUSPENDED
    return found


def netns_path(attrs):
    """Path of a container's network namespace (docker inspect), or None.

    ``NetworkSettings.SandboxKey``: /run/docker/netns/<id> (spelt /var/run
    by Docker) while the container runs, whichever PID namespace the caller
    is in (nova-compute in a container of its own, as Kolla runs it).
    """
    return (attrs.get('NetworkSettings') or {}).get('SandboxKey') or None


def hostname_of(instance):
    """A valid hostname for the instance (<= 63 characters)."""
    name = (getattr(instance, 'hostname', None) or
            'host-%s' % instance.uuid)
    return name[:63].rstrip('-.') or 'host-%s' % instance.uuid


def cpu_limits(vcpus, mode):
    """Docker create arguments that limit a container to ``vcpus`` CPUs."""
    vcpus = max(int(vcpus or 1), 1)
    if mode == 'none':
        return {}
    limits = {'cpu_shares': 1024 * vcpus}
    if mode == 'quota':
        limits['nano_cpus'] = vcpus * CPU_PERIOD_NS
    return limits


def memory_limits(memory_mb):
    """Hard memory limit of the flavor, no swap beyond it."""
    if not memory_mb:
        return {}
    limit = int(memory_mb) * MIB
    return {'mem_limit': limit, 'memswap_limit': limit}


class BadExtraSpec(ValueError):
    """A flavor extra spec of the driver has a value it cannot use."""


def pids_limit_of(flavor, default):
    """The most tasks one instance may run: its flavor's, else ``default``.

    ``default`` is ``[docker]pids_limit``; the flavor's extra spec
    ``docker:pids_limit`` overrides it. 0 or -1: no limit. BadExtraSpec
    names the spec and the fix when its value is no whole number >= -1
    (the API refuses such a value where extra_specs is registered).
    """
    value = (flavor.extra_specs or {}).get(extra_specs.PIDS_LIMIT)
    if value is None:
        return int(default)
    try:
        limit = int(value)
    except (TypeError, ValueError):
        limit = None
    if limit is None or limit < extra_specs.PIDS_LIMIT_MIN:
        raise BadExtraSpec(
            'flavor %(flavor)s has %(spec)s=%(value)r, which is no whole '
            'number >= -1: set it to the most processes and threads one '
            'instance may run (openstack flavor set --property '
            '%(spec)s=1024 %(flavor)s), -1 for no limit, or unset it for '
            'the compute\'s [docker]pids_limit' % {
                'flavor': flavor.name, 'spec': extra_specs.PIDS_LIMIT,
                'value': value})
    return limit


def pids_limits(limit):
    """Docker create arguments that cap the container's tasks.

    The pids cgroup refuses fork and clone beyond ``limit`` (EAGAIN), so a
    fork bomb stays inside its instance. 0 or -1: none (Docker's default,
    no limit).
    """
    if limit is None or int(limit) <= 0:
        return {}
    return {'pids_limit': int(limit)}


def disk_limits(root_gb):
    """Docker create arguments that cap what the container writes.

    overlay2's ``size`` is a project quota on the container's writable
    layer: what the instance writes, not the image it was booted from.
    Only overlay2 over XFS mounted with pquota supports it (the caller
    knows, see hostinfo.disk_limit_problem). root_gb 0: no limit.
    """
    if not root_gb or int(root_gb) <= 0:
        return {}
    return {'storage_opt': {'size': '%dG' % int(root_gb)}}


def labels(instance, host, image_id):
    flavor = instance.flavor
    return {
        LABEL_UUID: instance.uuid,
        LABEL_NAME: instance.name,
        LABEL_HOST: host,
        LABEL_IMAGE: image_id or '',
        LABEL_VCPUS: str(flavor.vcpus),
        LABEL_MEMORY_MB: str(flavor.memory_mb),
    }


IPV6_ON = {'net.ipv6.conf.all.disable_ipv6': '0',
           'net.ipv6.conf.default.disable_ipv6': '0'}


def create_kwargs(instance, content_id, host, image_id, cpu_mode,
                  command=None, dns=None, ipv6=False, pids_limit=0,
                  disk_limit=False):
    """Keyword arguments of ``client.containers.create`` for an instance.

    ``content_id``: the Docker image by content (``sha256:...``, from the
    image cache), never a tag someone could move; ``image_id``: the Glance
    image's id (a label). ``pids_limit``: ``[docker]pids_limit`` (the flavor
    may override it); ``disk_limit``: whether the engine limits the writable
    layer to the flavor's root_gb. BadExtraSpec for a flavor extra spec it
    cannot use.
    """
    kwargs = {
        'image': content_id,
        'name': container_name(instance.uuid),
        'hostname': hostname_of(instance),
        'labels': labels(instance, host, image_id),
        # Docker does no networking: Neutron ports are plugged by the driver.
        'network_mode': 'none',
        'detach': True,
        'restart_policy': {'Name': 'no'},
        'init': False,
    }
    if command:
        kwargs['command'] = command
    if dns:
        kwargs['dns'] = list(dns)
    if ipv6:
        # Docker turns IPv6 off in the netns of containers it does not
        # network itself; the Neutron ports need it.
        kwargs['sysctls'] = dict(IPV6_ON)
    kwargs.update(cpu_limits(instance.flavor.vcpus, cpu_mode))
    kwargs.update(memory_limits(instance.flavor.memory_mb))
    kwargs.update(pids_limits(pids_limit_of(instance.flavor, pids_limit)))
    if disk_limit:
        kwargs.update(disk_limits(instance.flavor.root_gb))
    return kwargs


def authorized_keys_tar(key_data):
    """A tar stream holding root/.ssh/authorized_keys (extract at /)."""
    buf = io.BytesIO()
    data = key_data.strip().encode('utf-8') + b'\n'
    with tarfile.open(fileobj=buf, mode='w') as tar:
        for name in ('root', 'root/.ssh'):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o700
            tar.addfile(info)
        info = tarfile.TarInfo('root/.ssh/authorized_keys')
        info.mode = 0o600
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def parse_docker_time(value):
    """Seconds since the epoch of a Docker RFC 3339 (nanosecond) time."""
    if not value or value.startswith('0001-01-01'):
        return None
    value = value.rstrip('Z')
    if '.' in value:
        head, frac = value.split('.', 1)
        frac = (frac + '000000')[:6]
    else:
        head, frac = value, '0'
    moment = datetime.datetime.strptime(head, '%Y-%m-%dT%H:%M:%S').replace(
        tzinfo=datetime.timezone.utc)
    return moment.timestamp() + int(frac) / 1e6


# mount(2) copies its options from one page, terminating NUL included.
MOUNT_DATA_MAX = 4095


class NotRescuable(ValueError):
    """The container's root file system cannot be mounted elsewhere."""


def overlay_volume_options(graph_driver):
    """Options of a ``local`` volume that mounts a container's root fs.

    ``graph_driver`` is the GraphDriver dict of docker inspect. The result
    mounts the same overlay (the container's image layers, its init layer
    and its writable layer) that Docker mounts when it starts the container,
    so changes made there are the container's own. Only overlay2 exposes
    its layers this way; NotRescuable says why otherwise.
    """
    graph_driver = graph_driver or {}
    name = graph_driver.get('Name')
    data = graph_driver.get('Data') or {}
    if name != 'overlay2' or not all(data.get(k) for k in (
            'LowerDir', 'UpperDir', 'WorkDir')):
        raise NotRescuable(
            'rescue mounts the instance\'s root file system from its '
            'overlay2 layers, but the Docker storage driver is %s' %
            (name or 'unknown'))
    options = 'lowerdir=%s,upperdir=%s,workdir=%s' % (
        data['LowerDir'], data['UpperDir'], data['WorkDir'])
    if len(options) > MOUNT_DATA_MAX:
        raise NotRescuable(
            'the image has too many layers (%d) to mount its root file '
            'system in one overlay (%d > %d bytes of mount options)' % (
                data['LowerDir'].count(':') + 1, len(options),
                MOUNT_DATA_MAX))
    return {'type': 'overlay', 'device': 'overlay', 'o': options}


def rescue_kwargs(kwargs, instance_uuid):
    """Turn an instance's create arguments into its rescue container's.

    Same hostname, limits, DNS and host labels (so host-wide cleanups find
    it), its own name, and a label that tells it apart from instances.
    """
    rescue = dict(kwargs)
    rescue['name'] = rescue_name(instance_uuid)
    rescue['labels'] = dict(kwargs.get('labels') or {})
    rescue['labels'][LABEL_RESCUE] = instance_uuid
    return rescue


def command_from_image(image_meta):
    """The os_command_line image property as an argv list, if any."""
    props = getattr(image_meta, 'properties', None)
    if props is None or not props.obj_attr_is_set('os_command_line'):
        return None
    line = props.os_command_line
    if not line:
        return None
    return shlex.split(line)
