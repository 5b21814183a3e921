"""The architecture page's tree is the package's tree, one line per folder."""

import os
import re

import testtools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PAGE = os.path.join(ROOT, "doc", "source", "design", "architecture.rst")


def documented_folders():
    with open(PAGE) as f:
        text = f.read()
    return [m.group(1).rstrip("/") for m in re.finditer(r"^   (rally_vmct/\S*)", text, re.M)]


def package_folders():
    found = []
    for folder, dirs, _ in os.walk(os.path.join(ROOT, "rally_vmct")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found.append(os.path.relpath(folder, ROOT))
    return found


class ArchitectureTestCase(testtools.TestCase):

    def test_the_tree_lists_every_folder_once(self):
        documented = documented_folders()
        self.assertEqual(sorted(set(documented)), sorted(documented))
        self.assertEqual(sorted(package_folders()), sorted(documented))
