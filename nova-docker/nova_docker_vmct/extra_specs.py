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
"""The flavor extra specs of the Docker driver: the ``docker:`` namespace.

Nova's API validates flavor extra specs (microversion 2.86 and later)
against the validators of the ``nova.api.extra_spec_validators`` entry
point group, and refuses an unknown key in a namespace it knows. The driver
keeps to its own namespace: Nova's ``quota:`` is registered by Nova itself,
so ``quota:pids_limit`` would be refused. This module is that entry point
(``docker`` in pyproject.toml): where nova-docker-vmct is installed next to
nova-api, ``openstack flavor set --property docker:pids_limit=abc`` and a
misspelt ``docker:`` key are refused when they are set. Without it (the
driver installed on the computes only, or an older microversion) the API
stores any ``docker:`` value and the driver refuses a bad one at spawn.
"""

from nova.api.validation.extra_specs import base

PIDS_LIMIT = 'docker:pids_limit'
# Docker's own convention: 0 or -1 is no limit.
PIDS_LIMIT_MIN = -1

EXTRA_SPEC_VALIDATORS = [
    base.ExtraSpecValidator(
        name=PIDS_LIMIT,
        description=(
            'The most tasks (processes and threads together) one instance '
            'of the Docker compute driver may run; fork and clone fail '
            'with EAGAIN beyond it. Overrides the compute\'s '
            '``[docker] pids_limit``. ``0`` or ``-1``: no limit.'),
        value={'type': int, 'min': PIDS_LIMIT_MIN},
    ),
]


def register():
    return EXTRA_SPEC_VALIDATORS
