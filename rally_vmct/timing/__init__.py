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
"""The timing core: how a phase is timed and observed, one Nova server at a time.

* :mod:`.waiter` -- fast polling of one server, every state change time-stamped;
  :mod:`.watcher` the batched form (one Nova list per poll for many servers).
* :mod:`.timeline` -- phases recorded as Rally atomic actions bounded by observed instants.
* :mod:`.instance_actions` -- Nova's own record (``os-instance-actions``) and reboot paths.
* :mod:`.session` -- :class:`~.session.ServerSession`: boot (``vmct.build``),
  wait for network and SSH, delete, cleanup; the per-server record.
* :mod:`.power` -- reboot, stop and start phases on a session.
* :mod:`.diagnostics` -- the tables and chart a session's record makes.

The scenarios (:mod:`rally_vmct.task.scenarios`) and the helper-server contexts
(:mod:`rally_vmct.task.contexts.helper_server`) both drive servers through it.
"""
