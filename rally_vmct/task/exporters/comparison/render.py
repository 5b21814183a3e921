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
"""HTML, CSV and JSON renderings of a comparison from :mod:`.analyse`.

The HTML is one self-contained file: inline CSS and inline SVG charts, no
script, no font or library fetched from anywhere, so it reads the same offline
and in a CI artifact viewer. It is the Jinja2 template
``templates/comparison.html`` (its cells and charts are macros of
``comparison_cells.html`` and ``comparison_charts.html``, its style
``comparison.css``), loaded from the package as Rally loads its own report
templates (``rally.ui.utils``) and autoescaped; :mod:`.view`
prepares what it shows. No Rally import.
"""

import csv
import io
import json

import jinja2
import markupsafe

from rally_vmct.task.exporters.comparison import analyse
from rally_vmct.task.exporters.comparison import view
from rally_vmct.hostcost import density_curves
from rally_vmct.task.exporters.comparison import environment as env_lib

PAGE = "comparison.html"


def _jinja_environment():
    """The templates' environment, loading from this package's ``templates``.

    Every template is autoescaped (the SVG macros too: kind names and tooltips
    are the results' text); a misspelt field fails the export (StrictUndefined)
    instead of leaving a cell empty; block tags leave no blank lines behind.
    """
    loader = jinja2.PackageLoader("rally_vmct.task.exporters.comparison", "templates")
    env = jinja2.Environment(loader=loader, autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined)

    def include_raw_file(name):
        # The stylesheet goes in as it is: it is no template, and CSS is no HTML.
        return markupsafe.Markup(loader.get_source(env, name)[0])

    env.globals.update(include_raw_file=include_raw_file, NA=view.NA,
                       NOT_SIGNIFICANT=view.NOT_SIGNIFICANT, CV_FLAG=view.CV_FLAG,
                       HIGH_CV=view.HIGH_CV_PERCENT,
                       NOT_RECORDED=env_lib.NOT_RECORDED)
    env.filters["f1"] = "{:.1f}".format     # a chart coordinate: one decimal
    return env


_JINJA = _jinja_environment()


def macro(template, name):
    """A macro of one of the templates, e.g. a chart or a cell on its own."""
    return getattr(_JINJA.get_template(template).module, name)


def render_html(data, generated_at=""):
    """The comparison as one self-contained HTML page."""
    return _JINJA.get_template(PAGE).render(view.page(data, generated_at))


def render_csv(data):
    """One row per kind x concurrency x metric group, then reboot paths and facts.

    Every row has exactly the columns of :data:`.analyse.CSV_COLUMNS`,
    in that order (the header too): a line fills the ones it knows, the others
    stay empty. Reboot path rows have source ``reboot_path``, metric = the path,
    unit ``reboots`` and the count in ``n``. Facts rows have source ``fact``,
    group = the fact's label, metric = its key, the value in ``value`` and in
    ``n`` how many facts tables (iterations) of the kind reported it: one row
    per distinct value. Density rows (source ``density``): group = the curve, metric =
    ``instances running = N`` (or ``instances already running = N``), the point's
    statistics and ratio; limit rows (source ``density_limit``): metric = the reason,
    its count in ``n``.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(analyse.CSV_COLUMNS)
    for line in _csv_lines(data):
        writer.writerow([_csv_value(line.get(column)) for column in analyse.CSV_COLUMNS])
    return buf.getvalue()


def _csv_lines(data):
    """The CSV's lines as dicts: group rows, reboot path counts, density, fact values."""
    yield from data["groups"]
    for row in data["reboot_paths"]:
        for path, count in row["counts"].items():
            yield {"kind": row["kind"], "concurrency": row["concurrency"],
                   "source": "reboot_path", "group": "reboot path", "metric": path,
                   "unit": "reboots", "n": count}
    yield from density_curves.csv_lines(data["density"])
    for entry in data.get("environment") or ():
        for fact in entry["facts"]:
            for value in fact["values"] or [{"value": env_lib.NOT_RECORDED, "count": 0}]:
                yield {"kind": entry["kind"], "source": "fact", "group": fact["label"],
                       "metric": fact["key"], "n": value["count"], "value": value["value"]}


def _csv_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return value


def render_json(data):
    return json.dumps(data, indent=1, sort_keys=False)
