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
"""The ``kind`` argument: which kind of instance a workload boots, and where.

A kind is a label (``kvm``, ``docker``, or any name) plus what lands an instance
on that kind of compute host::

    kind:
      name: docker
      image: {name: vmct-docker}          # or {id: ...} or {regex: ...}
      flavor: {name: m1.small}
      availability_zone: docker           # optional
      scheduler_hints: {group: ...}       # optional, passed to Nova as is
      ssh_user: root                      # optional (root)
      ssh_port: 22                        # optional (22)
      ssh_key_file: ~/.ssh/id_vmct        # optional; else the keypair context's key
      floating_network: public            # optional: reach servers at a floating IP of it

With ``floating_network`` (an external network's name or id) every server of
the kind gets a floating IP of that network once it is ACTIVE
(:mod:`rally_vmct.access.floating_ip`), the address every probe, SSH
session and workload uses, released when the server is deleted.

Scenarios annotate their argument with :data:`KindArg`: Rally validates the
spec against :class:`KindSpec` (unknown keys, a missing image or flavor are
rejected by ``rally task validate`` naming ``kind``), and the ``vmct_kind``
resource type resolves the image and flavor to ids once per workload, adding
``image_id`` and ``flavor_id`` (and ``floating_network_id``) to what ``run()``
receives. A spec that matches several images or flavors, a kernel or ramdisk
image, a floating network that does not exist or is not external are refused
naming the kind (:mod:`rally_vmct.task.lookup`). The label stays in
the workload's stored arguments, where the exporter reads it
(:func:`rally_vmct.task.output.kind_of`). Contexts take the same spec
(:data:`KIND_SCHEMA`, made from :class:`KindSpec`) and resolve it with the same
:func:`resolve`.
"""

import typing as t

from rally import exceptions
from rally.common.plugin import plugin
from rally.task import types
from rally.utils import typeutils
import typing_extensions as te

from rally_vmct.task import output

DEFAULT_SSH_USER = "root"
DEFAULT_SSH_PORT = 22
# Chart titles are "<kind>: <group> [<unit>]" (output.py), so a label cannot hold
# ':' '[' ']'; "native" is the bare-metal baseline's label.
NAME_PATTERN = r"^[^:\[\]]+$"
# A kind's label (kind.name; VMCT.native_benchmark's kind).
Label = t.Annotated[str, typeutils.Field(min_length=1, pattern=NAME_PATTERN)]
# An image or flavor name, id or regex.
Ref = t.Annotated[str, typeutils.Field(min_length=1)]


class ImageRef(te.TypedDict, total=False, closed=True):
    """A Glance image by ``name`` (exact, else regex), ``id`` or ``regex``."""

    name: Ref
    id: Ref
    regex: Ref
    accurate: bool
    list_kwargs: dict[str, t.Any]


class FlavorRef(te.TypedDict, total=False, closed=True):
    """A Nova flavor by ``name`` (exact, else regex), ``id`` or ``regex``."""

    name: Ref
    id: Ref
    regex: Ref


class KindSpec(te.TypedDict, closed=True):
    """What the task says about one instance kind (see the module docstring)."""

    name: Label
    image: ImageRef
    flavor: FlavorRef
    availability_zone: te.NotRequired[t.Annotated[str, typeutils.Field(min_length=1)]]
    scheduler_hints: te.NotRequired[dict[str, t.Any]]
    ssh_user: te.NotRequired[t.Annotated[str, typeutils.Field(min_length=1)]]
    ssh_port: te.NotRequired[t.Annotated[int, typeutils.Field(ge=1, le=65535)]]
    ssh_key_file: te.NotRequired[t.Annotated[str, typeutils.Field(min_length=1)]]
    floating_network: te.NotRequired[t.Annotated[str, typeutils.Field(min_length=1)]]


KindArg = t.Annotated[KindSpec, types.Convert("vmct_kind")]

# What a context's ``kind`` config accepts: the same spec, as a JSON schema.
KIND_SCHEMA = typeutils.hint_to_schema(KindSpec)


class KindError(ValueError):
    """A kind spec that cannot be used (the message names what and how to fix it)."""


def problems(kind):
    """Human-readable problems of a kind spec the JSON schema cannot express."""
    found = []
    if not isinstance(kind, dict):
        return ["kind must be a mapping like {name: kvm, image: {name: ...}, "
                "flavor: {name: ...}}"]
    if kind.get("name") == output.NATIVE_KIND:
        found.append("kind name %r is reserved for the bare-metal baseline "
                     "(VMCT.native_benchmark); call the Nova kind e.g. 'kvm' or 'docker'"
                     % output.NATIVE_KIND)
    for key in ("image", "flavor"):
        ref = kind.get(key)
        if isinstance(ref, dict) and not any(ref.get(k) for k in ("name", "id", "regex")):
            found.append("kind.%s needs one of 'name', 'id' or 'regex', got %r" % (key, ref))
    return found


def label(kind):
    """The kind's label (``kvm``...)."""
    return kind["name"]


def ssh_user(kind):
    return kind.get("ssh_user") or DEFAULT_SSH_USER


def ssh_port(kind):
    return int(kind.get("ssh_port") or DEFAULT_SSH_PORT)


def lookup_context(context, user=None):
    """The Rally context to look images and flavors up as: ``user`` (and the admin)."""
    if not user:
        return context
    found = {"users": [user]}
    if context.get("admin"):
        found["admin"] = context["admin"]
    return found


def resolve(kind, context, cache=None):
    """``kind`` with ``image_id``, ``flavor_id`` (and ``floating_network_id``) added.

    Ids already there are kept. The look-ups (:mod:`rally_vmct.task.lookup`) are
    made as ``context``'s first user (see :func:`lookup_context`), else its admin;
    ``cache`` is Rally's per-workload resource cache. Raises :class:`KindError`
    for a spec :func:`problems` rejects, or that names no resource, several, a
    kernel or ramdisk image, or a network that is not external.
    """
    # Imported here: rally_openstack is only needed when a workload runs.
    from rally_vmct.task import lookup

    wrong = problems(kind)
    if wrong:
        raise KindError("; ".join(wrong))
    resolved = dict(kind)
    clients = []

    def cloud():
        if not clients:
            clients.append(lookup.clients_of(context))
        return clients[0]
    try:
        if not resolved.get("image_id"):
            resolved["image_id"] = lookup.image(cloud(), kind["image"], cache).id
        if not resolved.get("flavor_id"):
            resolved["flavor_id"] = lookup.flavor(cloud(), kind["flavor"]).id
        if kind.get("floating_network") and not resolved.get("floating_network_id"):
            resolved["floating_network_id"] = lookup.external_network(
                cloud().neutron(), kind["floating_network"]).id
    except lookup.ResourceError as e:
        raise KindError("kind %r: %s" % (kind.get("name"), e)) from None
    return resolved


@plugin.configure(name="vmct_kind")
class InstanceKind(types.ResourceType):
    """Resolve an instance kind's image and flavor to ids, once per workload.

    Returns the kind with ``image_id`` and ``flavor_id`` added; the lookups are
    rally-openstack's ``glance_image`` and ``nova_flavor`` resource types.
    """

    def pre_process(self, *, resource_spec: KindSpec, config: types.ConvertConfig,
                    output_type: t.Any) -> dict[str, t.Any]:
        try:
            return resolve(resource_spec, self._context, self._global_cache)
        except KindError as e:
            raise exceptions.InvalidScenarioArgument(str(e))
