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
"""

import docker.errors
from oslo_concurrency import lockutils
from oslo_log import log as logging

from nova import exception

LOG = logging.getLogger(__name__)

TAG = 'latest'


def cache_ref(repository, image_id):
    return '%s/%s:%s' % (repository, image_id.lower(), TAG)


def check_image_meta(image_meta):
    """Refuse images that are not ``docker save`` tarballs."""
    image_id = getattr(image_meta, 'id', None)
    fmt = (image_meta.container_format
           if image_meta.obj_attr_is_set('container_format') else None)
    if fmt != 'docker':
        raise exception.ImageUnacceptable(
            image_id=image_id,
            reason='container_format is %r; the Docker driver boots only '
                   'images with container_format=docker (a docker save '
                   'tarball)' % fmt)
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


class ImageCache(object):
    def __init__(self, client, repository, fetch=glance_chunks):
        self._client = client
        self._repository = repository
        self._fetch = fetch

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

    def remove(self, image_id):
        """Drop a cached image (containers still using it keep it)."""
        try:
            self._client.images.remove(self.ref(image_id), noprune=False)
        except (docker.errors.ImageNotFound, docker.errors.APIError) as e:
            LOG.debug('Not removing cached image %s: %s', image_id, e)
