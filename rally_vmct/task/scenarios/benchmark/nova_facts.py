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
"""What only the cloud knows about an instance: its Nova hypervisor and compute host.

The hypervisor facts need Rally's admin credential (``OS-EXT-SRV-ATTR:*`` and
os-hypervisors are admin API). Without it, or when a lookup fails (a Forbidden
included), the facts say unknown and why: the benchmark iteration never fails
for this (a warning is logged).

Whether the netperf peer shares the instance's compute host (:func:`peer_host`)
needs no admin: every user sees a server's ``hostId``, a hash of its project
and compute host, so two servers of one project with the same ``hostId`` are
on the same host; ``OS-EXT-SRV-ATTR:host`` is used where the user sees it.
"""

from rally.common import logging

from rally_vmct.workloads import facts as facts_lib

LOG = logging.getLogger(__name__)

HOST_ATTR = "OS-EXT-SRV-ATTR:host"
HYPERVISOR_ATTR = "OS-EXT-SRV-ATTR:hypervisor_hostname"


def _hypervisor(nova, server):
    hostname = getattr(server, HYPERVISOR_ATTR, None)
    for hypervisor in nova.hypervisors.list():
        if getattr(hypervisor, "hypervisor_hostname", None) == hostname:
            return hypervisor
    return None


def hypervisor_facts(nova, server_id):
    """nova_hypervisor_type/version and nova_compute_host of a server (admin ``nova``)."""
    server = nova.servers.get(server_id)
    facts = {"nova_compute_host": getattr(server, HOST_ATTR, None) or "unknown"}
    hypervisor = _hypervisor(nova, server)
    if hypervisor is None:
        facts.update(nova_hypervisor_type="unknown (hypervisor %r not listed)"
                     % getattr(server, HYPERVISOR_ATTR, None),
                     nova_hypervisor_version="unknown")
        return facts
    # Nova's API >= 2.88 no longer shows type and version.
    facts.update(nova_hypervisor_type=getattr(hypervisor, "hypervisor_type", None) or "unknown",
                 nova_hypervisor_version=facts_lib.nova_version_text(
                     getattr(hypervisor, "hypervisor_version", None)))
    return facts


def same_compute_host(nova, server_id, host):
    """Whether server ``server_id`` runs on compute ``host`` (None: unknown)."""
    if not server_id or not host or host == "unknown":
        return None
    other = getattr(nova.servers.get(server_id), HOST_ATTR, None)
    return None if not other else other == host


SAME_HOST = "same host"
DIFFERENT_HOST = "different host"
UNKNOWN_HOST = "unknown"


def peer_host(nova, server_id, peer_server_id):
    """``(answer, how)``: does the peer run on the server's compute host; never raises.

    ``answer`` is :data:`SAME_HOST`, :data:`DIFFERENT_HOST` or :data:`UNKNOWN_HOST`;
    ``how`` says what it was read from, or why it is unknown.
    :param nova: a Nova client of the servers' project (a user's: ``hostId``)
    """
    try:
        server, peer = nova.servers.get(server_id), nova.servers.get(peer_server_id)
    except Exception as e:
        LOG.warning("Cannot read servers %s and %s to compare their hosts (%s: %s)"
                    % (server_id, peer_server_id, type(e).__name__, e))
        return UNKNOWN_HOST, "the servers could not be read (%s)" % type(e).__name__
    for attribute, what in ((HOST_ATTR, "compute hosts"), ("hostId", "hostId")):
        values = getattr(server, attribute, None), getattr(peer, attribute, None)
        if all(values):
            answer = SAME_HOST if values[0] == values[1] else DIFFERENT_HOST
            if attribute == HOST_ATTR:
                return answer, "%s %s and %s" % (what, values[0], values[1])
            return answer, "the servers' %s (equal within a project: the same host)" % what
    return UNKNOWN_HOST, "Nova shows neither the servers' compute host nor their hostId"


def placement_text(requested, answer):
    """netperf_peer_placement: the placement asked for, and whether it held."""
    if not requested:
        return "not requested (the scheduler decides)"
    wanted = SAME_HOST if requested == "same_host" else DIFFERENT_HOST
    text = "%s (scheduler hint)" % requested
    if answer == UNKNOWN_HOST:
        return text + "; whether it held is unknown"
    if answer != wanted:
        return (text + "; NOT honoured, the peer is on a %s: Nova's scheduler needs "
                "%s in [filter_scheduler] enabled_filters"
                % (answer, "SameHostFilter" if requested == "same_host"
                   else "DifferentHostFilter"))
    return text + "; honoured"


def lookup(admin_nova, server_id, peer_server_id=None):
    """``(facts, same_host)`` of a server; never raises.

    ``facts``: its hypervisor facts; ``same_host``: whether the netperf peer
    instance shares its compute host (None when unknown).
    :param admin_nova: a Nova client with the admin credential, or None
    """
    facts = {"nova_hypervisor_type": facts_lib.NO_ADMIN,
             "nova_hypervisor_version": facts_lib.NO_ADMIN}
    if admin_nova is None:
        return facts, None
    try:
        facts.update(hypervisor_facts(admin_nova, server_id))
        return facts, same_compute_host(admin_nova, peer_server_id,
                                        facts["nova_compute_host"])
    except Exception as e:
        LOG.warning("Cannot read the hypervisor of server %s with the admin credential "
                    "(%s: %s); its facts say unknown" % (server_id, type(e).__name__, e))
        facts.update(nova_hypervisor_type="unknown (admin lookup failed: %s)"
                     % type(e).__name__, nova_hypervisor_version="unknown")
        return facts, None
