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
"""The image, flavor and external network a kind names, found without guessing.

rally-openstack's ``glance_image`` type takes the last of several images a name
or regex matches (``{regex: "^vmct-qemu"}`` picked the ramdisk of a disk image,
its kernel and its ramdisk). Here a spec that matches several resources is
refused naming them and the fix (an id, or a name that matches one); a kernel
or ramdisk image (``aki``/``ari``) cannot be a kind's boot image; a floating
network must exist and be external (``router:external``).

:func:`pick` and :func:`boot_image_problem` are pure; :func:`image`,
:func:`flavor` and :func:`external_network` ask the cloud through clients the
caller gives (osclients-like: ``glance(version)``, ``nova()``, ``neutron()``).
"""

import re

from rally_vmct.timing import waiter

# Glance formats of a kernel (aki) and a ramdisk (ari): never a bootable disk.
KERNEL_FORMATS = ("aki", "ari")
# How many names an error lists before "..."
LISTED = 12


class ResourceError(ValueError):
    """A spec that names no resource, several, or an unusable one (says the fix)."""


def describe(resource):
    return "%s (%s)" % (getattr(resource, "name", None) or "", resource.id)


def listing(resources):
    names = sorted(describe(r) for r in resources)
    more = ", ..." if len(names) > LISTED else ""
    return ", ".join(names[:LISTED]) + more if names else "none"


def pick(argument, spec, resources, what):
    """The one resource of ``resources`` (objects with ``id`` and ``name``) ``spec`` names.

    ``spec`` is ``{id}``, ``{name}`` (exact, else a regex unless ``accurate``) or
    ``{regex}``. Raises :class:`ResourceError` naming ``argument`` (e.g.
    ``kind.image``) when nothing or several match.
    """
    resources = list(resources)
    if spec.get("id"):
        found = [r for r in resources if r.id == spec["id"]]
        if not found:
            raise ResourceError("%s: no %s with id %r" % (argument, what, spec["id"]))
        return found[0]
    name = spec.get("name")
    if name:
        exact = [r for r in resources if getattr(r, "name", None) == name]
        if len(exact) == 1:
            return exact[0]
        if exact:
            raise ambiguous(argument, "name %r" % name, exact, what)
        if spec.get("accurate"):
            raise ResourceError("%s: no %s named %r (accurate: true); the %ss: %s"
                                % (argument, what, name, what, listing(resources)))
    pattern = name or spec.get("regex") or ""
    try:
        regex = re.compile(pattern)
    except re.error as e:
        raise ResourceError("%s: %r is not a regular expression (%s): give an exact name or "
                            "an id" % (argument, pattern, e)) from None
    matching = [r for r in resources if regex.search(getattr(r, "name", None) or "")]
    if not matching:
        raise ResourceError("%s: no %s matches %r; the %ss: %s"
                            % (argument, what, pattern, what, listing(resources)))
    if len(matching) > 1:
        raise ambiguous(argument, "%r" % pattern, matching, what)
    return matching[0]


def ambiguous(argument, how, found, what):
    return ResourceError(
        "%s: %s matches %d %ss: %s; name one: give its id (%s: {id: ...}) or a name or regex "
        "that matches only it" % (argument, how, len(found), what, listing(found), argument))


def by_id(get, argument, resource_id, what):
    """``get(resource_id)``; a 404 is a :class:`ResourceError` naming ``argument``."""
    try:
        return get(resource_id)
    except Exception as e:
        if waiter.is_not_found(e):
            raise ResourceError("%s: no %s with id %r: give the id of one the cloud has, or "
                                "its name" % (argument, what, resource_id)) from None
        raise


def boot_image_problem(image, argument="kind.image"):
    """Why ``image`` (a Glance image) cannot boot a server; None when it can."""
    formats = {attribute(image, "disk_format"), attribute(image, "container_format")}
    wrong = sorted(f for f in formats if f in KERNEL_FORMATS)
    if not wrong:
        return None
    return ("%s: image %s is a %s image (%s), not a bootable disk: name the disk image "
            "(disk_format qcow2, raw...; it may refer to this one as its kernel_id or "
            "ramdisk_id)" % (argument, describe(image),
                             "kernel" if "aki" in wrong else "ramdisk", "/".join(wrong)))


def attribute(resource, name):
    if isinstance(resource, dict):
        return resource.get(name)
    return getattr(resource, name, None)


class Image:
    """A Glance image as :func:`pick` needs it (``id``, ``name``), with its formats."""

    def __init__(self, record):
        self.record = record
        self.id = attribute(record, "id")
        self.name = attribute(record, "name")
        self.disk_format = attribute(record, "disk_format")
        self.container_format = attribute(record, "container_format")


def images(clients, list_kwargs=None, cache=None):
    """The active images the credential sees (``list_kwargs``: Glance filters)."""
    filters = dict({"status": "active"}, **(list_kwargs or {}))
    key = ("vmct_images", tuple(sorted((k, str(v)) for k, v in filters.items())))
    if cache is not None and key in cache:
        return cache[key]
    found = [Image(record) for record in clients.glance("2").images.list(filters=filters)]
    if cache is not None:
        cache[key] = found
    return found


def image(clients, spec, cache=None, argument="kind.image"):
    """The Glance image ``spec`` names (:class:`Image`), refused if it cannot boot."""
    if spec.get("id"):
        found = Image(by_id(clients.glance("2").images.get, argument, spec["id"], "image"))
    else:
        found = pick(argument, spec, images(clients, spec.get("list_kwargs"), cache), "image")
    problem = boot_image_problem(found, argument)
    if problem:
        raise ResourceError(problem)
    return found


def flavor(clients, spec, argument="kind.flavor"):
    """The Nova flavor ``spec`` names."""
    if spec.get("id"):
        return by_id(clients.nova().flavors.get, argument, spec["id"], "flavor")
    return pick(argument, spec, clients.nova().flavors.list(), "flavor")


class Network:
    """A Neutron network as :func:`pick` needs it."""

    def __init__(self, record):
        self.record = record
        self.id = record["id"]
        self.name = record.get("name")
        self.external = bool(record.get("router:external"))


def external_network(neutron, name_or_id, argument="kind.floating_network"):
    """The external network (:class:`Network`) named ``name_or_id`` (an id or exact name)."""
    networks = [Network(n) for n in neutron.list_networks()["networks"]]
    found = ([n for n in networks if n.id == name_or_id]
             or [n for n in networks if n.name == name_or_id])
    externals = [n for n in networks if n.external]
    if not found:
        raise ResourceError("%s: no network %r; floating IPs come from an external network "
                            "(router:external), the cloud's: %s"
                            % (argument, name_or_id, listing(externals)))
    if len(found) > 1:
        raise ambiguous(argument, "name %r" % name_or_id, found, "network")
    if not found[0].external:
        raise ResourceError("%s: network %s is not external (router:external is false), so "
                            "it has no floating IPs: name an external network (the cloud's: "
                            "%s), or leave floating_network out to reach instances on their "
                            "fixed address" % (argument, describe(found[0]),
                                               listing(externals)))
    return found[0]


def clients_of(context):
    """osclients of the context's first user (what the users see), else of its admin."""
    from rally_openstack.common import osclients

    users = context.get("users") or []
    if users:
        return osclients.Clients(users[0]["credential"])
    if context.get("admin"):
        return osclients.Clients(context["admin"]["credential"])
    raise ResourceError("no credential to look the kind's resources up with")
