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
"""Base class of the rally-vmct scenarios that boot Nova servers of a kind.

A scenario drives each server through a
:class:`rally_vmct.timing.session.ServerSession`, which times every phase
(``vmct.build``, ``vmct.wait_for_network``, ``vmct.delete``...) into the
scenario's atomic actions. ``run()`` reads top-down::

    session = self._open_session(kind, probe, wait_for_ssh, proxy_command)
    try:
        session.wait_for_network(self._boot(session, boot_args))
        ...
        gone = session.delete()
    finally:
        self._finish(session)

:meth:`_finish` deletes a server a failure left behind and adds the diagnostic
tables (server transitions, instance actions) to the iteration's output.
"""

from rally_openstack.task.scenarios.nova import utils as nova_utils

from rally_vmct.timing import waiter
from rally_vmct.hostcost import iteration
from rally_vmct.task import kinds
from rally_vmct.timing import diagnostics
from rally_vmct.timing import session as server_session


class InstanceScenario(nova_utils.NovaScenario):
    """Boot servers of an instance kind and time their lifecycle precisely."""

    # Real time; unit tests put a fake clock (and a session class with fake probes) here.
    clock = waiter.Clock()
    session_class = server_session.ServerSession

    def _open_session(self, kind, probe="tcp", wait_for_ssh=False, proxy_command=None,
                      poll_mode=None):
        """A session for one server of ``kind``, timed into this scenario's atomic actions."""
        keypair = self.context.get("user", {}).get("keypair")
        access = server_session.Access.of(kind, probe, wait_for_ssh, proxy_command, keypair)
        return self.session_class(self.clients, kind, access, self._atomic_actions,
                                  clock=self.clock, poll_mode=poll_mode)

    def _boot(self, session, boot_args=None, scheduler_hints=None):
        """``vmct.build`` as this scenario's user, with the context's key, group and network.

        ``scheduler_hints`` are added to the kind's.
        """
        user = self.context.get("user")
        kind = kinds.resolve(session.kind, kinds.lookup_context(self.context, user))
        nics = server_session.tenant_nics(self.context.get("tenant"), self.context["iteration"])
        kwargs = server_session.create_kwargs(
            kind, boot_args, user or {}, nics,
            lambda name: server_session.network_id(self.clients("neutron"), name),
            scheduler_hints)
        return session.boot(self.generate_random_name(), kind["image_id"], kind["flavor_id"],
                            kwargs)

    def _finish(self, session):
        """Delete leftovers; add the diagnostic tables (always) and the host monitor's charts."""
        session.finish()
        for table in diagnostics.tables(session):
            self.add_output(complete=table)
        server_id = session.server.id if session.server is not None else None
        iteration.add_charts(self, session.label, server_id)
