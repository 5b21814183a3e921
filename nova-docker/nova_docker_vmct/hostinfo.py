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
"""Host resources and the placement inventory derived from them (pure)."""

import os

import os_resource_classes as orc

GIB = 1024 ** 3
MIB = 1024 ** 2


# The engine settings the driver relies on, shipped as nova-docker/etc/docker/daemon.json
DAEMON_JSON = 'nova-docker/etc/docker/daemon.json'


def engine_problems(info, networks):
    """The settings of daemon.json the running engine differs in, as messages.

    :param info: ``docker info`` (the API's /info)
    :param networks: the engine's networks (the API's /networks)

    The API does not show the iptables and ip-forward settings: they are
    not checked here.
    """
    problems = []
    driver = info.get('Driver')
    if driver != 'overlay2':
        problems.append(
            '"storage-driver": the engine runs %r; the driver needs "overlay2" '
            '(a rescue mounts the instance container\'s layers)' % driver)
    if any(n.get('Name') == 'bridge' and n.get('Driver') == 'bridge'
           for n in networks):
        problems.append(
            '"bridge": the engine has its default bridge network (docker0, with '
            'Docker\'s own NAT and filter rules); the driver plugs every port '
            'itself: set "bridge": "none"')
    return problems


def engine_warnings(info):
    """The settings of daemon.json the engine differs in, that init_host allows.

    :param info: ``docker info``

    An engine without ``userns-remap`` runs every container's root as the
    host's root. It is a warning, not one of :func:`engine_problems`:
    remapping moves the engine's data root (<root>/<uid>.<gid>), so the
    containers of the instances a host already runs stay behind in the
    old one, invisible to the remapping engine. Refusing to start there
    would leave those instances unmanaged (no stop, no delete) rather than
    safer; the operator switches the engine once the host is empty.
    """
    if remaps_users(info):
        return []
    return ['"userns-remap": the engine does not remap user namespaces, so '
            'root in an instance is root on the host\'s files if it escapes '
            'its container: set "userns-remap": "default" and restart the '
            'engine once this host runs no instances (their containers stay '
            'in the old data root)']


def remaps_users(info):
    """Is root in the engine's containers someone else on the host?

    ``docker info`` SecurityOptions has ``name=userns`` when the engine
    remaps user namespaces (daemon.json ``userns-remap``) and
    ``name=rootless`` when the engine itself runs unprivileged.
    """
    names = {opt.split(',', 1)[0] for opt in info.get('SecurityOptions') or []}
    return bool(names & {'name=userns', 'name=rootless'})


def backing_filesystem(info):
    """The file system under overlay2's layers, as the engine reports it."""
    for entry in info.get('DriverStatus') or []:
        if len(entry) == 2 and entry[0] == 'Backing Filesystem':
            return entry[1]
    return None


def disk_limit_problem(info, mount=None):
    """Why the engine cannot limit a container's disk, or None if it can.

    :param info: ``docker info``
    :param mount: (fstype, options) of the mount holding the engine's
        DockerRootDir as this process sees it (:func:`mount_of`), or None

    Docker's ``storage_opt`` size works on overlay2 over XFS mounted with
    project quotas only. The engine reports the storage driver and the
    backing file system, not the mount options: those come from
    ``mount``, when it is the same XFS. Another file system there (this
    process in another mount namespace) or none tells nothing: the
    engine's answer at create is the last word.
    """
    driver = info.get('Driver')
    if driver != 'overlay2':
        return 'the storage driver is %r, not overlay2 over XFS' % driver
    fs = backing_filesystem(info)
    if fs != 'xfs':
        return ('overlay2 is on %s, not on XFS mounted with pquota' %
                (fs or 'an unreported file system'))
    if mount and mount[0] == 'xfs' and 'prjquota' not in mount[1]:
        return ('the XFS holding %s is mounted without project quotas '
                '(mount it with -o pquota)' % info.get('DockerRootDir'))
    return None


def is_disk_limit_refusal(message):
    """Is an engine error overlay2's refusal of ``storage_opt``?

    overlay2 (Docker 20.10 to 28) answers "--storage-opt is supported
    only for overlay over xfs with 'pquota' mount option".
    """
    return '--storage-opt is supported only' in message


def mount_of(path, mountinfo):
    """(fstype, options) of the mount holding ``path``, or None.

    ``mountinfo``: the text of /proc/self/mountinfo. The options are the
    per-mount and the super block ones together (XFS shows ``prjquota``
    among the latter).
    """
    if not path:
        return None
    path = path.rstrip('/') or '/'
    best = None
    for line in mountinfo.splitlines():
        fields = line.split()
        if '-' not in fields:
            continue
        sep = fields.index('-')
        point = fields[4].replace('\\040', ' ')
        inside = (point == '/' or path == point or
                  path.startswith(point.rstrip('/') + '/'))
        if inside and (best is None or len(point) >= len(best[0])):
            options = set(fields[5].split(','))
            if len(fields) > sep + 3:
                options |= set(fields[sep + 3].split(','))
            best = (point, fields[sep + 1], options)
    return best and best[1:]


def read_mount_of(path, mountinfo='/proc/self/mountinfo'):
    try:
        with open(mountinfo) as f:
            return mount_of(path, f.read())
    except OSError:
        return None


def meminfo(text):
    """{'MemTotal': kB, ...} from the text of /proc/meminfo."""
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(':')
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[key.strip()] = int(parts[0])
    return values


def read_meminfo(path='/proc/meminfo'):
    with open(path) as f:
        return meminfo(f.read())


def disk_usage_gb(path):
    """(total, used, free) GiB of the filesystem holding ``path``."""
    st = os.statvfs(path)
    total = st.f_blocks * st.f_frsize
    free = st.f_bavail * st.f_frsize
    used = total - st.f_bfree * st.f_frsize
    return total // GIB, used // GIB, free // GIB


def inventory(vcpus, memory_mb, disk_gb, ratios, reserved_cpus,
              reserved_memory_mb, reserved_disk_gb):
    """Placement inventory of a Docker host.

    ``ratios`` is ComputeDriver._get_allocation_ratios()'s result (keyed by
    resource class). Reserved values come from [DEFAULT]reserved_host_*.
    """
    def record(total, rc, reserved):
        total = max(int(total), 0)
        return {
            'total': total,
            'min_unit': 1,
            'max_unit': max(total, 1),
            'step_size': 1,
            'allocation_ratio': ratios[rc],
            'reserved': int(reserved or 0),
        }
    return {
        orc.VCPU: record(vcpus, orc.VCPU, reserved_cpus),
        orc.MEMORY_MB: record(memory_mb, orc.MEMORY_MB, reserved_memory_mb),
        orc.DISK_GB: record(disk_gb, orc.DISK_GB, reserved_disk_gb),
    }


def usage_from_labels(containers_labels, vcpus_label, memory_label):
    """(vcpus, memory_mb) claimed by the flavors of the given containers."""
    vcpus = memory = 0
    for labels in containers_labels:
        try:
            vcpus += int(labels.get(vcpus_label, 0))
            memory += int(labels.get(memory_label, 0))
        except (TypeError, ValueError):
            continue
    return vcpus, memory


def version_to_int(version):
    """'20.10.24+dfsg1' -> 20010024 (Nova's hypervisor_version format)."""
    core = version.split('+', 1)[0].split('-', 1)[0]
    parts = []
    for piece in core.split('.')[:3]:
        digits = ''.join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    while len(parts) < 3:
        parts.append(0)
    return parts[0] * 1000000 + parts[1] * 1000 + parts[2]
