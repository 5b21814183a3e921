"""The test suite itself: every test checks something, and only tests are collected as tests.

A test method passes when nothing raises, so one without any assertion can never fail on
what it claims. Counted as checking: ``assert`` and ``raise`` statements, calls of a name
with assert/fail/expect/check/verify in it (unittest's, testtools', mocks' ``assert_called``),
and calls of (or references to) helpers of the same module that do so.
"""

import ast
import os
import re

import testtools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUITES = ("tests", os.path.join("nova-docker", "tests"))
CHECKING = re.compile(r"assert|fail|expect|check|verify", re.IGNORECASE)


def suite_modules():
    for suite in SUITES:
        for folder, _, files in os.walk(os.path.join(ROOT, suite)):
            for name in sorted(files):
                if name.startswith("test_") and name.endswith(".py"):
                    yield os.path.join(folder, name)


def checks(node, helpers, seen):
    """True when ``node`` (or a helper it calls or hands on) asserts something."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Assert, ast.Raise)):
            return True
        name = (n.attr if isinstance(n, ast.Attribute) else
                n.id if isinstance(n, ast.Name) else None)
        if name is None:
            continue
        if isinstance(n.ctx, ast.Load) and CHECKING.search(name) and _is_called(n, node):
            return True
        if name in helpers and name not in seen:
            seen.add(name)
            if checks(helpers[name], helpers, seen):
                return True
    return False


def _is_called(name_node, tree):
    return any(isinstance(c, ast.Call) and c.func is name_node for c in ast.walk(tree))


class SuiteTestCase(testtools.TestCase):

    def parsed(self):
        for path in suite_modules():
            with open(path) as f:
                yield os.path.relpath(path, ROOT), ast.parse(f.read())

    def test_every_test_checks_something(self):
        unchecked = []
        for path, tree in self.parsed():
            helpers = {}
            for n in ast.walk(tree):
                if isinstance(n, ast.FunctionDef):
                    helpers.setdefault(n.name, n)
            for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
                for m in cls.body:
                    if (isinstance(m, ast.FunctionDef) and m.name.startswith("test")
                            and not checks(m, helpers, set())):
                        unchecked.append("%s:%d %s.%s" % (path, m.lineno, cls.name, m.name))
        self.assertEqual([], unchecked)

    def test_no_module_level_function_is_named_like_a_test(self):
        # pytest would collect it as a test of its own (it is a helper)
        named = ["%s:%d %s" % (path, n.lineno, n.name) for path, tree in self.parsed()
                 for n in tree.body
                 if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
        self.assertEqual([], named)

    def test_the_audit_sees_a_test_without_checks(self):
        tree = ast.parse("class T:\n    def test_a(self):\n        x = 1\n"
                         "    def test_b(self):\n        self.assertEqual(1, 1)\n"
                         "    def test_c(self):\n        helper()\n"
                         "def helper():\n    assert True\n")
        helpers = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        [cls] = tree.body[:1]
        self.assertEqual([False, True, True],
                         [checks(m, helpers, set()) for m in cls.body])
