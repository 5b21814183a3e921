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
"""Sphinx configuration of rally-vmct's documentation (tox -e docs)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ext"))

project = "rally-vmct"
copyright = "rally-vmct contributors"
extensions = ["vmct_plugin_reference"]
root_doc = "index"
source_suffix = {".rst": "restructuredtext"}
exclude_patterns = []
pygments_style = "sphinx"
html_theme = "alabaster"
html_title = "rally-vmct"
# The measured figures are long tables: let them use the page's width.
html_theme_options = {"page_width": "1200px", "body_max_width": "none"}
