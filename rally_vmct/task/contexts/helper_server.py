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

The contexts (``vmct_netperf_peer``, ``vmct_workload_image``) reuse the
scenarios' phases (:class:`rally_vmct.task.scenarios.instance.InstanceScenario`:
fast polling, Nova faults in errors, the proxy command, the tenant's keypair and
security group, the network context's network) through a scenario object acting
as the tenant's user. :meth:`HelperServer.close` always deletes the server and
waits until it is gone.
"""

import json

from rally.common import logging

from rally_vmct.common import waiter
from rally_vmct import opts
from rally_vmct.task import kinds
from rally_vmct.task.scenarios import lifecycle
from rally_vmct.workloads import guest_tools

LOG = logging.getLogger(__name__)

# What a context's ``kind`` config accepts: a kind as the scenarios take it.
KIND_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "pattern": kinds.NAME_PATTERN},
        "image": {"type": "object"},
        "flavor": {"type": "object"},
        "availability_zone": {"type": "string", "minLength": 1},
        "scheduler_hints": {"type": "object"},
        "ssh_user": {"type": "string", "minLength": 1},
        "ssh_port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "ssh_key_file": {"type": "string", "minLength": 1},
    },
    "required": ["name", "image", "flavor"],
    "additionalProperties": False,
}

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

    props = dict(ACCESS_PROPERTIES, kind=KIND_SCHEMA,
                 command_timeout={"type": "number", "minimum": 1})
    props.update(properties)
    return {"type": "object", "$schema": consts.JSON_SCHEMA, "properties": props,
            "required": ["kind"], "additionalProperties": False}


class HelperError(RuntimeError):
    """A context's server could not be set up (the message says why and how to fix it)."""


def resolve_kind(context, kind, user):
    """``kind`` with ``image_id`` and ``flavor_id`` (rally-openstack's look-ups)."""
    from rally_openstack.task import types as openstack_types

    wrong = kinds.problems(kind)
    if wrong:
        raise HelperError("kind: %s" % "; ".join(wrong))
    resolved = plain(kind)
    ctx = {"users": [user]}
    if context.get("admin"):
        ctx["admin"] = context["admin"]
    if not resolved.get("image_id"):
        resolved["image_id"] = openstack_types.GlanceImage(ctx).pre_process(
            kind["image"], config={})
    if not resolved.get("flavor_id"):
        resolved["flavor_id"] = openstack_types.Flavor(ctx).pre_process(
            kind["flavor"], config={})
    return resolved


def first_users(context):
    """``[(user, tenant id)]``: the first user of every tenant."""
    seen = {}
    for user in context.get("users") or []:
        seen.setdefault(user["tenant_id"], user)
    return [(user, tenant_id) for tenant_id, user in seen.items()]


class HelperServer(object):
    """A server booted by a context as ``user`` of ``tenant``.

    :param context: the context's ``self.context`` (task, owner id, admin)
    :param kind: instance kind, resolved (image_id, flavor_id) or not
    :param clients: osclients for the user (tests pass fakes)
    """

    scenario_class = lifecycle.PowerActions

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
        self.boot_args = plain(boot_args or {})
        ctx = {"task": context["task"], "owner_id": context.get("owner_id"),
               "user": user, "tenant": tenant, "iteration": 0}
        if context.get("admin"):
            ctx["admin"] = context["admin"]
        self.scenario = self.scenario_class(ctx, clients=clients)
        # TCP (through a proxy command: the SSH banner) first, then an SSH command.
        self.scenario._start_iteration(kind, probe="tcp", wait_for_ssh=True,
                                       proxy_command=proxy_command)
        self.client = None

    @property
    def server_id(self):
        return self.scenario.server.id if self.scenario.server is not None else None

    @property
    def address(self):
        return self.scenario.address

    def describe(self):
        return "server %s (kind %s, %s)" % (
            self.server_id, kinds.label(self.kind), self.address or "no address yet")

    def boot(self):
        """Boot, wait until an SSH command works; returns the fixed IP address."""
        active = self.scenario._boot(self.boot_args)
        self.scenario._wait_for_network(active)
        return self.scenario.address

    def execute(self, command, timeout):
        """``(exit code, stdout, stderr)`` of a shell command in the server."""
        if self.client is None:
            self.client = self.scenario._ssh_client()
        return self.client.execute(command, timeout=timeout)

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
        if self.client is not None:
            self.client.close()
            self.client = None

    def snapshot(self, name):
        """Stop the server, snapshot it to a Glance image; return the image id once active.

        The image is deleted again if it does not become active.
        """
        self.disconnect()
        self.scenario._stop()
        image_id = self.scenario._nova().servers.create_image(self.scenario.server, name)
        image_id = getattr(image_id, "id", image_id)
        glance = self.scenario.clients("glance", version="2")

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
                              clock=self.scenario.clock)
        except Exception:
            delete_image(glance, image_id)
            raise
        return image_id

    def close(self):
        """Delete the server (if any) and wait until it is gone; never raises."""
        self.disconnect()
        scenario = self.scenario
        if scenario.server is None or scenario.deleted:
            return
        try:
            scenario._delete()
        except Exception as e:
            if waiter.is_not_found(e):
                return
            LOG.warning("Deleting %s failed (%s: %s); retrying once"
                        % (self.describe(), type(e).__name__, e))
            scenario.deleted = False
            scenario._cleanup_server()


def delete_image(glance, image_id):
    """Delete a Glance image; a missing one is fine; other errors are logged."""
    try:
        glance.images.delete(image_id)
    except Exception as e:
        if not waiter.is_not_found(e):
            LOG.warning("Could not delete image %s (%s: %s); cleanup@openstack "
                        "(glance) will" % (image_id, type(e).__name__, e))
