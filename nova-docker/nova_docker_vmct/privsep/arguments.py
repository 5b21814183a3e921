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
"""Checks of what a caller hands the privsep daemons.

They run in the daemon, before any root work: whoever reaches a daemon's
socket (any process of the compute's user) gets only what these allow. Each
raises ValueError naming the argument, the value and what is accepted.
"""

import contextlib
import ipaddress
import os
import re
import stat

from nova_docker_vmct import vif

# Docker keeps its containers' network namespaces (NetworkSettings.SandboxKey)
# in <exec-root>/netns, /run/docker/netns by default (spelt /var/run), named
# by the first 12 hex digits of the sandbox id. The host's own namespace is
# there too, as "default", and is refused by the pattern.
NETNS_DIR_NAME = 'netns'
NETNS_NAME = re.compile(r'[0-9a-f]{12}')
IFNAME = re.compile(r'[A-Za-z0-9_.-]{1,15}')
MAC = re.compile(r'[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}')
MTU_RANGE = (68, 65535)


def _refuse(argument, value, accepted):
    raise ValueError('%s %r refused: %s' % (argument, value, accepted))


def own_device(argument, name):
    """A device of the driver's own naming in the host netns."""
    if not isinstance(name, str) or not vif.OWN_DEVICE_NAME.fullmatch(name):
        _refuse(argument, name, 'only the Docker driver\'s own devices '
                '(tap, vns, qbr, qvb or qvo + 11 characters of a port id)')
    return name


def inside_name(argument, name):
    if not isinstance(name, str) or not vif.INSIDE_NAME.fullmatch(name):
        _refuse(argument, name, 'an interface inside a container is '
                'eth0 to eth99')
    return name


def bridge(argument, name, sys_class_net='/sys/class/net'):
    """A Linux bridge that exists: a port's qbr, or the bridge a port names."""
    if not isinstance(name, str) or not IFNAME.fullmatch(name):
        _refuse(argument, name, 'not an interface name')
    if not os.path.isdir(os.path.join(sys_class_net, name, 'bridge')):
        _refuse(argument, name, 'no Linux bridge of that name')
    return name


def mac(argument, value):
    if not isinstance(value, str) or not MAC.fullmatch(value) or \
            int(value[:2], 16) & 1:
        _refuse(argument, value, 'a unicast MAC address aa:bb:cc:dd:ee:ff')
    return value.lower()


def mtu(argument, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or \
            not MTU_RANGE[0] <= value <= MTU_RANGE[1]:
        _refuse(argument, value, 'an MTU from %d to %d, or None' % MTU_RANGE)
    return value


def interfaces(argument, values):
    """Addresses with their prefix length ('10.0.0.5/24', 'fd00::5/64')."""
    try:
        return tuple(ipaddress.ip_interface(v) for v in _strings(values))
    except ValueError:
        _refuse(argument, values, 'a list of address/prefixlen')


def addresses(argument, values, version=None):
    try:
        found = tuple(ipaddress.ip_address(v) for v in _strings(values))
    except ValueError:
        found = None
    if found is None or (version and any(a.version != version
                                         for a in found)):
        _refuse(argument, values, 'a list of IPv%s addresses'
                % (version or '4 or IPv6'))
    return found


def routes(argument, values):
    """(cidr, gateway) pairs of the same IP version."""
    try:
        found = tuple((ipaddress.ip_network(cidr), ipaddress.ip_address(gw))
                      for cidr, gw in values)
    except (TypeError, ValueError):
        found = None
    if found is None or any(n.version != g.version for n, g in found):
        _refuse(argument, values, 'a list of (cidr, gateway) pairs')
    return found


def _strings(values):
    if isinstance(values, str) or not all(isinstance(v, str)
                                          for v in values):
        raise ValueError(values)
    return values


def _root_only(path):
    """Every directory from / to ``path`` is root's and only root writes it.

    As sshd's StrictModes: nobody but root can then put a file there or
    swap one, so what is checked is what gets opened.
    """
    while True:
        st = os.stat(path)
        if st.st_uid != 0 or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            return False
        if path == '/':
            return True
        path = os.path.dirname(path)


@contextlib.contextmanager
def open_netns(path, own='/proc/self/ns/net'):
    """An fd of a container's network namespace, given by its path.

    Only ``<a Docker exec root>/netns/<12 hex digits>``: an absolute path
    without ``..``, in a directory named netns that only root can write
    (every directory up to /), the last component no symlink (O_NOFOLLOW),
    a network namespace (the nsfs file system of ``own``), and not this
    process's own namespace (the host's). The fd is what the caller uses,
    so the checked file is the one entered.
    """
    folder, name = os.path.split(path) if isinstance(path, str) else ('', '')
    if not os.path.isabs(path or '') or '..' in path.split('/') or \
            os.path.basename(folder) != NETNS_DIR_NAME or \
            not NETNS_NAME.fullmatch(name):
        _refuse('netns', path, 'a Docker container\'s network namespace, '
                '/run/docker/netns/<12 hex digits>')
    real = os.path.realpath(folder)
    if not _root_only(real):
        _refuse('netns', path, 'its folder (%s) is not writable by root '
                'only' % real)
    try:
        fd = os.open(os.path.join(real, name),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        _refuse('netns', path, 'cannot be opened without following a '
                'symlink (%s)' % e.strerror)
    try:
        found, host = os.fstat(fd), os.stat(own)
        if found.st_dev != host.st_dev:
            _refuse('netns', path, 'not a network namespace')
        if found.st_ino == host.st_ino:
            _refuse('netns', path, 'the host\'s own network namespace')
        yield fd
    finally:
        os.close(fd)
