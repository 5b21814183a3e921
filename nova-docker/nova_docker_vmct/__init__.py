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

# The Nova release series this driver is written for (tools/install-driver
# and DockerDriver.init_host check it; pyproject.toml: nova>=34...,<35).
SUPPORTED_NOVA_MAJOR = 34


def __getattr__(name):
    if name == 'DockerDriver':
        from nova_docker_vmct import driver
        return driver.DockerDriver
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
