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
"""``nova.virt.docker`` as an alias of ``nova_docker_vmct``.

Nova loads a compute driver only as ``nova.virt.<compute_driver>``
(``importutils.import_object('nova.virt.%s' % CONF.compute_driver)``), but
this distribution must not put files into the ``nova`` package: next to an
editable Nova a bare ``site-packages/nova/`` becomes a namespace package that
hides the real one. Instead, the ``nova_docker_vmct.pth`` file it installs
runs ``import nova_docker_vmct.alias`` at interpreter start-up, which puts
one :class:`AliasFinder` first on ``sys.meta_path``.

The finder answers for exactly ``nova.virt.docker`` and
``nova.virt.docker.<sub>``, and only once they are imported (after the real
``nova.virt``, wherever and however Nova is installed): it imports
``nova_docker_vmct[.<sub>]`` and binds that very module object under the
alias too, so classes and ``[docker]`` options exist once. Importing this
module imports nothing but the standard library's ``sys`` and ``importlib``.
"""

import importlib
import sys

ALIAS = 'nova.virt.docker'
PACKAGE = 'nova_docker_vmct'


def target_name(fullname):
    """The real module name behind ``fullname``, or None (not an alias)."""
    if fullname == ALIAS:
        return PACKAGE
    if fullname.startswith(ALIAS + '.'):
        return PACKAGE + fullname[len(ALIAS):]
    return None


class AliasLoader(object):
    """Replaces the alias module by the real one during exec_module.

    The import system returns whatever module is in ``sys.modules`` under
    the imported name once the loader ran, so the real module (with its own
    ``__name__`` and ``__spec__``) ends up bound to both names.
    """

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return None     # a throw-away module; exec_module replaces it

    def exec_module(self, module):
        sys.modules[module.__name__] = importlib.import_module(self.target)


class AliasFinder(object):
    """sys.meta_path finder for ``nova.virt.docker[.<sub>]`` only."""

    nova_docker_vmct_alias = True   # marker: install() adds one finder

    def find_spec(self, fullname, path=None, target=None):
        real = target_name(fullname)
        if real is None:
            return None
        import importlib.util
        real_spec = importlib.util.find_spec(real)
        if real_spec is None:
            return None     # ModuleNotFoundError for the alias, as usual
        return importlib.util.spec_from_loader(
            fullname, AliasLoader(real), origin=real_spec.origin,
            is_package=real_spec.submodule_search_locations is not None)

    def invalidate_caches(self):
        pass


def installed():
    return any(getattr(f, 'nova_docker_vmct_alias', False)
               for f in sys.meta_path)


def install():
    """Put the finder first on sys.meta_path (once).

    First, so that a submodule of the alias is never found by the path
    finder in the package's directory and loaded a second time under the
    alias name.
    """
    if not installed():
        sys.meta_path.insert(0, AliasFinder())


install()
