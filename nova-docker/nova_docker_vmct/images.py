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
"""Glance images in the Docker engine: loaded once, cached by image id.

A Glance image for this driver has ``container_format=docker`` and holds a
``docker save`` tarball. It is streamed into ``docker load`` and tagged
``<[docker]image_repository>/<glance image id>:latest``; later boots of the
same image find the tag and load nothing.

Nova's image cache manager (``manage_image_cache``, every ``[image_cache]
manager_interval`` seconds) prunes the cache: see ``ImageCache.prune``.
"""

import collections
import time

import docker.errors
from oslo_concurrency import lockutils
from oslo_log import log as logging
from oslo_utils import uuidutils

from nova import exception

from nova_docker_vmct import container

LOG = logging.getLogger(__name__)

TAG = 'latest'

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
CachedImage.__doc__ = """A cache tag: Glance id, Docker reference, the Docker
image (docker.models.images.Image, possibly shared by several tags) and
when it was last tagged (seconds since the epoch, None if unknown)."""


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


class ImageCache(object):
    def __init__(self, client, repository, fetch=glance_chunks,
                 exists=glance_image_exists):
        self._client = client
        self._repository = repository
        self._fetch = fetch
        self._exists = exists
        self._ensured = {}      # image id -> time.monotonic() of ensure()

    def ref(self, image_id):
        return cache_ref(self._repository, image_id)

    def cached(self, image_id):
        try:
            self._client.images.get(self.ref(image_id))
            return True
        except docker.errors.ImageNotFound:
            return False

    def ensure(self, context, image_meta):
        """The Docker reference of the image, loading it when missing."""
        check_image_meta(image_meta)
        image_id = image_meta.id
        ref = self.ref(image_id)
        self._ensured[image_id.lower()] = time.monotonic()
        if self.cached(image_id):
            return ref
        with lockutils.lock('docker-image-%s' % image_id):
            if self.cached(image_id):
                return ref
            LOG.info('Loading Glance image %s into Docker', image_id)
            try:
                loaded = self._client.images.load(
                    self._fetch(context, image_id))
            except Exception as e:
                raise exception.ImageUnacceptable(
                    image_id=image_id,
                    reason='docker load failed: %s' % e)
            if not loaded:
                raise exception.ImageUnacceptable(
                    image_id=image_id,
                    reason='docker load found no image in the tarball')
            if len(loaded) > 1:
                LOG.warning('Glance image %s holds %d Docker images; '
                            'using the first', image_id, len(loaded))
            repository, tag = ref.rsplit(':', 1)
            loaded[0].tag(repository, tag)
        return ref

    def remove(self, image_id, reason='asked to'):
        """Drop a cached image's tag; False when it is gone or still used.

        Containers still using it keep it (the engine refuses, 409).
        """
        ref = self.ref(image_id)
        try:
            self._client.images.remove(ref, noprune=False)
        except docker.errors.ImageNotFound:
            LOG.debug('Cached image %s is already gone', ref)
            return False
        except docker.errors.APIError as e:
            # 409: a container created since the listing uses it
            log = LOG.debug if e.status_code == 409 else LOG.warning
            log('Not removing cached image %(ref)s (%(reason)s): %(err)s',
                {'ref': ref, 'reason': reason, 'err': e})
            return False
        self._ensured.pop(image_id, None)
        LOG.info('Removed cached image %(ref)s of Glance image %(id)s: '
                 '%(reason)s', {'ref': ref, 'id': image_id, 'reason': reason})
        return True

    def cached_images(self):
        """Every cache tag of the repository in the engine (CachedImage)."""
        found = []
        for image in self._client.images.list(
                filters={'reference': '%s/*' % self._repository}):
            tagged_at = container.parse_docker_time(
                (image.attrs.get('Metadata') or {}).get('LastTagTime'))
            for ref in image.tags:
                image_id = parse_cache_ref(self._repository, ref)
                if image_id:
                    found.append(CachedImage(image_id, ref, image,
                                             tagged_at))
        return found

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
        or earlier, and younger ones whose Glance image is gone.

        ``context``: what Glance is asked with (the ``exists`` callable);
        ``now``: seconds since the epoch (default: time.time()). Removing
        a tag that other tags share only untags the Docker image. Returns
        {Glance image id: reason} of the removed tags.
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

        for cached in self.cached_images():
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
