"""Tests of the scripts in tools/ that every path shares (values, task args, apt)."""

import importlib.util
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
TOOLS = os.path.join(ROOT, "tools")


def load(name, path):
    """Import a script of tools/ (not a package) as a module.

    Its own imports resolve in tools/, as they do when it runs.
    """
    if TOOLS not in sys.path:
        sys.path.insert(0, TOOLS)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
