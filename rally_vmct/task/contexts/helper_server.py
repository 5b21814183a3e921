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
"""One server a ``vmct_*`` context boots for a tenant: boot, SSH, snapshot, delete.

The contexts (``vmct_netperf_peer``, ``vmct_workload_image``) drive their
servers through the same :class:`rally_vmct.timing.session.ServerSession`
as the scenarios (fast polling, Nova faults in errors, the proxy command, the
tenant's keypair and security group, the network context's network), as the
tenant's user. :meth:`HelperServer.close` always deletes the server and waits
until it is gone.
"""

import json

from rally.common import logging
from rally.common import utils as rally_utils
from rally.common import validation
from rally.task import scenario as rally_scenario
from rally_openstack.common import osclients

from rally_vmct.timing import waiter
from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.timing import power
from rally_vmct.timing import session as server_session
from rally_vmct.workloads import guest_tools

LOG = logging.getLogger(__name__)

ACCESS_PROPERTIES = {
    "boot_args": {"type": "object"},
    "proxy_command": {"type": ["string", "null"]},
    "ssh_user": {"type": "string", "minLength": 1},
}


def plain(value):
    """Plain dicts and lists from a context config (Rally locks it: LockedDict, tuples)."""
    return json.loads(json.dumps(value))


def config_schema(**properties):
    """A vmct_* context's CONFIG_SCHEMA: kind, access properties and ``properties``."""
    from rally_openstack.common import consts

    props = dict(ACCESS_PROPERTIES, kind=kinds.KIND_SCHEMA,
                 command_timeout={"type": "number", "minimum": 1})
    props.update(properties)
    return {"type": "object", "$schema": consts.JSON_SCHEMA, "properties": props,
            "required": ["kind"], "additionalProperties": False}


def kind_context(cls):
    """The validators every context that boots a helper server of a kind has."""
    for name, kwargs in (("required_platform", {"platform": "openstack", "users": True}),
                         ("vmct_kind", {}),
                         ("vmct_access", {}),
                         ("vmct_kind_resources", {})):
        cls = validation.add(name, **kwargs)(cls)
    return cls


class HelperError(RuntimeError):
    """A context's server could not be set up (the message says why and how to fix it)."""


def resolve_kind(context, kind, user):
    """``kind`` with ``image_id`` and ``flavor_id``, looked up as ``user``."""
    try:
        return kinds.resolve(plain(kind), kinds.lookup_context(context, user))
    except kinds.KindError as e:
        raise HelperError("kind: %s" % e) from None


def first_users(context):
    """``[(user, tenant id)]``: the first user of every tenant."""
    seen = {}
    for user in context.get("users") or []:
        seen.setdefault(user["tenant_id"], user)
    return [(user, tenant_id) for tenant_id, user in seen.items()]


class ServerNames(rally_utils.RandomNameGeneratorMixin):
    """Server names in the scenarios' format, so cleanup@openstack finds leftovers too."""

    RESOURCE_NAME_FORMAT = rally_scenario.Scenario.RESOURCE_NAME_FORMAT

    def __init__(self, context):
        self.task = context["task"]
        self.owner_id = context.get("owner_id")

    def get_owner_id(self):
        return self.owner_id or self.task["uuid"]


class HelperServer(object):
    """A server booted by a context as ``user`` of ``tenant``.

    :param context: the context's ``self.context`` (task, owner id, admin)
    :param kind: instance kind, resolved (image_id, flavor_id)
    :param clients: osclients for the user (tests pass fakes)
    """

    session_class = server_session.ServerSession

    def __init__(self, context, user, tenant, kind, boot_args=None, proxy_command=None,
                 ssh_user=None, clients=None):
        kind = plain(kind)
        if ssh_user:
            kind["ssh_user"] = ssh_user
        if not kind.get("ssh_key_file") and not user.get("keypair"):
            raise HelperError("the server of kind %r needs an SSH key: add the 'keypair' "
                              "context (before this one) or set kind.ssh_key_file"
                              % kind.get("name"))
        self.kind = kind
        self.user = user
        self.tenant = tenant
        self.boot_args = plain(boot_args or {})
        self.names = ServerNames(context)
        self.osclients = clients or osclients.Clients(user["credential"])
        # TCP (through a proxy command: the SSH banner) first, then an SSH command.
        access = server_session.Access.of(kind, "tcp", True, proxy_command,
                                          user.get("keypair"))
        # The contexts' phases are timed too (logged at debug), not reported.
        self.atomic_actions = []
        self.session = self.session_class(self.clients, kind, access, self.atomic_actions)
        self.ssh = None

    def clients(self, client_type, version=None):
        """The user's OpenStack client, as a scenario's ``clients``."""
        client = getattr(self.osclients, client_type)
        return client(version) if version is not None else client()

    @property
    def server_id(self):
        return self.session.server.id if self.session.server is not None else None

    @property
    def address(self):
        """The address the harness reaches the server at (a floating IP, if the kind says)."""
        return self.session.address

    @property
    def fixed_address(self):
        """The server's own address on its network, where other servers reach it."""
        return self.session.fixed_address or self.session.address

    def describe(self):
        return "server %s (kind %s, %s)" % (
            self.server_id, kinds.label(self.kind), self.address or "no address yet")

    def boot(self):
        """Boot, wait until an SSH command works; returns the fixed IP address."""
        kwargs = server_session.create_kwargs(
            self.kind, self.boot_args, self.user, server_session.tenant_nics(self.tenant, 0),
            lambda name: server_session.network_id(self.clients("neutron"), name))
        active = self.session.boot(self.names.generate_random_name(), self.kind["image_id"],
                                   self.kind["flavor_id"], kwargs)
        self.session.wait_for_network(active)
        return self.session.address

    def execute(self, command, timeout):
        """``(exit code, stdout, stderr)`` of a shell command in the server."""
        if self.ssh is None:
            self.ssh = self.session.ssh_client()
        return self.ssh.execute(command, timeout=timeout)

    def missing_tools(self, tools, timeout, context_name):
        """Tools of ``tools`` absent from the server (``command -v``).

        A check that itself fails is a :class:`HelperError` naming ``context_name``.
        """
        rc, out, err = self.execute(guest_tools.check_tools_command(tools), timeout)
        if rc != 0:
            raise HelperError("%s: checking for %s on %s failed (exit %s): %s"
                              % (context_name, ", ".join(tools), self.describe(), rc,
                                 (err or out).strip()[-400:]))
        return guest_tools.parse_missing(out)

    def disconnect(self):
        if self.ssh is not None:
            self.ssh.close()
            self.ssh = None

    def snapshot(self, name):
        """Stop the server, snapshot it to a Glance image; return the image id once active.

        The image is deleted again if it does not become active.
        """
        self.disconnect()
        power.stop(self.session)
        image_id = self.session.nova().servers.create_image(self.session.server, name)
        image_id = getattr(image_id, "id", image_id)
        glance = self.clients("glance", version="2")

        def active():
            image = glance.images.get(image_id)
            status = image["status"] if isinstance(image, dict) else image.status
            if status in ("killed", "deleted", "deactivated"):
                raise HelperError("snapshot image %s of %s became %s"
                                  % (image_id, self.describe(), status))
            return status == "active", "status %s" % status
        try:
            waiter.wait_until(active, opts.get("build_timeout"), 1.0,
                              "snapshot image %s to become active" % image_id,
                              clock=self.session.clock)
        except Exception:
            delete_image(glance, image_id)
            raise
        return image_id

    def close(self):
        """Delete the server (if any), wait until it is gone, release its floating IP.

        Never raises.
        """
        self.disconnect()
        session = self.session
        try:
            if session.server is None or session.deleted:
                return
            try:
                session.delete()
            except Exception as e:
                if waiter.is_not_found(e):
                    return
                LOG.warning("Deleting %s failed (%s: %s); retrying once"
                            % (self.describe(), type(e).__name__, e))
                session.cleanup(again=True)
        finally:
            session.release_floating_ip()


def delete_image(glance, image_id):
    """Delete a Glance image; a missing one is fine; other errors are logged."""
    try:
        glance.images.delete(image_id)
    except Exception as e:
        if not waiter.is_not_found(e):
            LOG.warning("Could not delete image %s (%s: %s); cleanup@openstack "
                        "(glance) will" % (image_id, type(e).__name__, e))
