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
"""Glance images in the Docker engine: loaded once, known by content.

A Glance image for this driver has ``container_format=docker`` and holds a
``docker save`` tarball. A tenant uploads it, so nothing it says about
names is believed: it is streamed into ``docker load`` through
``image_tar.filtered`` (which removes the names a tarball gives images), the
content id the engine reports (the digest of the image's config, which
covers its layers) is tagged ``<[docker]image_repository>/<glance image
id>:latest`` by the driver, and containers are created from that content
id, never from a tag: a tag moved later by anyone cannot change what an
instance runs.

Which content id a Glance image was loaded as is recorded in
``<instances_path>/_docker_images.json`` (``RECORD_FILE``; it outlives
restarts of nova-compute and of dockerd). A later boot trusts the cache
only when that record exists, the engine has the recorded content id, and
the tag, if there, points at it; otherwise the image is loaded from Glance
again (once for a tag an older driver left, which has no record). Hosts
that share ``instances_path`` share the record: the ids are the same on
each (the content of a Glance image does not change), and a host where an
entry does not hold loads the image again.

Nova's image cache manager (``manage_image_cache``, every ``[image_cache]
manager_interval`` seconds) prunes the cache: see ``ImageCache.prune``.
"""

import collections
import json
import os
import re
import tempfile
import time

import docker.errors
from oslo_concurrency import lockutils
from oslo_log import log as logging
from oslo_utils import excutils
from oslo_utils import fileutils
from oslo_utils import uuidutils

from nova import exception

from nova_docker_vmct import container
from nova_docker_vmct import image_tar

LOG = logging.getLogger(__name__)

TAG = 'latest'
RECORD_FILE = '_docker_images.json'
CONTENT_ID = re.compile(r'^sha256:[0-9a-f]{64}$')

# An image ensure() handed out is in use before a container shows it: the
# spawn or rescue creates the container after it has the network info
# (Neutron), which can take minutes. Instances cover their own image_ref,
# not a rescue image or the snapshot an unshelve boots.
ENSURE_GRACE = 3600


def cache_ref(repository, image_id):
    return '%s/%s:%s' % (repository, image_id.lower(), TAG)


def parse_cache_ref(repository, ref):
    """The Glance image id of a cache tag of ``repository``, else None.

    Only ``<repository>/<uuid>:latest``: other images that happen to sit
    under the same repository are never the cache's to remove.
    """
    name, sep, tag = ref.rpartition(':')
    prefix = repository + '/'
    if not sep or tag != TAG or not name.startswith(prefix):
        return None
    image_id = name[len(prefix):]
    return image_id if uuidutils.is_uuid_like(image_id) else None


CachedImage = collections.namedtuple(
    'CachedImage', ['image_id', 'ref', 'image', 'tagged_at'])
CachedImage.__doc__ = """A cached Glance image: its id, its cache tag, the
Docker image (docker.models.images.Image, possibly shared by several tags)
and when that was last tagged (seconds since the epoch, None if unknown)."""


def removal_reason(in_use, age, min_age, glance_exists):
    """Why a cached image goes (for the log), or None to keep it.

    in_use: an instance or a container uses it; age: seconds since it was
    last tagged (loaded, or last seen in use), None if unknown; min_age:
    ``[image_cache]remove_unused_original_minimum_age_seconds``;
    glance_exists: callable answering whether Glance still has the image,
    asked only for an unused image that is not old enough (one Glance call).
    """
    if in_use:
        return None
    if age is not None and age >= min_age:
        return 'unused, last tagged %d s ago (minimum age %d s)' % (
            age, min_age)
    if not glance_exists():
        # deleted in Glance (a snapshot once its test or user is done with
        # it): nothing can boot it again, so waiting serves nobody
        return 'unused and deleted in Glance'
    return None


def not_docker_reason(image_meta):
    """Why the image is no ``docker save`` tarball; None when it is one."""
    fmt = (image_meta.container_format
           if image_meta.obj_attr_is_set('container_format') else None)
    if fmt == 'docker':
        return None
    return ('image %s has container_format %r; the Docker driver boots only '
            'images with container_format=docker (a docker save tarball)'
            % (getattr(image_meta, 'id', None), fmt))


def check_image_meta(image_meta):
    """Refuse images that are not ``docker save`` tarballs."""
    image_id = getattr(image_meta, 'id', None)
    reason = not_docker_reason(image_meta)
    if reason:
        raise exception.ImageUnacceptable(image_id=image_id, reason=reason)
    if not image_id:
        raise exception.ImageUnacceptable(image_id=image_id,
                                          reason='image without an id')


def glance_chunks(context, image_id):
    """Iterator over the bytes of a Glance image (streamed, not stored).

    glanceclient checks the image's hash when the iteration ends, so a
    corrupt download makes ``docker load`` fail instead of loading it.
    """
    # nova.image.glance.API (nova.image itself exports nothing)
    from nova.image import glance
    for chunk in glance.API().download(context, image_id):
        yield chunk


def glance_image_exists(context, image_id):
    """False when Glance no longer has the image (deleted), else True.

    Other errors (Glance down, a context Glance refuses) propagate: the
    caller cannot tell then and keeps the image.
    """
    from nova.image import glance
    try:
        glance.API().get(context, image_id, show_deleted=False)
    except exception.ImageNotFound:
        return False
    return True


class ContentRecord(object):
    """Glance image id -> Docker content id, in a JSON file.

    ``{"images": {"<glance image id>": "sha256:<hex>"}}``, written whole to
    a temporary file renamed over the old one (a reader sees either), under
    a lock of this process. Entries other than a Glance id and a content id
    are ignored; a file that is not JSON counts as empty (each image loads
    from Glance again once) and is replaced at the next change.
    """

    def __init__(self, path):
        self.path = path

    def load(self):
        """{lower-case Glance id: content id}."""
        try:
            with open(self.path) as f:
                data = json.load(f)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            LOG.warning('Ignoring the image record %(path)s (%(err)s): '
                        'images load from Glance again',
                        {'path': self.path, 'err': e})
            return {}
        images = data.get('images') if isinstance(data, dict) else None
        if not isinstance(images, dict):
            LOG.warning('Ignoring the image record %s: no "images" object',
                        self.path)
            return {}
        return {k.lower(): v for k, v in images.items()
                if uuidutils.is_uuid_like(k) and isinstance(v, str) and
                CONTENT_ID.match(v)}

    def get(self, image_id):
        return self.load().get(image_id.lower())

    def set(self, image_id, content_id):
        with self._lock():
            images = self.load()
            images[image_id.lower()] = content_id
            self._write(images)

    def discard(self, image_id, content_id=None):
        """Forget an image; with ``content_id`` only while it maps to it."""
        with self._lock():
            images = self.load()
            found = images.get(image_id.lower())
            if found is None or content_id not in (None, found):
                return
            del images[image_id.lower()]
            self._write(images)

    def _lock(self):
        return lockutils.lock('docker-image-record-%s' % self.path)

    def _write(self, images):
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix='.%s.' % os.path.basename(self.path), dir=directory)
        try:
            with os.fdopen(fd, 'w') as f:
                json.dump({'images': images}, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except Exception:
            with excutils.save_and_reraise_exception():
                fileutils.delete_if_exists(tmp)


def record_path(instances_path):
    return os.path.join(instances_path, RECORD_FILE)


def _tag_time(image):
    return container.parse_docker_time(
        (image.attrs.get('Metadata') or {}).get('LastTagTime'))


class ImageCache(object):
    def __init__(self, client, repository, record_path,
                 fetch=glance_chunks, exists=glance_image_exists):
        self._client = client
        self._repository = repository
        self._record = ContentRecord(record_path)
        self._fetch = fetch
        self._exists = exists
        self._ensured = {}      # image id -> time.monotonic() of ensure()

    def ref(self, image_id):
        return cache_ref(self._repository, image_id)

    def ensure(self, context, image_meta):
        """The content id (``sha256:...``) to create containers from.

        The Glance image is loaded when the cache cannot be trusted.
        """
        check_image_meta(image_meta)
        image_id = image_meta.id
        self._ensured[image_id.lower()] = time.monotonic()
        content = self._trusted(image_id)
        if content:
            return content
        with lockutils.lock('docker-image-%s' % image_id):
            content = self._trusted(image_id)
            if content:
                return content
            content = self._load(context, image_id)
            self._tag(image_id, content)
            self._record.set(image_id, content)
        return content

    def _trusted(self, image_id):
        """The recorded content id if the engine has it, else None.

        The cache tag is set again when it is gone or names another image
        (a warning then: someone moved it).
        """
        content = self._record.get(image_id)
        if content is None or not self._in_engine(content):
            return None
        tagged = self._tagged(image_id)
        if tagged != content:
            if tagged:
                LOG.warning('Cache tag %(ref)s named %(other)s, not %(id)s '
                            'that Glance image %(image)s was loaded as; '
                            'tagging %(id)s again',
                            {'ref': self.ref(image_id), 'other': tagged,
                             'id': content, 'image': image_id})
            self._tag(image_id, content)
        return content

    def _in_engine(self, content):
        try:
            self._client.images.get(content)
            return True
        except docker.errors.ImageNotFound:
            return False

    def _tagged(self, image_id):
        """The id of the image the cache tag names, None without tag."""
        try:
            return self._client.images.get(self.ref(image_id)).id
        except docker.errors.ImageNotFound:
            return None

    def _tag(self, image_id, content):
        repository, tag = self.ref(image_id).rsplit(':', 1)
        self._client.api.tag(content, repository, tag)

    def _load(self, context, image_id):
        """docker load of the Glance image, filtered; its content id."""
        LOG.info('Loading Glance image %s into Docker', image_id)
        try:
            loaded = self._client.images.load(
                image_tar.filtered(self._fetch(context, image_id)))
        except image_tar.Refused as e:
            raise exception.ImageUnacceptable(
                image_id=image_id,
                reason='not loaded, its docker save tarball is refused: %s'
                       % e)
        except Exception as e:
            raise exception.ImageUnacceptable(
                image_id=image_id, reason='docker load failed: %s' % e)
        if not loaded:
            raise exception.ImageUnacceptable(
                image_id=image_id,
                reason='docker load found no image in the tarball')
        if len(loaded) > 1:
            LOG.warning('Glance image %s holds %d Docker images; '
                        'using the first', image_id, len(loaded))
        content = loaded[0].id
        if not CONTENT_ID.match(content or ''):
            raise exception.ImageUnacceptable(
                image_id=image_id,
                reason='docker load reported %r, no content id' % content)
        return content

    def remove(self, image_id, reason='asked to'):
        """Drop a cached image; False when it is gone or still used.

        The cache tag goes (and the image with it unless another tag or a
        container keeps it); without a tag, the recorded image goes by its
        content id when no tag names it. Containers still using it keep it
        (the engine refuses, 409), and its record with it.
        """
        target = self._held(image_id)
        if target is None:
            self._record.discard(image_id)
            LOG.debug('Cached image %s is already gone', self.ref(image_id))
            return False
        try:
            self._client.images.remove(target, noprune=False)
        except docker.errors.ImageNotFound:
            self._record.discard(image_id)
            LOG.debug('Cached image %s is already gone', target)
            return False
        except docker.errors.APIError as e:
            # 409: a container created since the listing uses it
            log = LOG.debug if e.status_code == 409 else LOG.warning
            log('Not removing cached image %(ref)s (%(reason)s): %(err)s',
                {'ref': target, 'reason': reason, 'err': e})
            return False
        self._record.discard(image_id)
        self._ensured.pop(image_id.lower(), None)
        LOG.info('Removed cached image %(ref)s of Glance image %(id)s: '
                 '%(reason)s', {'ref': target, 'id': image_id,
                                'reason': reason})
        return True

    def _held(self, image_id):
        """What remove() removes, None when nothing.

        The cache tag, else the recorded content id of an image no tag
        names.
        """
        if self._tagged(image_id):
            return self.ref(image_id)
        content = self._record.get(image_id)
        if content is None:
            return None
        try:
            image = self._client.images.get(content)
        except docker.errors.ImageNotFound:
            return None
        return None if image.tags else content

    def cached_images(self):
        """What the cache holds, a CachedImage per Glance id.

        The recorded images the engine has (tagged or not: ``image`` is the
        recorded one even when the tag names another), and the cache tags
        without a record (an older driver's): each is the cache's to prune.
        """
        found = {}
        for image in self._client.images.list(
                filters={'reference': '%s/*' % self._repository}):
            for ref in image.tags:
                image_id = parse_cache_ref(self._repository, ref)
                if image_id:
                    found[image_id] = CachedImage(image_id, ref, image,
                                                  _tag_time(image))
        for image_id, content in self._record.load().items():
            if image_id in found and found[image_id].image.id == content:
                continue
            try:
                image = self._client.images.get(content)
            except docker.errors.ImageNotFound:
                continue
            found[image_id] = CachedImage(image_id, self.ref(image_id),
                                          image, _tag_time(image))
        return list(found.values())

    def _forget_gone(self, listed):
        """Drop the record of images the engine lost.

        Removed by someone else (docker rmi) or with a new /var/lib/docker:
        nothing of them is left to prune.
        """
        for image_id, content in self._record.load().items():
            if image_id not in listed and not self._in_engine(content):
                self._record.discard(image_id, content)

    def _container_images(self):
        """Image ids and references of all containers, stopped ones too."""
        used = set()
        for c in self._client.api.containers(all=True):
            used.update(v for v in (c.get('ImageID'), c.get('Image')) if v)
        return used

    def prune(self, context, in_use, min_age, now=None):
        """Remove the cached images nothing uses and nobody will miss.

        Kept: images whose Glance id is in ``in_use`` (the instances' image
        refs), images of any container of the engine, stopped ones too
        (the engine would refuse to remove their last tag), images ensure()
        handed out less than ENSURE_GRACE seconds ago. Kept images in use
        are tagged again, so their LastTagTime is the last time they were
        seen in use (as Nova's libvirt cache manager touches the base files
        it keeps).
        Removed, of the others: those last tagged ``min_age`` seconds ago
        or earlier, and younger ones whose Glance image is gone; with them
        their record.

        ``context``: what Glance is asked with (the ``exists`` callable);
        ``now``: seconds since the epoch (default: time.time()). Removing
        a tag that other tags share only untags the Docker image. Returns
        {Glance image id: reason} of the removed images.
        """
        now = time.time() if now is None else now
        in_use = {i.lower() for i in in_use if i}
        used = self._container_images()
        recent = time.monotonic() - ENSURE_GRACE
        unknown = []
        removed = {}

        def exists(cached):
            try:
                return self._exists(context, cached.image_id)
            except Exception as e:
                LOG.debug('Cannot ask Glance about image %s: %s',
                          cached.image_id, e)
                unknown.append((cached.image_id, e))
                return True

        listed = self.cached_images()
        self._forget_gone({cached.image_id for cached in listed})
        for cached in listed:
            busy = (cached.image_id in in_use or cached.ref in used or
                    cached.image.id in used)
            if busy:
                self._mark_in_use(cached)
            handed_out = self._ensured.get(cached.image_id)
            age = None if cached.tagged_at is None else now - cached.tagged_at
            reason = removal_reason(
                busy or (handed_out is not None and handed_out > recent),
                age, min_age, lambda: exists(cached))
            if reason and self.remove(cached.image_id, reason):
                removed[cached.image_id] = reason
        if unknown:
            LOG.warning('Glance did not answer for %d cached images (%s; '
                        'first: %s): kept unless old enough', len(unknown),
                        ', '.join(i for i, _ in unknown), unknown[0][1])
        return removed

    def _mark_in_use(self, cached):
        repository, tag = cached.ref.rsplit(':', 1)
        try:
            cached.image.tag(repository, tag)
        except docker.errors.APIError as e:
            LOG.debug('Cannot tag %s again: %s', cached.ref, e)
