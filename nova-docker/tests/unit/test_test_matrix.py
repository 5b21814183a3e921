"""tools/test-matrix and tools/test-venv: the parts that need no pip."""

import importlib.machinery
import importlib.util
import io
import os
import re
import subprocess
import sys

import fixtures
import subunit
import testtools

import nova_docker_vmct

ND = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def load_script(name):
    path = os.path.join(ND, 'tools', name)
    module_name = name.replace('-', '_')
    loader = importlib.machinery.SourceFileLoader(module_name, path)
    spec = importlib.util.spec_from_loader(module_name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class Collect(testtools.StreamResult):

    def __init__(self):
        super().__init__()
        self.final = []

    def status(self, test_id=None, test_status=None, **kwargs):
        if test_id and test_status not in (None, 'exists', 'inprogress'):
            self.final.append((test_id, test_status))


class TestMatrix(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.mod = load_script('test-matrix')

    def test_every_supported_series_by_default(self):
        self.assertEqual(nova_docker_vmct.NOVA_RELEASES, self.mod.releases())

    def test_ids_suffixed_and_counted(self):
        stream = io.BytesIO()
        out = subunit.StreamResultToBytes(stream)
        for test_id, status in [('a.b.test_one', 'success'),
                                ('a.b.test_two', 'fail'),
                                ('a.b.test_three', 'skip')]:
            out.status(test_id=test_id, test_status='inprogress')
            out.status(test_id=test_id, test_status=status)
        proc = subprocess.run(
            [sys.executable, '-c', self.mod.SUFFIX_IDS, '[nova31]'],
            input=stream.getvalue(), capture_output=True, check=True)
        collect = Collect()
        subunit.ByteStreamToStreamResult(io.BytesIO(proc.stdout)).run(
            collect)
        self.assertEqual([('a.b.test_one[nova31]', 'success'),
                          ('a.b.test_two[nova31]', 'fail'),
                          ('a.b.test_three[nova31]', 'skip')], collect.final)
        self.assertEqual(b'fail 1 skip 1 success 1', proc.stderr)

    def test_functional_only_for_a_series_that_runs(self):
        e = self.assertRaises(SystemExit, self.mod.main,
                              ['--nova', '32', '--functional', '31'])
        self.assertEqual(2, e.code)

    def test_unsupported_series_refused(self):
        self.assertRaises(SystemExit, self.mod.main, ['--nova', '30'])


class TestVenv(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.mod = load_script('test-venv')
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def test_stamp_follows_series_and_constraints(self):
        path = os.path.join(self.tmp, 'c.txt')
        with open(path, 'w') as f:
            f.write('docker===7.1.0\n')
        first = self.mod.stamp(31, path)
        self.assertEqual(first, self.mod.stamp(31, path))
        self.assertNotEqual(first, self.mod.stamp(32, path))
        self.assertNotEqual(first, self.mod.stamp(31, None))
        with open(path, 'w') as f:
            f.write('docker===7.2.0\n')
        self.assertNotEqual(first, self.mod.stamp(31, path))

    def test_every_series_has_constraints(self):
        # a series without them would test whatever PyPI has that day
        for major in nova_docker_vmct.NOVA_RELEASES:
            path = self.mod.constraints_for(major)
            self.assertIsNotNone(path, 'nova %d' % major)
            with open(path) as f:
                text = f.read()
            # the Oslo libraries are what moves between releases
            self.assertRegex(text, r'(?m)^oslo\.service===?\d')

    def test_constraints_pin_only_their_series(self):
        # the venv gets nova==M.*: a pin of another series cannot resolve
        for major in nova_docker_vmct.NOVA_RELEASES:
            with open(self.mod.constraints_for(major)) as f:
                pins = re.findall(r'(?m)^nova===?(\d+)\.', f.read())
            self.assertIn(pins, ([], [str(major)]), 'nova %d' % major)

    def test_cloud_releases_share_the_cloud_set(self):
        # one pinned set per release: the all-in-one cloud's, where it runs it
        aio = os.path.join(os.path.dirname(ND), 'tools', 'aio', 'constraints')
        for major, release in ((31, '2025.1'), (34, '2026.2')):
            self.assertEqual(os.path.join(aio, release + '.txt'),
                             self.mod.constraints_for(major))
