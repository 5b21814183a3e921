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

Needs Rally's admin credential (``OS-EXT-SRV-ATTR:*`` and os-hypervisors are admin
API). Without it, or when a lookup fails, the facts say unknown: the benchmark
iteration never fails for this (a warning is logged).
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
