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
"""``vmct_workload_image``: check that a kind's image has the benchmark tools, or prepare one."""

import shlex

from rally.common import logging
from rally_openstack.common import osclients
from rally_openstack.task import context

from rally_vmct.task.contexts import helper_server
from rally_vmct.task import kinds
from rally_vmct.workloads import guest_tools

LOG = logging.getLogger(__name__)

KEY = "vmct_workload_image"


def image_for(ctx, kind):
    """The image this context prepared for ``kind`` (same kind name), else None."""
    prepared = ctx.get(KEY) or {}
    if prepared.get("image_id") and prepared.get("kind") == kinds.label(kind):
        return prepared["image_id"]
    return None


@helper_server.kind_context
@context.configure(name=KEY, platform="openstack", order=510)
class WorkloadImage(context.OpenStackContext):
    """Check that an instance kind's image has sysbench and netperf, or prepare one that has.

    Setup boots the kind's image once (as the first tenant's first user, with
    the keypair context's key), checks the tools over SSH (`command -v`) and
    deletes that server again, whatever happens. Missing tools fail the setup
    with a message naming them, unless prepare is true: then the context
    installs them with the guest's package manager (apt-get, dnf, yum or apk,
    detected; the guest needs its package repositories), stops the server,
    snapshots it to a new Glance image (shared with every tenant of the task)
    and makes VMCT.boot_and_benchmark and vmct_netperf_peer boot that image for
    the kind of the same name: context["vmct_workload_image"] =
    {kind, image_id, prepared, tools}. Cleanup deletes the snapshot image.

    Images with the tools are built by the project's tools/images
    (tools/images/build-qemu-guest: qcow2 for KVM; tools/images/docker/README.md:
    the Docker image for the Docker compute driver).

    Config: kind (as the scenario's: {name, image, flavor, availability_zone,
    scheduler_hints, ssh_user, ssh_port, ssh_key_file}), tools (default
    [sysbench, netperf, netserver]), prepare (false), boot_args (extra server
    create arguments), proxy_command (OpenSSH ProxyCommand syntax with %h %p
    %r; default [vmct] ssh_proxy_command), ssh_user (overrides kind.ssh_user),
    command_timeout (seconds for the installation, 900).
    """

    CONFIG_SCHEMA = helper_server.config_schema(
        tools={"type": "array", "minItems": 1, "uniqueItems": True,
               "items": {"type": "string", "enum": list(guest_tools.TOOLS)}},
        prepare={"type": "boolean"})
    DEFAULT_CONFIG = {"tools": list(guest_tools.DEFAULT_TOOLS), "prepare": False,
                      "command_timeout": 900}

    # Tests put fake clients here: callable(user) -> osclients-like object.
    clients_factory = None

    def _clients(self, user):
        if self.clients_factory:
            return self.clients_factory(user)
        return osclients.Clients(user["credential"])

    def _install(self, server, tools, timeout):
        script = guest_tools.install_script(tools)
        rc, out, err = server.execute("sh -c %s" % shlex.quote(script), timeout)
        manager = guest_tools.parse_manager(out)
        if rc != 0:
            raise helper_server.HelperError(
                "%s: installing %s on %s with %s failed (exit %s): %s"
                % (KEY, ", ".join(tools), server.describe(), manager or "no package manager",
                   rc, (err or out).strip()[-600:]))
        return manager

    def _share(self, glance, image_id, owner_tenant):
        others = [tid for tid in self.context.get("tenants") or {} if tid != owner_tenant]
        if not others:
            return
        glance.images.update(image_id, visibility="shared")
        for tenant_id in others:
            glance.image_members.create(image_id, tenant_id)

    def setup(self):
        self._image = None
        self._glance = None
        users = helper_server.first_users(self.context)
        if not users:
            raise helper_server.HelperError("%s needs the users context" % KEY)
        user, tenant_id = users[0]
        kind = helper_server.resolve_kind(self.context, self.config["kind"], user)
        tools = list(self.config["tools"])
        timeout = self.config["command_timeout"]
        clients = self._clients(user)
        where = "image %s of kind %r" % (kind["image_id"], kind["name"])
        server = helper_server.HelperServer(
            self.context, user, self.context["tenants"][tenant_id], kind,
            boot_args=self.config.get("boot_args"),
            proxy_command=self.config.get("proxy_command"),
            ssh_user=self.config.get("ssh_user"), clients=clients)
        info = {"kind": kind["name"], "image_id": kind["image_id"], "prepared": False,
                "tools": tools}
        try:
            server.boot()
            missing = server.missing_tools(tools, 60, KEY)
            if missing and not self.config["prepare"]:
                raise helper_server.HelperError(
                    "%s: %s" % (KEY, guest_tools.missing_message(missing, where)))
            if missing:
                manager = self._install(server, missing, timeout)
                still = server.missing_tools(tools, 60, KEY)
                if still:
                    raise helper_server.HelperError(
                        "%s: %s installed packages %s but %s still lacks %s"
                        % (KEY, manager, ", ".join(guest_tools.packages(missing)),
                           server.describe(), ", ".join(still)))
                self._glance = clients.glance("2")
                image_id = server.snapshot(server.names.generate_random_name())
                self._image = image_id
                self._share(self._glance, image_id, tenant_id)
                info.update(image_id=image_id, prepared=True)
                LOG.info("%s: %s installed %s; snapshot image %s"
                         % (KEY, manager, ", ".join(missing), image_id))
        except Exception as e:
            self._delete_image()
            if isinstance(e, helper_server.HelperError):
                raise
            raise helper_server.HelperError("%s: checking %s failed: %s: %s"
                                            % (KEY, where, type(e).__name__, e)) from e
        finally:
            server.close()
        self.context[KEY] = info

    def _delete_image(self):
        if getattr(self, "_image", None):
            helper_server.delete_image(self._glance, self._image)
            self._image = None

    def cleanup(self):
        self._delete_image()
        self.context.pop(KEY, None)
