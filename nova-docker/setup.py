"""Build hooks of nova-docker-vmct (metadata: pyproject.toml).

Adds ``nova_docker_vmct.pth`` at the top of the wheel, i.e. of
site-packages. Its single ``import`` line runs at interpreter start-up and
makes ``nova.virt.docker`` an alias of ``nova_docker_vmct``
(nova_docker_vmct/alias.py), so ``compute_driver = docker.DockerDriver``
loads without any file under ``nova/``. setuptools has no declarative way to
put a file outside the packages: ``build_py`` writes it into the build root
of a regular wheel and ``editable_wheel`` into the editable wheel
(``pip install -e``). Listed in the wheel's RECORD, it goes with
``pip uninstall``.
"""

import os

import setuptools
from setuptools.command import build_py
from setuptools.command import editable_wheel

PTH_NAME = 'nova_docker_vmct.pth'
PTH_LINE = 'import nova_docker_vmct.alias\n'


def write_pth(directory):
    path = os.path.join(directory, PTH_NAME)
    with open(path, 'w') as f:
        f.write(PTH_LINE)
    return path


class BuildPy(build_py.build_py):

    def run(self):
        super().run()
        if not self.editable_mode:
            write_pth(self.build_lib)

    def get_outputs(self, *args, **kwargs):
        outputs = list(super().get_outputs(*args, **kwargs))
        if not self.editable_mode:
            outputs.append(os.path.join(self.build_lib, PTH_NAME))
        return outputs


class EditableWheel(editable_wheel.editable_wheel):
    # setuptools >= 64 builds the editable wheel from the directory it
    # passes here (dist-info, scripts, data); whatever is in its root when
    # this returns is added to the wheel with its RECORD entry.

    def _run_build_commands(self, dist_name, unpacked_wheel, *args, **kw):
        result = super()._run_build_commands(dist_name, unpacked_wheel,
                                             *args, **kw)
        write_pth(unpacked_wheel)
        return result


setuptools.setup(cmdclass={'build_py': BuildPy,
                           'editable_wheel': EditableWheel})
