"""tools/install-driver: the parts that need no pip (see tests/install/)."""

import importlib.machinery
import importlib.util
import os
import sys

import fixtures
import testtools

import nova_docker_vmct

ND = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(ND, 'tools', 'install-driver')


def load_script():
    loader = importlib.machinery.SourceFileLoader('install_driver', SCRIPT)
    spec = importlib.util.spec_from_loader('install_driver', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class TestInstallDriver(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.mod = load_script()
        self.tmp = self.useFixture(fixtures.TempDir()).path

    def test_supported_releases_from_the_package(self):
        package = self.mod.package_info()
        self.assertEqual(nova_docker_vmct.NOVA_RELEASES,
                         package.NOVA_RELEASES)
        self.assertEqual(nova_docker_vmct.__file__, package.__file__)

    def test_version_check(self):
        package = self.mod.package_info()
        for ok in ('31.0.0', '32.2.1', '33.0.2', '34.0.0', '34.1.0.dev3'):
            self.mod.check_version(ok, package)
        for bad in ('30.3.0', '35.0.0'):
            e = self.assertRaises(self.mod.Failure, self.mod.check_version,
                                  bad, package)
            self.assertIn('the installed nova is %s' % bad, str(e))
            self.assertIn('supports Nova 31.x to 34.x (2025.1 Epoxy to '
                          '2026.2 Hibiscus) only', str(e))

    def test_requirement_names(self):
        name = self.mod.requirement_name
        self.assertEqual('nova', name('nova==34.0.0\n'))
        self.assertEqual('nova', name('Nova===34.0.0  # pinned'))
        self.assertEqual('nova', name('nova[zvm]>=34'))
        self.assertEqual('nova', name('nova @ file:///src/nova'))
        self.assertEqual('python-novaclient', name('python_novaclient==18'))
        self.assertEqual('nova-docker-vmct', name('nova.docker_vmct==1'))
        self.assertIsNone(name('# nova==1'))
        self.assertIsNone(name('-c other.txt'))
        self.assertIsNone(name('   '))

    def test_constraints_lose_only_nova(self):
        path = os.path.join(self.tmp, 'c.txt')
        with open(path, 'w') as f:
            f.write('# comment\nnova==33.0.0\nnovaclient==1\n'
                    'docker===7.1.0\n-c more.txt\n'
                    '--constraint=https://example.org/u-c.txt\n'
                    'oslo.log==7')
        copy, dropped = self.mod.filter_constraints(path, self.tmp, 3)
        self.assertEqual(['nova==33.0.0'], dropped)
        with open(copy) as f:
            self.assertEqual(
                '# comment\nnovaclient==1\ndocker===7.1.0\n'
                '-c %s\n--constraint=https://example.org/u-c.txt\n'
                'oslo.log==7\n' % os.path.join(self.tmp, 'more.txt'),
                f.read())

    def test_no_nova_fails_clearly(self):
        # this interpreter without site-packages: no nova metadata at all
        wrapper = os.path.join(self.tmp, 'python')
        with open(wrapper, 'w') as f:
            f.write('#!/bin/sh\nexec %s -S "$@"\n' % sys.executable)
        os.chmod(wrapper, 0o755)
        out = self.useFixture(fixtures.StringStream('stdout')).stream
        self.useFixture(fixtures.MonkeyPatch('sys.stdout', out))
        self.assertEqual(1, self.mod.main(['--python', wrapper]))
        out.seek(0)
        self.assertIn('ERROR: no Nova distribution in %s' % wrapper,
                      out.read())
