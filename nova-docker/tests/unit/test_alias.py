"""nova.virt.docker as an alias of nova_docker_vmct (alias.py, setup.py)."""

import importlib
import os
import re
import subprocess
import sys

from nova.virt import driver as virt_driver
from nova.virt import fake as fake_virt
from oslo_utils import importutils
import testtools

import nova_docker_vmct
from nova_docker_vmct import alias
from nova_docker_vmct import driver as docker_driver
from nova_docker_vmct import vif

ND = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class TestAlias(testtools.TestCase):

    def setUp(self):
        super().setUp()
        alias.install()

    def test_names(self):
        self.assertEqual('nova_docker_vmct',
                         alias.target_name('nova.virt.docker'))
        self.assertEqual('nova_docker_vmct.driver',
                         alias.target_name('nova.virt.docker.driver'))
        for other in ('nova', 'nova.virt', 'nova.virt.dockerx',
                      'nova.virt.libvirt', 'nova_docker_vmct', 'docker'):
            self.assertIsNone(alias.target_name(other), other)

    def test_one_module_under_both_names(self):
        self.assertIs(nova_docker_vmct,
                      importlib.import_module('nova.virt.docker'))
        self.assertIs(vif, importlib.import_module('nova.virt.docker.vif'))
        self.assertIs(docker_driver,
                      importlib.import_module('nova.virt.docker.driver'))
        import nova.virt
        self.assertIs(nova_docker_vmct, nova.virt.docker)
        # the real module keeps its own name and spec
        self.assertEqual('nova_docker_vmct.vif', vif.__spec__.name)

    def test_nova_loader_path(self):
        cls = importutils.import_class('nova.virt.docker.DockerDriver')
        self.assertIs(docker_driver.DockerDriver, cls)
        self.assertIs(cls, importutils.import_class(
            'nova.virt.docker.driver.DockerDriver'))
        d = virt_driver.load_compute_driver(fake_virt.FakeVirtAPI(),
                                            'docker.DockerDriver')
        self.assertIsInstance(d, docker_driver.DockerDriver)

    def test_missing_submodule(self):
        self.assertRaises(ModuleNotFoundError, importlib.import_module,
                          'nova.virt.docker.nosuchmodule')

    def test_install_once_and_first(self):
        alias.install()
        finders = [f for f in sys.meta_path
                   if getattr(f, 'nova_docker_vmct_alias', False)]
        self.assertEqual(1, len(finders))

    def test_start_up_import_is_light(self):
        # what the .pth runs, in a fresh interpreter without site-packages
        # .pth processing (-S) and with only this tree on the path
        code = ('import sys; sys.path.insert(0, %r); '
                'import nova_docker_vmct.alias as a; '
                'print(sorted(m for m in sys.modules '
                'if m.split(".")[0] in ("nova", "oslo_config", "docker", '
                '"typing", "nova_docker_vmct"))); '
                'print(type(sys.meta_path[0]).__name__)' % ND)
        out = subprocess.run([sys.executable, '-S', '-c', code], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(
            "['nova_docker_vmct', 'nova_docker_vmct.alias']\nAliasFinder\n",
            out)


class TestPackaging(testtools.TestCase):

    def test_pth_line_imports_the_alias(self):
        with open(os.path.join(ND, 'setup.py')) as f:
            setup = f.read()
        self.assertIn("PTH_NAME = 'nova_docker_vmct.pth'", setup)
        self.assertIn("PTH_LINE = 'import nova_docker_vmct.alias\\n'", setup)

    def test_nova_range_matches_pyproject(self):
        with open(os.path.join(ND, 'pyproject.toml')) as f:
            found = re.search(r'"nova>=(\d+)\.0\.0\.dev0,<(\d+)"', f.read())
        self.assertEqual((str(nova_docker_vmct.OLDEST_NOVA_MAJOR),
                          str(nova_docker_vmct.NEWEST_NOVA_MAJOR + 1)),
                         found.groups())

    def test_nothing_under_nova(self):
        self.assertFalse(os.path.exists(os.path.join(ND, 'nova')))
        with open(os.path.join(ND, 'pyproject.toml')) as f:
            packages = re.search(r'^packages = \[(.*)\]$', f.read(), re.M)
        self.assertEqual({'nova_docker_vmct'},
                         {name.strip(' "').split('.')[0]
                          for name in packages.group(1).split(',')})
