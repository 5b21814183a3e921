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
"""Sphinx directives: every VMCT plugin from its docstring, and the [vmct] options.

Rally finds the plugins as ``rally plugin list`` does (``rally.plugins.load()``
imports the packages of the ``rally_plugins`` entry points, rally-vmct's among
them); the reference lists those whose module is in ``rally_vmct``, grouped by
plugin base, with what ``Plugin.get_info()`` reads from the docstrings: title,
description, ``:param`` texts, platform and module. Rally's own reference is made
the same way (its ``doc/ext/plugin_reference.py``). ``vmct-options-reference``
lists the options ``rally_vmct.opts.list_opts()`` gives Rally, with their help.
"""

from docutils import nodes
from docutils.parsers import rst
from docutils import statemachine
from sphinx.util import nested_parse_with_titles

PACKAGE = "rally_vmct"
# Plugin bases in the order the reference shows them: (base class name, title).
SECTIONS = (
    ("Scenario", "Scenarios"),
    ("Context", "Contexts"),
    ("SLA", "SLAs"),
    ("TaskExporter", "Task exporters"),
    ("ResourceType", "Resource types"),
    ("Validator", "Validators"),
)


def vmct_plugins():
    """``{base class name: [plugin class]}`` of the loaded plugins of rally_vmct."""
    from rally.common.plugin import plugin
    from rally import plugins

    plugins.load()
    found = {}
    for cls in plugin.Plugin.get_all(allow_hidden=True):
        if cls.__module__.split(".")[0] == PACKAGE:
            found.setdefault(cls._get_base().__name__, []).append(cls)
    for classes in found.values():
        classes.sort(key=lambda cls: cls.get_name())
    return found


def plugin_text(cls):
    """The reST of one plugin's section, title included."""
    info = cls.get_info()
    name = cls.get_name()
    lines = [name, "-" * len(name), ""]
    if info["title"]:
        lines += [info["title"], ""]
    if info["description"]:
        lines += info["description"].splitlines() + [""]
    if info["parameters"]:
        lines += ["**Parameters**:", ""]
        for param in info["parameters"]:
            doc = " ".join(param["doc"].split())
            lines += ["* ``%s``: %s" % (param["name"], doc)]
        lines += [""]
    if info["returns"]:
        lines += ["**Returns**: " + " ".join(info["returns"].split()), ""]
    lines += ["**Platform**: %s; **module**: ``%s``" % (cls.get_platform(), info["module"]),
              ""]
    return lines


class PluginReference(rst.Directive):
    """Every VMCT plugin, a section per plugin base."""

    has_content = False

    def run(self):
        found = vmct_plugins()
        unknown = sorted(set(found) - {base for base, _ in SECTIONS})
        if unknown:
            raise self.error("plugin bases without a section: %s" % ", ".join(unknown))
        result = []
        for base, title in SECTIONS:
            if not found.get(base):
                continue
            section = nodes.section(ids=[nodes.make_id(title)])
            section += nodes.title(text=title)
            lines = []
            for cls in found[base]:
                lines += plugin_text(cls)
            content = statemachine.StringList(lines, source="vmct-plugin-reference")
            nested_parse_with_titles(self.state, content, section)
            result.append(section)
        return result


class OptionsReference(rst.Directive):
    """The ``[vmct]`` options of rally.conf (``rally_vmct.opts``), with defaults."""

    has_content = False

    def run(self):
        from rally_vmct import opts

        lines = []
        for group, options in opts.list_opts():
            for opt in options:
                lines += ["``[%s] %s``" % (group, opt.dest),
                          "   %s (default: ``%r``)" % (" ".join((opt.help or "").split()),
                                                       opt.default), ""]
        node = nodes.container()
        content = statemachine.StringList(lines, source="vmct-options-reference")
        self.state.nested_parse(content, self.content_offset, node)
        return node.children


def setup(app):
    app.add_directive("vmct-plugin-reference", PluginReference)
    app.add_directive("vmct-options-reference", OptionsReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
