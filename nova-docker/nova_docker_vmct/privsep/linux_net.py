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
"""Plugging commands run by the privsep daemon (:data:`privsep.vif_plug`)."""

import sys

from oslo_concurrency import processutils
from oslo_log import log as logging

from nova_docker_vmct import privsep
from nova_docker_vmct import vif

LOG = logging.getLogger(__name__)


def execute(cmd, check=True, stdin=None):
    """Run an argv list in this process's privileges; its stdout."""
    LOG.debug('Running %s', cmd)
    out, _err = processutils.execute(
        *cmd, check_exit_code=[0] if check else False, process_input=stdin)
    return out


@privsep.vif_plug.entrypoint
def run_plug_command(cmd, check=True, stdin=None):
    """Run one of the driver's plugging commands as root.

    Only the commands :func:`vif.privileged_argv` allows (iproute2 and
    ovs-vsctl, in the root or a container's network namespace): a caller
    that reaches this daemon cannot make it run anything else.
    """
    return execute(vif.privileged_argv(cmd, sys.executable), check, stdin)
