"""A tenant's docker save tarball cannot take another project's image.

Real engine, real spawns. ``docker load`` applies the names a tarball
carries and moves a tag that exists: a tarball whose RepoTags name the
cache tag of another project's Glance image would make that image's later
boots run the uploader's files, were the tags believed.
"""

import io
import json
import os
import tarfile
import uuid

from nova import context as nova_context
from nova_docker_vmct import image_tar
from nova_docker_vmct import images

from tests.functional import base


def owner_tar(owner, mtime=1767225600):
    """A tar of the file /owner holding ``owner``."""
    out = io.BytesIO()
    data = owner.encode() + b'\n'
    with tarfile.open(fileobj=out, mode='w') as tar:
        info = tarfile.TarInfo('owner')
        info.size = len(data)
        info.mtime = mtime
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def named(src, dst, repo_tags):
    """Copy of the docker save tarball ``src`` naming ``repo_tags``.

    In manifest.json and in the legacy repositories file, as docker save
    writes them for a tagged image.
    """
    with tarfile.open(src) as tar, tarfile.open(dst, 'w') as out:
        manifest = json.load(tar.extractfile('manifest.json'))
        manifest[0]['RepoTags'] = repo_tags
        top = manifest[0]['Layers'][-1].split('/')[0]
        repositories = {}
        for ref in repo_tags:
            name, tag = ref.rsplit(':', 1)
            repositories.setdefault(name, {})[tag] = top
        for member in tar:
            if member.name == 'manifest.json':
                continue
            out.addfile(member, tar.extractfile(member)
                        if member.isreg() else None)
        for name, obj in [('manifest.json', manifest),
                          ('repositories', repositories)]:
            data = json.dumps(obj).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))


class ImageTestCase(base.DriverTestCase):
    """Glance images the test builds on the workload image."""

    def setUp(self):
        self.derived = []
        # after the base class removed the tags (cleanups run last first):
        # an image that lost its tags (a failing test) goes by its id
        self.addCleanup(self._remove_derived)
        super().setUp()
        self.glance = {}        # Glance id -> docker save tarball (path)
        self.fetched = []       # (project, Glance id)

        def fetch(ctx, image_id):
            self.fetched.append((ctx.project_id, image_id))
            return base.file_chunks(self.glance[image_id])
        self.driver.image_fetch = fetch
        # the workload image, untagged but for a tag of this test's own
        # (another test's cleanup may remove the last tag of it otherwise)
        self.base_id = self.docker.images.load(image_tar.filtered(
            base.file_chunks(self.image_tar)))[0].id
        self.docker.api.tag(self.base_id, self.repository + '/base',
                            'latest')

    def derive(self, parent, name, layer):
        """An image of ``parent`` plus the files of the tar ``layer``."""
        c = self.docker.containers.create(
            parent, name='%s-build-%s' % (self.host, name),
            labels={'nova.host': self.host})
        try:
            c.put_archive('/', layer)
            image_id = c.commit(repository='%s/build-%s'
                                % (self.repository, name), tag='latest').id
        finally:
            c.remove(force=True)
        self.derived.insert(0, image_id)     # children first
        return image_id

    def _remove_derived(self):
        for image_id in self.derived:
            try:
                if not self.docker.images.get(image_id).tags:
                    self.docker.images.remove(image_id)
            except base.docker.errors.APIError:
                pass    # gone already

    def save(self, image_id, name):
        """docker save by id (no names), as a file in the test's tmp."""
        path = os.path.join(self.tmp, name + '.tar')
        with open(path, 'wb') as f:
            for chunk in self.docker.api.get_image(image_id):
                f.write(chunk)
        return path

    def forget(self, *names):
        """Remove the build tags: only what the driver loads remains."""
        for name in names:
            self.docker.images.remove('%s/build-%s:latest'
                                      % (self.repository, name))

    def upload(self, path):
        image_id = str(uuid.uuid4())
        self.glance[image_id] = path
        return image_id

    def boot(self, ctx, image_id, n):
        """Spawn an instance of ``ctx``'s project at 198.51.100.<n>."""
        address = '198.51.100.%d' % n
        inst, nw = self.make_instance(address=address,
                                      mac='fa:16:3e:00:00:%02x' % n,
                                      project_id=ctx.project_id)
        self.driver.spawn(ctx, inst, base.helpers.image_meta(image_id), [],
                          None, {}, nw)
        self.addCleanup(self._destroy_quietly, inst, nw)
        self.wait_ssh(address)
        return inst, address


class TestImageIsolation(ImageTestCase):

    def test_a_tarball_naming_another_projects_cache_tag_changes_nothing(
            self):
        project_a = nova_context.RequestContext('user-a', 'project-a',
                                                is_admin=False)
        project_b = nova_context.RequestContext('user-b', 'project-b',
                                                is_admin=False)
        a_tar = self.save(self.derive(self.base_id, 'a', owner_tar('A')),
                          'a')
        b_saved = self.save(self.derive(self.base_id, 'b', owner_tar('B')),
                            'b-by-id')
        self.forget('a', 'b')
        image_a = self.upload(a_tar)
        a_ref = images.cache_ref(self.repository, image_a)
        # project B's image: its tarball names A's cache tag
        b_tar = os.path.join(self.tmp, 'b.tar')
        named(b_saved, b_tar, [a_ref])
        image_b = self.upload(b_tar)

        first, address = self.boot(project_a, image_a, 81)
        a_content = self.container(first)['Image']
        self.assertEqual('A', self.ssh(address, 'cat', '/owner').stdout
                         .strip())

        second, address = self.boot(project_b, image_b, 82)
        self.assertEqual('B', self.ssh(address, 'cat', '/owner').stdout
                         .strip())
        b_content = self.container(second)['Image']
        self.assertNotEqual(a_content, b_content)

        # project A boots its image again: A's files, from A's content
        third, address = self.boot(project_a, image_a, 83)
        self.assertEqual('A', self.ssh(address, 'cat', '/owner').stdout
                         .strip())
        self.assertEqual(a_content, self.container(third)['Image'])
        self.assertEqual(a_content, self.docker.images.get(a_ref).id)
        self.assertEqual([a_ref], self.docker.images.get(a_content).tags)
        self.assertEqual(
            [images.cache_ref(self.repository, image_b)],
            self.docker.images.get(b_content).tags)
        self.assertEqual([('project-a', image_a), ('project-b', image_b)],
                         self.fetched)


class TestDockerSaveLayout(ImageTestCase):

    def test_a_layer_saved_twice_is_a_symlink_and_loads(self):
        """docker save links a layer an image holds twice.

        ``<v1 id>/layer.tar -> ../<other v1 id>/layer.tar``: the filter
        passes it, the engine loads it through the link.
        """
        once = self.derive(self.base_id, 'once', owner_tar('X'))
        twice = self.derive(once, 'twice', owner_tar('X'))
        path = self.save(twice, 'twice')
        self.forget('twice', 'once')
        with tarfile.open(path) as tar:
            links = [m for m in tar if m.issym()]
        self.assertEqual(1, len(links))
        self.assertTrue(links[0].linkname.startswith('../'))
        image_id = self.upload(path)
        content = self.driver.image_cache.ensure(
            self.ctx, base.helpers.image_meta(image_id))
        self.assertEqual(twice, content)
        self.assertEqual([images.cache_ref(self.repository, image_id)],
                         self.docker.images.get(content).tags)
