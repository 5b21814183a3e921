"""The driver's flavor extra specs as Nova's API validates them."""

import os
import tomllib

import fixtures
import testtools

from nova.api.validation.extra_specs import validators
from nova import exception
from nova_docker_vmct import container
from nova_docker_vmct import extra_specs

from tests import helpers

PYPROJECT = os.path.join(os.path.dirname(__file__), '..', '..',
                         'pyproject.toml')


class TestExtraSpecs(testtools.TestCase):

    def setUp(self):
        super().setUp()
        # Nova's registry as nova-api has it with the driver installed
        # (load_validators runs the entry points of installed packages).
        registry = dict(validators.VALIDATORS)
        namespaces = set(validators.NAMESPACES)
        for v in extra_specs.register():
            registry[v.name] = v
            namespaces.add(v.name_regex.split(':', 1)[0])
        self.useFixture(fixtures.MockPatchObject(validators, 'VALIDATORS',
                                                 registry))
        self.useFixture(fixtures.MockPatchObject(validators, 'NAMESPACES',
                                                 namespaces))

    def test_entry_point_declared(self):
        with open(PYPROJECT, 'rb') as f:
            points = tomllib.load(f)['project']['entry-points']
        self.assertEqual(
            {'docker': 'nova_docker_vmct.extra_specs'},
            points['nova.api.extra_spec_validators'])

    def test_api_refuses_bad_values_and_unknown_docker_keys(self):
        validators.validate('docker:pids_limit', '64')
        validators.validate('docker:pids_limit', '-1')
        for bad in ('abc', '-2', '1.5'):
            self.assertRaises(exception.ValidationError, validators.validate,
                              'docker:pids_limit', bad)
        e = self.assertRaises(exception.ValidationError, validators.validate,
                              'docker:pid_limit', '64')
        self.assertIn('does not appear to be a valid extra spec', str(e))

    def test_nova_namespace_would_refuse_the_key(self):
        """Why the spec is docker:pids_limit, not quota:pids_limit."""
        self.assertRaises(exception.ValidationError, validators.validate,
                          'quota:pids_limit', '64')

    def test_api_and_driver_agree(self):
        for value in ('64', '0', '-1', ' 7 ', 'abc', '-2', '1.5', '', '1e3'):
            flavor = helpers.flavor(extra_specs={extra_specs.PIDS_LIMIT:
                                                 value})
            try:
                container.pids_limit_of(flavor, 1024)
                driver_ok = True
            except container.BadExtraSpec:
                driver_ok = False
            try:
                validators.validate(extra_specs.PIDS_LIMIT, value)
                api_ok = True
            except exception.ValidationError:
                api_ok = False
            self.assertEqual(api_ok, driver_ok, value)
