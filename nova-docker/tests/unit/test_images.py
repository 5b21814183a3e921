"""The image cache against the fake engine: loading by content, the
record of content ids, pruning (ImageCache.prune)."""

import json
import logging
import os
import uuid

import docker.errors
import fixtures
import testtools

from nova import exception
from nova_docker_vmct import images

from tests import helpers
from tests.unit import fake_docker

DAY = 24 * 3600
NOW = 1767225600.0 + 30 * DAY


class TestRemovalReason(testtools.TestCase):
    """The decision alone: no engine, Glance a callable."""

    def setUp(self):
        super().setUp()
        self.asked = []

    def glance(self, exists):
        def ask():
            self.asked.append(exists)
            return exists
        return ask

    def test_in_use_is_kept_whatever_glance_and_age_say(self):
        self.assertIsNone(images.removal_reason(True, 10 * DAY, DAY,
                                                self.glance(False)))
        self.assertEqual([], self.asked)

    def test_old_enough_goes_without_asking_glance(self):
        reason = images.removal_reason(False, DAY, DAY, self.glance(True))
        self.assertEqual('unused, last tagged 86400 s ago (minimum age '
                         '86400 s)', reason)
        self.assertEqual([], self.asked)

    def test_young_goes_only_when_glance_lost_it(self):
        self.assertIsNone(images.removal_reason(False, 60, DAY,
                                                self.glance(True)))
        self.assertEqual('unused and deleted in Glance',
                         images.removal_reason(False, 60, DAY,
                                               self.glance(False)))
        self.assertEqual([True, False], self.asked)

    def test_unknown_age_goes_only_when_glance_lost_it(self):
        self.assertIsNone(images.removal_reason(False, None, 0,
                                                self.glance(True)))
        self.assertIsNotNone(images.removal_reason(False, None, 0,
                                                   self.glance(False)))


class TestParseCacheRef(testtools.TestCase):

    def test_only_uuid_latest_tags_of_the_repository(self):
        image_id = str(uuid.uuid4())
        self.assertEqual(image_id, images.parse_cache_ref(
            'glance', images.cache_ref('glance', image_id)))
        for ref in ['glance/%s:v1' % image_id,
                    'other/%s:latest' % image_id,
                    'glance/not-a-uuid:latest',
                    'glance/sub/%s:latest' % image_id,
                    'glanceX/%s:latest' % image_id,
                    'vmct-workload:latest']:
            self.assertIsNone(images.parse_cache_ref('glance', ref), ref)
        self.assertEqual(image_id, images.parse_cache_ref(
            'localhost:5000/glance', 'localhost:5000/glance/%s:latest'
            % image_id))


class PruneTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.client = fake_docker.FakeDockerClient()
        self.gone = set()       # Glance ids Glance no longer has
        self.asked = []
        self.record = os.path.join(
            self.useFixture(fixtures.TempDir()).path, images.RECORD_FILE)
        self.cache = images.ImageCache(self.client, 'glance', self.record,
                                       exists=self.exists)
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct', level=logging.DEBUG,
            format='%(levelname)s %(message)s'))

    def exists(self, context, image_id):
        self.asked.append((context, image_id))
        return image_id not in self.gone

    def cached(self, age, docker_id=None, gone=False):
        """A cache tag last tagged ``age`` seconds before NOW."""
        image_id = str(uuid.uuid4())
        docker_id = docker_id or 'sha256:%s' % uuid.uuid4().hex
        self.client.images.now = NOW - age
        fake_docker.FakeImage(self.client, docker_id).tag(
            'glance/%s' % image_id, 'latest')
        if gone:
            self.gone.add(image_id)
        return image_id

    def tags(self):
        return set(self.client.images.tags)

    def container(self, image):
        self.client.containers.create(image=image,
                                      name='c-%s' % uuid.uuid4().hex)

    def prune(self, in_use=(), min_age=DAY):
        return self.cache.prune('ctx', in_use, min_age, now=NOW)


class TestPrune(PruneTestCase):

    def test_glance_gone_and_unused_is_removed(self):
        gone = self.cached(60, gone=True)
        self.assertEqual({gone: 'unused and deleted in Glance'},
                         self.prune())
        self.assertEqual(set(), self.tags())
        self.assertEqual([('ctx', gone)], self.asked)
        self.assertIn('INFO Removed cached image glance/%s:latest of '
                      'Glance image %s: unused and deleted in Glance'
                      % (gone, gone), self.log.output)

    def test_glance_gone_but_used_by_an_instance_is_kept(self):
        used = self.cached(60, gone=True)
        self.assertEqual({}, self.prune(in_use=[used.upper(), None]))
        self.assertIn(images.cache_ref('glance', used), self.tags())
        self.assertEqual([], self.asked)

    def test_glance_gone_but_used_by_a_stopped_container_is_kept(self):
        by_tag = self.cached(60, gone=True)
        self.container(images.cache_ref('glance', by_tag))
        # a container of the same Docker image under another tag
        shared = self.cached(60, gone=True, docker_id='sha256:shared')
        self.client.images.tags['vmct-workload:latest'] = 'sha256:shared'
        self.container('vmct-workload:latest')
        self.assertEqual({}, self.prune())
        self.assertLessEqual({images.cache_ref('glance', by_tag),
                              images.cache_ref('glance', shared)},
                             self.tags())

    def test_glance_present_and_young_is_kept(self):
        young = self.cached(DAY - 60)
        self.assertEqual({}, self.prune())
        self.assertIn(images.cache_ref('glance', young), self.tags())
        self.assertEqual([('ctx', young)], self.asked)

    def test_glance_present_and_old_is_removed(self):
        old = self.cached(DAY + 60)
        self.assertEqual({old: 'unused, last tagged 86460 s ago (minimum '
                               'age 86400 s)'}, self.prune())
        self.assertEqual(set(), self.tags())
        self.assertEqual([], self.asked)     # no Glance call needed

    def test_old_but_used_is_kept_and_tagged_again(self):
        old = self.cached(10 * DAY)
        ref = images.cache_ref('glance', old)
        self.client.images.now = NOW
        self.assertEqual({}, self.prune(in_use=[old]))
        self.assertEqual([ref], self.client.images.tagged[1:])
        # LastTagTime is now the last time it was seen in use
        self.assertEqual(NOW, self.client.images.tag_times[
            self.client.images.tags[ref]])
        self.assertEqual({}, self.prune())
        self.assertEqual({old: 'unused, last tagged 86400 s ago (minimum '
                               'age 86400 s)'},
                         self.cache.prune('ctx', [], DAY, now=NOW + DAY))

    def test_only_cache_tags_of_the_repository_are_considered(self):
        others = {'glance/not-a-uuid:latest', 'glance/%s:v2' % uuid.uuid4(),
                  'elsewhere/%s:latest' % uuid.uuid4(),
                  'vmct-workload:latest'}
        for ref in others:
            self.client.images.tags[ref] = 'sha256:%s' % uuid.uuid4().hex
        self.assertEqual({}, self.prune(min_age=0))
        self.assertEqual(others, self.tags())

    def test_a_tag_shared_with_another_image_only_untags(self):
        gone = self.cached(60, gone=True, docker_id='sha256:shared')
        kept = self.cached(60, docker_id='sha256:shared')
        self.assertEqual([gone], list(self.prune()))
        self.assertEqual({images.cache_ref('glance', kept)}, self.tags())

    def test_unknown_tag_time_goes_only_when_glance_lost_it(self):
        kept = self.cached(0)
        gone = self.cached(0, gone=True)
        self.client.images.tag_times.clear()     # 0001-01-01T00:00:00Z
        self.assertEqual([gone], list(self.prune(min_age=0)))
        self.assertEqual({images.cache_ref('glance', kept)}, self.tags())


class TestPruneErrors(PruneTestCase):

    def test_glance_errors_keep_young_images_and_warn_once(self):
        def fails(context, image_id):
            raise exception.ImageNotAuthorized(image_id=image_id)
        self.cache = images.ImageCache(self.client, 'glance', self.record,
                                       exists=fails)
        young = [self.cached(60), self.cached(120)]
        old = self.cached(2 * DAY)
        self.assertEqual([old], list(self.prune()))
        self.assertEqual({images.cache_ref('glance', i) for i in young},
                         self.tags())
        self.assertEqual(1, self.log.output.count(
            'WARNING Glance did not answer for 2 cached images'))

    def test_engine_refusals_are_logged_and_the_pass_goes_on(self):
        refused = self.cached(2 * DAY)
        failing = self.cached(2 * DAY)
        removed = self.cached(2 * DAY)
        conflict = docker.errors.APIError(
            'conflict', response=fake_docker.Response(409))
        self.client.images.refuse = {
            images.cache_ref('glance', refused): conflict,
            images.cache_ref('glance', failing): docker.errors.APIError(
                'boom', response=fake_docker.Response(500))}
        self.assertEqual([removed], list(self.prune()))
        # in use (409): expected, quietly; anything else: a warning
        self.assertIn('DEBUG Not removing cached image glance/%s:latest'
                      % refused, self.log.output)
        self.assertIn('WARNING Not removing cached image glance/%s:latest'
                      % failing, self.log.output)

    def test_a_container_created_after_the_listing_keeps_its_image(self):
        # the engine's own refusal (409) is the last word
        image_id = self.cached(2 * DAY)
        ref = images.cache_ref('glance', image_id)
        listed = self.cache.cached_images()
        self.container(ref)
        self.cache.cached_images = lambda: listed
        self.client.api.containers = lambda all=False: []
        self.assertEqual({}, self.prune())
        self.assertIn(ref, self.tags())
        self.assertIn('is using its referenced image', self.log.output)


class TestEnsuredImagesAreInUse(PruneTestCase):

    def test_an_image_handed_out_by_ensure_is_kept_for_a_while(self):
        saved = fake_docker.saved_image()
        self.cache = images.ImageCache(
            self.client, 'glance', self.record,
            fetch=lambda ctx, i: iter([saved.tarball]), exists=self.exists)
        image_id = str(uuid.uuid4())
        self.cache.ensure('ctx', helpers.image_meta(image_id))
        self.gone.add(image_id)
        self.assertEqual({}, self.prune())      # no container yet
        self.cache._ensured[image_id] -= images.ENSURE_GRACE + 1
        self.assertEqual([image_id], list(self.prune()))
        self.assertEqual({}, self.cache._ensured)


class EnsureTestCase(PruneTestCase):
    """ensure() with Glance images as tarballs the test makes."""

    def setUp(self):
        super().setUp()
        self.glance = {}        # Glance id -> docker save tarball
        self.fetched = []
        self.cache = self.restarted()

    def restarted(self):
        """A new ImageCache on the same engine and record (a restart)."""
        return images.ImageCache(self.client, 'glance', self.record,
                                 fetch=self.fetch, exists=self.exists)

    def fetch(self, context, image_id):
        self.fetched.append(image_id)
        data = self.glance[image_id]
        # as Glance streams it: in chunks
        return (data[i:i + 1000] for i in range(0, len(data), 1000))

    def upload(self, files=None, repo_tags=None):
        image_id = str(uuid.uuid4())
        saved = fake_docker.saved_image(files, repo_tags)
        self.glance[image_id] = saved.tarball
        return image_id, saved.content_id

    def ensure(self, image_id):
        return self.cache.ensure('ctx', helpers.image_meta(image_id))

    def recorded(self):
        with open(self.record) as f:
            return json.load(f)['images']


class TestEnsure(EnsureTestCase):

    def test_loaded_by_content_tagged_and_recorded(self):
        image_id, content = self.upload()
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual({images.cache_ref('glance', image_id): content},
                         self.client.images.tags)
        self.assertEqual({image_id: content}, self.recorded())
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual([image_id], self.fetched)

    def test_tarball_tags_are_not_applied(self):
        victim, victim_content = self.upload({'owner': b'A'})
        self.ensure(victim)
        # another project's tarball naming the victim's cache tag (and
        # some other name) in manifest.json and repositories
        attacker, content = self.upload(
            {'owner': b'B'}, repo_tags=[images.cache_ref('glance', victim),
                                        'vmct-workload:latest'])
        self.assertEqual(content, self.ensure(attacker))
        self.assertEqual({images.cache_ref('glance', victim): victim_content,
                          images.cache_ref('glance', attacker): content},
                         self.client.images.tags)
        self.assertEqual(victim_content, self.ensure(victim))
        self.assertEqual([victim, attacker], self.fetched)

    def test_the_unfiltered_load_would_have_moved_the_tag(self):
        # the fake engine applies tarball tags as Docker does
        victim, _ = self.upload({'owner': b'A'})
        self.ensure(victim)
        attacker, content = self.upload(
            {'owner': b'B'}, repo_tags=[images.cache_ref('glance', victim)])
        loaded = self.client.images.load(self.glance[attacker])
        self.assertEqual([content], [i.id for i in loaded])
        self.assertEqual(content, self.client.images.tags[
            images.cache_ref('glance', victim)])

    def test_record_survives_a_restart(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        self.cache = self.restarted()
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual([image_id], self.fetched)

    def test_a_moved_tag_is_set_again_without_loading(self):
        image_id, content = self.upload({'owner': b'A'})
        other, other_content = self.upload({'owner': b'B'})
        self.ensure(image_id)
        self.ensure(other)
        ref = images.cache_ref('glance', image_id)
        self.client.images.tags[ref] = other_content    # moved by someone
        self.cache = self.restarted()
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual(content, self.client.images.tags[ref])
        self.assertEqual([image_id, other], self.fetched)
        self.assertIn('WARNING Cache tag %s named %s, not %s' % (
            ref, other_content, content), self.log.output)

    def test_a_lost_tag_is_set_again_without_loading(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        del self.client.images.tags[images.cache_ref('glance', image_id)]
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual(content, self.client.images.tags[
            images.cache_ref('glance', image_id)])
        self.assertEqual([image_id], self.fetched)
        self.assertNotIn('WARNING', self.log.output)

    def test_a_tag_without_record_is_loaded_again(self):
        # an older driver's tag: whatever it names is not trusted
        image_id, content = self.upload()
        fake_docker.FakeImage(self.client, 'sha256:%s' % ('e' * 64)).tag(
            'glance/%s' % image_id, 'latest')
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual([image_id], self.fetched)
        self.assertEqual(content, self.client.images.tags[
            images.cache_ref('glance', image_id)])
        self.assertEqual({image_id: content}, self.recorded())

    def test_a_recorded_image_the_engine_lost_is_loaded_again(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        self.client.images.remove(images.cache_ref('glance', image_id))
        self.assertFalse(self.client.images.exists(content))
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual([image_id, image_id], self.fetched)

    def test_an_unreadable_record_loads_again_and_is_replaced(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        with open(self.record, 'w') as f:
            f.write('{not json')
        self.assertEqual(content, self.ensure(image_id))
        self.assertEqual([image_id, image_id], self.fetched)
        self.assertEqual({image_id: content}, self.recorded())
        self.assertIn('WARNING Ignoring the image record %s' % self.record,
                      self.log.output)

    def test_refused_tarball_names_the_entry(self):
        image_id = str(uuid.uuid4())
        self.glance[image_id] = fake_docker.tarball([
            ('a/../manifest.json', b'[]')])
        e = self.assertRaises(exception.ImageUnacceptable, self.ensure,
                              image_id)
        self.assertIn('its docker save tarball is refused: entry '
                      'a/../manifest.json has a .. component', str(e))
        self.assertEqual({}, self.client.images.tags)
        self.assertFalse(os.path.exists(self.record))

    def test_failed_load_is_unacceptable(self):
        image_id = str(uuid.uuid4())
        self.glance[image_id] = fake_docker.saved_image().tarball

        def broken(data):
            list(data)
            raise docker.errors.ImageLoadError('invalid diffID for layer 0')
        self.client.images.load = broken
        e = self.assertRaises(exception.ImageUnacceptable, self.ensure,
                              image_id)
        self.assertIn('docker load failed: invalid diffID', str(e))


class TestPruneRecorded(EnsureTestCase):
    """Pruning images ensure() loaded: the record goes with them."""

    def test_removed_image_leaves_the_record(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        self.cache._ensured.clear()
        self.gone.add(image_id)
        self.assertEqual([image_id], list(self.prune()))
        self.assertFalse(self.client.images.exists(content))
        self.assertEqual({}, self.recorded())

    def test_an_image_in_use_keeps_its_record(self):
        image_id, content = self.upload()
        self.container(self.ensure(image_id))   # by content id
        self.cache._ensured.clear()
        self.gone.add(image_id)
        self.assertEqual({}, self.prune())
        self.assertEqual({image_id: content}, self.recorded())

    def test_untagged_recorded_image_goes_by_its_content_id(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        self.cache._ensured.clear()
        self.gone.add(image_id)
        del self.client.images.tags[images.cache_ref('glance', image_id)]
        self.assertEqual([image_id], list(self.prune()))
        self.assertFalse(self.client.images.exists(content))
        self.assertIn('Removed cached image %s of Glance image %s'
                      % (content, image_id), self.log.output)

    def test_an_image_someone_else_tagged_stays(self):
        image_id, content = self.upload()
        self.ensure(image_id)
        self.cache._ensured.clear()
        self.gone.add(image_id)
        del self.client.images.tags[images.cache_ref('glance', image_id)]
        self.client.images.tags['vmct-workload:latest'] = content
        self.assertEqual({}, self.prune())
        self.assertEqual({'vmct-workload:latest': content},
                         self.client.images.tags)
        self.assertEqual({}, self.recorded())

    def test_records_of_images_the_engine_lost_are_forgotten(self):
        lost, _ = self.upload({'owner': b'A'})
        kept, content = self.upload({'owner': b'B'})
        self.ensure(lost)
        self.ensure(kept)
        self.client.images.remove(images.cache_ref('glance', lost))
        self.assertEqual({}, self.prune())
        self.assertEqual({kept: content}, self.recorded())


class TestContentRecord(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.record = images.ContentRecord(
            images.record_path(os.path.join(self.dir, 'instances')))
        self.log = self.useFixture(fixtures.FakeLogger(
            name='nova_docker_vmct', format='%(levelname)s %(message)s'))

    def test_written_whole_in_instances_path(self):
        image_id = str(uuid.uuid4())
        content = 'sha256:' + 'a' * 64
        self.record.set(image_id.upper(), content)
        self.assertEqual(content, self.record.get(image_id))
        self.assertEqual(['_docker_images.json'],
                         os.listdir(os.path.join(self.dir, 'instances')))
        with open(self.record.path) as f:
            self.assertEqual({'images': {image_id: content}}, json.load(f))

    def test_discard_only_what_it_still_maps_to(self):
        image_id = str(uuid.uuid4())
        self.record.set(image_id, 'sha256:' + 'a' * 64)
        self.record.discard(image_id, 'sha256:' + 'b' * 64)
        self.assertIsNotNone(self.record.get(image_id))
        self.record.discard(image_id)
        self.assertEqual({}, self.record.load())
        self.record.discard(image_id)       # gone already: nothing

    def test_entries_that_are_no_ids_are_ignored(self):
        image_id = str(uuid.uuid4())
        os.makedirs(os.path.dirname(self.record.path))
        with open(self.record.path, 'w') as f:
            json.dump({'images': {
                image_id: 'sha256:' + 'a' * 64,
                'vmct-workload': 'sha256:' + 'a' * 64,
                str(uuid.uuid4()): 'glance/x:latest',
                str(uuid.uuid4()): None}}, f)
        self.assertEqual({image_id: 'sha256:' + 'a' * 64},
                         self.record.load())

    def test_a_record_of_another_shape_counts_as_empty(self):
        os.makedirs(os.path.dirname(self.record.path))
        with open(self.record.path, 'w') as f:
            json.dump([1, 2], f)
        self.assertEqual({}, self.record.load())
        self.assertIn('no "images" object', self.log.output)


class TestGlanceImageExists(testtools.TestCase):

    def setUp(self):
        super().setUp()
        from nova.image import glance
        self.shown = []
        self.error = None
        test = self

        # A subclass of the real API: a method it does not have (show is
        # GlanceImageServiceV2's, not API's) fails here as in nova-compute.
        class FakeImageAPI(glance.API):
            def __init__(self):
                pass

            def get(self, context, id_or_uri, include_locations=False,
                    show_deleted=True):
                test.shown.append((context, id_or_uri, show_deleted))
                if test.error:
                    raise test.error
                return {'id': id_or_uri, 'status': 'active'}

        self.patch(glance, 'API', FakeImageAPI)

    def test_present(self):
        self.assertTrue(images.glance_image_exists('ctx', 'img-1'))
        # a deleted image (status deleted) counts as gone
        self.assertEqual([('ctx', 'img-1', False)], self.shown)

    def test_not_found_is_gone(self):
        self.error = exception.ImageNotFound(image_id='img-1')
        self.assertFalse(images.glance_image_exists('ctx', 'img-1'))

    def test_other_errors_are_the_callers(self):
        self.error = exception.ImageNotAuthorized(image_id='img-1')
        self.assertRaises(exception.ImageNotAuthorized,
                          images.glance_image_exists, 'ctx', 'img-1')
