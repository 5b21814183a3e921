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
"""Docker compute driver: ``compute_driver = docker.DockerDriver``.

Nova imports compute drivers only as ``nova.virt.<compute_driver>``; the
``nova_docker_vmct.pth`` file of this distribution makes ``nova.virt.docker``
an alias of this package (:mod:`nova_docker_vmct.alias`). The .pth imports
this package at every interpreter start, so it imports nothing itself:
``DockerDriver`` (and with it Nova) is imported on first access.
"""

# The Nova release series this driver runs under (tools/install-driver and
# DockerDriver.init_host refuse others; pyproject.toml says the same range).
# What differs between them is in nova_docker_vmct.compat; tools/test-matrix
# runs the unit tests under each.
NOVA_RELEASES = {
    31: '2025.1 Epoxy',
    32: '2025.2 Flamingo',
    33: '2026.1 Gazpacho',
    34: '2026.2 Hibiscus',
}
OLDEST_NOVA_MAJOR = min(NOVA_RELEASES)
NEWEST_NOVA_MAJOR = max(NOVA_RELEASES)


def supported_nova():
    """'31.x to 34.x (2025.1 Epoxy to 2026.2 Hibiscus)', for messages."""
    return '%d.x to %d.x (%s to %s)' % (
        OLDEST_NOVA_MAJOR, NEWEST_NOVA_MAJOR,
        NOVA_RELEASES[OLDEST_NOVA_MAJOR], NOVA_RELEASES[NEWEST_NOVA_MAJOR])


def is_supported_nova(version):
    """Whether a Nova version string is of a supported series.

    Pre-releases of a series count (an editable Nova of a stable branch is
    e.g. 33.1.0.devN, a release candidate 34.0.0.0rc1).
    """
    import re   # not at the top: the .pth imports this module at start-up
    found = re.match(r'\d+', version)
    return found is not None and int(found.group()) in NOVA_RELEASES


def __getattr__(name):
    if name == 'DockerDriver':
        from nova_docker_vmct import driver
        return driver.DockerDriver
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
