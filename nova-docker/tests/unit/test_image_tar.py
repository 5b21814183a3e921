"""The docker save filter (image_tar) on tarballs made by hand."""

import gzip
import io
import json
import tarfile

import testtools

from nova_docker_vmct import image_tar

MANIFEST = json.dumps([{
    'Config': 'c0ffee.json', 'RepoTags': ['glance/victim:latest'],
    'Layers': ['l1/layer.tar']}]).encode()


def entry(name, data=b'', kind=tarfile.REGTYPE, linkname='', **pax):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.pax_headers = pax
    return info, data


def tarball(*entries, fmt=tarfile.PAX_FORMAT):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode='w', format=fmt) as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return out.getvalue()


def saved(*extra, manifest=MANIFEST):
    """The entries of a docker save tarball, then ``extra``."""
    return tarball(entry('c0ffee.json', b'{"rootfs": {}}'),
                   entry('l1/', kind=tarfile.DIRTYPE),
                   entry('l1/layer.tar', b'L' * 3000),
                   entry('manifest.json', manifest),
                   *extra)


def chunks(data, size=700):
    return (data[i:i + size] for i in range(0, len(data), size))


def filtered(data):
    return b''.join(image_tar.filtered(chunks(data)))


def members(data):
    """{name: (type, bytes or link target)} of a tarball."""
    found = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            found[m.name] = (m.type, tar.extractfile(m).read() if m.isreg()
                             else m.linkname)
    return found


def manifest_of(data):
    return json.loads(members(data)['manifest.json'][1])


class TestNames(testtools.TestCase):
    """What names an image is gone; everything else passes unchanged."""

    def test_repo_tags_are_null_and_the_rest_is_kept(self):
        out = members(filtered(saved()))
        self.assertEqual([{'Config': 'c0ffee.json', 'RepoTags': None,
                           'Layers': ['l1/layer.tar']}],
                         json.loads(out.pop('manifest.json')[1]))
        self.assertEqual({'c0ffee.json': (tarfile.REGTYPE,
                                          b'{"rootfs": {}}'),
                          'l1': (tarfile.DIRTYPE, ''),
                          'l1/layer.tar': (tarfile.REGTYPE, b'L' * 3000)},
                         out)

    def test_legacy_repositories_file_is_left_out(self):
        out = members(filtered(saved(entry(
            'repositories', b'{"glance/victim": {"latest": "l1"}}'))))
        self.assertNotIn('repositories', out)

    def test_keys_go_would_take_for_repo_tags_are_dropped(self):
        # Go's JSON decoder matches field names without regard to case,
        # and folds the long s and the Kelvin sign
        manifest = json.dumps([{
            'Config': 'c0ffee.json', 'Layers': ['l1/layer.tar'],
            'repotags': ['a:latest'], 'REPOTAGS': ['b:latest'],
            'RepoTag\u017f': ['c:latest'], 'Parent': 'sha256:' + 'a' * 64,
            'LayerSources': {}, 'Comment': 'x'}]).encode()
        self.assertEqual([{'Config': 'c0ffee.json',
                           'Layers': ['l1/layer.tar'],
                           'Parent': 'sha256:' + 'a' * 64,
                           'LayerSources': {}, 'RepoTags': None}],
                         manifest_of(filtered(saved(manifest=manifest))))

    def test_index_json_loses_its_name_annotations(self):
        index = {
            'schemaVersion': 2,
            'annotations': {'org.opencontainers.image.ref.name': 'x'},
            'manifests': [{
                'mediaType': 'application/vnd.oci.image.manifest.v1+json',
                'digest': 'sha256:' + 'b' * 64, 'size': 1,
                'annotations': {
                    'io.containerd.image.name': 'glance/victim:latest',
                    'org.opencontainers.image.ref.name': 'latest',
                    'org.opencontainers.image.created': '2026'}}],
            # other spellings Go's decoder would read as these fields
            'Manifests': [{'annotations': {
                'io.containerd.image.name': 'glance/victim:latest'}}],
        }
        out = members(filtered(saved(entry('index.json',
                                           json.dumps(index).encode()))))
        self.assertEqual({
            'schemaVersion': 2, 'annotations': {},
            'manifests': [{
                'mediaType': 'application/vnd.oci.image.manifest.v1+json',
                'digest': 'sha256:' + 'b' * 64, 'size': 1,
                'annotations': {
                    'org.opencontainers.image.created': '2026'}}]},
            json.loads(out['index.json'][1]))

    def test_a_control_file_named_in_a_pax_header_is_filtered(self):
        # the ustar name says "decoy", the pax path (what tar readers and
        # the engine use) manifest.json
        info, data = entry('decoy', MANIFEST, path='manifest.json')
        out = filtered(tarball(entry('c0ffee.json', b'{}'), (info, data)))
        self.assertEqual(None, manifest_of(out)[0]['RepoTags'])
        self.assertNotIn('decoy', members(out))

    def test_names_are_normalized(self):
        out = members(filtered(tarball(
            entry('./', kind=tarfile.DIRTYPE),
            entry('./c0ffee.json', b'{}'),
            entry('.//l1/./layer.tar', b'L'),
            entry('./manifest.json', MANIFEST))))
        self.assertEqual({'c0ffee.json', 'l1/layer.tar', 'manifest.json'},
                         set(out))
        self.assertIsNone(json.loads(out['manifest.json'][1])[0][
            'RepoTags'])

    def test_long_names_and_gnu_headers_come_out_as_pax(self):
        long_name = 'blobs/sha256/' + 'f' * 200
        out = filtered(tarball(entry(long_name, b'x'),
                               entry('manifest.json', MANIFEST),
                               fmt=tarfile.GNU_FORMAT))
        self.assertEqual((tarfile.REGTYPE, b'x'), members(out)[long_name])

    def test_compressed_tarballs_come_out_plain(self):
        out = filtered(gzip.compress(saved()))
        self.assertIsNone(manifest_of(out)[0]['RepoTags'])

    def test_docker_compatibility_symlinks_pass(self):
        # docker save (20.10) links a layer it wrote once; Docker 25
        # links into blobs/ the same way
        out = members(filtered(saved(
            entry('l2/', kind=tarfile.DIRTYPE),
            entry('l2/layer.tar', kind=tarfile.SYMTYPE,
                  linkname='../l1/layer.tar'),
            entry('l3/layer.tar', kind=tarfile.SYMTYPE,
                  linkname='../blobs/sha256/' + 'a' * 64))))
        self.assertEqual((tarfile.SYMTYPE, '../l1/layer.tar'),
                         out['l2/layer.tar'])
        self.assertEqual((tarfile.SYMTYPE, '../blobs/sha256/' + 'a' * 64),
                         out['l3/layer.tar'])


class TestRefused(testtools.TestCase):
    """An entry that could make the engine read what was not filtered."""

    def assertRefused(self, data, reason):
        e = self.assertRaises(image_tar.Refused, filtered, data)
        self.assertEqual(reason, str(e))

    def test_symlinked_manifest(self):
        self.assertRefused(
            tarball(entry('evil.json', MANIFEST),
                    entry('manifest.json', kind=tarfile.SYMTYPE,
                          linkname='evil.json')),
            'entry manifest.json must be a regular file; it is a symlink '
            'to evil.json')

    def test_hard_linked_control_file(self):
        self.assertRefused(
            tarball(entry('evil', b'{}'),
                    entry('repositories', kind=tarfile.LNKTYPE,
                          linkname='evil')),
            'entry repositories must be a regular file; it is a hard link '
            'to evil')

    def test_control_file_that_is_a_directory(self):
        self.assertRefused(
            tarball(entry('index.json/', kind=tarfile.DIRTYPE)),
            'entry index.json must be a regular file; it is a directory')

    def test_dot_dot_component(self):
        self.assertRefused(saved(entry('a/../manifest.json', MANIFEST)),
                           'entry a/../manifest.json has a .. component')

    def test_absolute_name(self):
        self.assertRefused(saved(entry('/etc/passwd', b'x')),
                           'entry /etc/passwd has an absolute name')

    def test_duplicate_manifest(self):
        self.assertRefused(saved(entry('./manifest.json', MANIFEST)),
                           'entry manifest.json appears twice')

    def test_entry_below_a_symlink(self):
        # the engine would write through the link: l1/manifest.json is
        # ./manifest.json, replacing the filtered one
        self.assertRefused(
            saved(entry('up', kind=tarfile.SYMTYPE, linkname='.'),
                  entry('up/manifest.json', MANIFEST)),
            'entry up/manifest.json lies below the symlink up')

    def test_entry_below_a_control_file(self):
        self.assertRefused(saved(entry('manifest.json/x', b'')),
                           'entry manifest.json/x: manifest.json is a file '
                           'of its own, not a directory')

    def test_hard_link(self):
        self.assertRefused(
            saved(entry('l2/layer.tar', kind=tarfile.LNKTYPE,
                        linkname='l1/layer.tar')),
            'entry l2/layer.tar is a hard link to l1/layer.tar; docker save '
            'writes only files, directories and symlinks')

    def test_device(self):
        self.assertRefused(saved(entry('null', kind=tarfile.CHRTYPE)),
                           'entry null is a device; docker save writes only '
                           'files, directories and symlinks')

    def test_symlinks_leaving_the_archive(self):
        for name, target, why in [
                ('l2/layer.tar', '/etc/shadow', 'outside the archive'),
                ('l2/layer.tar', '../../etc', 'outside the archive'),
                ('top', '..', 'outside the archive'),
                ('l2/layer.tar', 'x/../../..', '.. after a name'),
                ('l2/l', '', 'outside the archive')]:
            self.assertIn(why, str(self.assertRaises(
                image_tar.Refused, filtered,
                saved(entry(name, kind=tarfile.SYMTYPE,
                            linkname=target)))), (name, target))

    def test_a_link_through_a_link_cannot_climb(self):
        # lexically l/.. is ".", but with l -> . it is the parent
        self.assertRefused(
            saved(entry('l', kind=tarfile.SYMTYPE, linkname='.'),
                  entry('t', kind=tarfile.SYMTYPE, linkname='l/..')),
            'symlink t points to l/..: .. after a name')

    def test_names_other_than_printable_ascii(self):
        e = self.assertRaises(image_tar.Refused, filtered,
                              saved(entry('manifest.json\u200b', b'[]')))
        self.assertIn('holds characters other than printable ASCII', str(e))

    def test_no_manifest(self):
        self.assertRefused(
            tarball(entry('repositories', b'{}')),
            'no manifest.json: not a tarball of docker save 1.10 or later')

    def test_manifest_that_is_not_a_list_of_objects(self):
        self.assertRefused(saved(manifest=b'{"RepoTags": []}'),
                           'manifest.json is not a list of objects')

    def test_manifest_that_is_not_json(self):
        e = self.assertRaises(image_tar.Refused, filtered,
                              saved(manifest=b'[{"Config": 1}] trailing'))
        self.assertIn('manifest.json is not JSON in UTF-8', str(e))

    def test_oversized_control_file(self):
        big = b' ' * (image_tar.MAX_CONTROL_BYTES + 1) + b'[]'
        e = self.assertRaises(image_tar.Refused, filtered,
                              saved(manifest=big))
        self.assertIn('entry manifest.json is 1048579 bytes', str(e))

    def test_not_a_tarball(self):
        e = self.assertRaises(image_tar.Refused, filtered, b'\x28\xb5\x2f'
                              b'\xfd' + b'zstd' * 200)
        self.assertIn('not a tar archive', str(e))

    def test_truncated_layer(self):
        data = saved()
        start = data.index(b'L' * 3000)
        e = self.assertRaises(image_tar.Refused, filtered,
                              data[:start + 1000])
        self.assertIn('the tarball ends inside entry l1/layer.tar', str(e))


class TestStreaming(testtools.TestCase):

    def test_a_layer_streams_through_in_bounded_blocks(self):
        layer = bytes(range(256)) * (12 * 1024 * 16)     # 12 MiB
        data = tarball(entry('c0ffee.json', b'{}'),
                       entry('l1/layer.tar', layer),
                       entry('manifest.json', MANIFEST))
        consumed = []

        def source():
            for chunk in chunks(data, 64 * 1024):
                consumed.append(len(chunk))
                yield chunk

        out = image_tar.filtered(source())
        sizes = []
        before_first_layer_block = None
        body = bytearray()
        for block in out:
            if before_first_layer_block is None and len(block) > 512:
                before_first_layer_block = sum(consumed)
            sizes.append(len(block))
            body += block
        self.assertLessEqual(max(sizes), image_tar.CHUNK)
        # the first block of the layer went out long before its end came
        self.assertLess(before_first_layer_block, 3 * image_tar.CHUNK)
        self.assertEqual(layer, members(bytes(body))['l1/layer.tar'][1])

    def test_nothing_is_read_before_the_load_reads(self):
        def source():
            raise AssertionError('read too early')
            yield b''
        image_tar.filtered(source())     # a generator: reads on iteration
