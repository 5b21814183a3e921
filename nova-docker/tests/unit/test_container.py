import io
import tarfile

import testtools

from nova.compute import power_state
from nova_docker_vmct import container

from tests import helpers


class TestContainer(testtools.TestCase):

    def test_power_states(self):
        for status, expected in [
                ('running', power_state.RUNNING),
                ('paused', power_state.PAUSED),
                ('exited', power_state.SHUTDOWN),
                ('created', power_state.SHUTDOWN),
                ('dead', power_state.CRASHED),
                ('weird', power_state.NOSTATE)]:
            self.assertEqual(expected,
                             container.power_state_of({'Status': status}))
        self.assertEqual(power_state.NOSTATE, container.power_state_of(None))

    def test_frozen_is_suspended_only_when_nova_suspended_it(self):
        paused = {'Status': 'paused', 'Running': True, 'Paused': True}
        self.assertEqual(power_state.PAUSED,
                         container.power_state_of(paused))
        self.assertEqual(power_state.SUSPENDED,
                         container.power_state_of(paused, suspended=True))
        # a suspended instance whose container is no longer frozen is
        # reported as it is
        for status, expected in [('running', power_state.RUNNING),
                                 ('exited', power_state.SHUTDOWN)]:
            self.assertEqual(expected, container.power_state_of(
                {'Status': status}, suspended=True))

    def test_overlay_volume_options(self):
        data = {'LowerDir': '/d/l1/diff:/d/l2/diff', 'UpperDir': '/d/u/diff',
                'WorkDir': '/d/u/work', 'MergedDir': '/d/u/merged'}
        self.assertEqual(
            {'type': 'overlay', 'device': 'overlay',
             'o': 'lowerdir=/d/l1/diff:/d/l2/diff,upperdir=/d/u/diff,'
                  'workdir=/d/u/work'},
            container.overlay_volume_options(
                {'Name': 'overlay2', 'Data': data}))

    def test_overlay_volume_options_refusals_say_why(self):
        e = self.assertRaises(container.NotRescuable,
                              container.overlay_volume_options,
                              {'Name': 'vfs', 'Data': None})
        self.assertIn('storage driver is vfs', str(e))
        self.assertRaises(container.NotRescuable,
                          container.overlay_volume_options, None)
        lower = ':'.join('/var/lib/docker/overlay2/%064d/diff' % i
                         for i in range(50))
        e = self.assertRaises(
            container.NotRescuable, container.overlay_volume_options,
            {'Name': 'overlay2', 'Data': {'LowerDir': lower,
                                          'UpperDir': '/u', 'WorkDir': '/w'}})
        self.assertIn('too many layers (50)', str(e))

    def test_rescue_kwargs(self):
        inst = helpers.instance(hostname='web-1')
        kwargs = container.create_kwargs(inst, 'sha256:' + 'a' * 64,
                                         'host-1', 'x', 'quota')
        rescue = container.rescue_kwargs(kwargs, inst.uuid)
        self.assertEqual('nova-%s-rescue' % inst.uuid, rescue['name'])
        self.assertEqual(inst.uuid, rescue['labels']['nova.rescue_of'])
        self.assertEqual('host-1', rescue['labels']['nova.host'])
        self.assertEqual('web-1', rescue['hostname'])
        self.assertEqual(kwargs['mem_limit'], rescue['mem_limit'])
        # the instance's own arguments are unchanged
        self.assertEqual('nova-%s' % inst.uuid, kwargs['name'])
        self.assertNotIn('nova.rescue_of', kwargs['labels'])

    def test_cpu_limits(self):
        self.assertEqual({'cpu_shares': 2048, 'nano_cpus': 2 * 10 ** 9},
                         container.cpu_limits(2, 'quota'))
        self.assertEqual({'cpu_shares': 1024},
                         container.cpu_limits(1, 'shares'))
        self.assertEqual({}, container.cpu_limits(4, 'none'))
        self.assertEqual({'cpu_shares': 1024, 'nano_cpus': 10 ** 9},
                         container.cpu_limits(0, 'quota'))

    def test_memory_limits(self):
        self.assertEqual({'mem_limit': 512 * 1024 * 1024,
                          'memswap_limit': 512 * 1024 * 1024},
                         container.memory_limits(512))
        self.assertEqual({}, container.memory_limits(0))

    def test_create_kwargs(self):
        inst = helpers.instance(hostname='web-1', vcpus=2, memory_mb=1024)
        content_id = 'sha256:' + 'a' * 64
        kw = container.create_kwargs(inst, content_id, 'host-a', 'img',
                                     'quota', command=['sleep', '1'],
                                     dns=['10.0.0.2'])
        self.assertEqual('nova-%s' % inst.uuid, kw['name'])
        self.assertEqual(content_id, kw['image'])
        self.assertEqual('none', kw['network_mode'])
        self.assertEqual('web-1', kw['hostname'])
        self.assertEqual(['sleep', '1'], kw['command'])
        self.assertEqual(['10.0.0.2'], kw['dns'])
        self.assertEqual(2 * 10 ** 9, kw['nano_cpus'])
        self.assertEqual(1024 * 1024 * 1024, kw['mem_limit'])
        self.assertEqual({'Name': 'no'}, kw['restart_policy'])
        self.assertEqual({
            'nova.instance_uuid': inst.uuid,
            'nova.instance_name': inst.name,
            'nova.host': 'host-a',
            'nova.image_id': 'img',
            'nova.flavor.vcpus': '2',
            'nova.flavor.memory_mb': '1024'}, kw['labels'])
        self.assertNotIn('sysctls', kw)
        kw = container.create_kwargs(inst, 'i', 'h', 'img', 'none',
                                     ipv6=True)
        self.assertEqual('0', kw['sysctls']['net.ipv6.conf.all.disable_ipv6'])
        kw = container.create_kwargs(inst, 'i', 'h', 'img', 'none')
        self.assertNotIn('command', kw)
        self.assertNotIn('dns', kw)
        self.assertNotIn('nano_cpus', kw)

    def test_pids_limit_from_conf_unless_the_flavor_says(self):
        flavor = helpers.flavor()
        self.assertEqual(1024, container.pids_limit_of(flavor, 1024))
        for spec, limit in (('64', 64), (' 4096 ', 4096), ('0', 0),
                            ('-1', -1)):
            flavor = helpers.flavor(extra_specs={'docker:pids_limit': spec})
            self.assertEqual(limit, container.pids_limit_of(flavor, 1024))
        # another namespace's key is not the driver's
        flavor = helpers.flavor(extra_specs={'quota:pids_limit': '5'})
        self.assertEqual(1024, container.pids_limit_of(flavor, 1024))

    def test_bad_pids_limit_spec_names_the_spec_and_the_fix(self):
        for bad in ('abc', '1.5', '', '-2', '64k'):
            flavor = helpers.flavor(extra_specs={'docker:pids_limit': bad})
            e = self.assertRaises(container.BadExtraSpec,
                                  container.pids_limit_of, flavor, 1024)
            msg = str(e)
            self.assertIn('flavor m1.vmct has docker:pids_limit=%r' % bad,
                          msg)
            self.assertIn('openstack flavor set --property '
                          'docker:pids_limit=1024 m1.vmct', msg)
            self.assertIn('-1 for no limit', msg)

    def test_pids_limits(self):
        self.assertEqual({'pids_limit': 64}, container.pids_limits(64))
        for none in (0, -1, None):
            self.assertEqual({}, container.pids_limits(none))

    def test_disk_limits_from_root_gb(self):
        self.assertEqual({'storage_opt': {'size': '20G'}},
                         container.disk_limits(20))
        self.assertEqual({}, container.disk_limits(0))

    def test_create_kwargs_limits_tasks_and_disk(self):
        inst = helpers.instance(root_gb=5)
        kw = container.create_kwargs(inst, 'i', 'h', 'img', 'quota',
                                     pids_limit=1024, disk_limit=True)
        self.assertEqual(1024, kw['pids_limit'])
        self.assertEqual({'size': '5G'}, kw['storage_opt'])
        # the rescue container is held to the same limits
        rescue = container.rescue_kwargs(kw, inst.uuid)
        self.assertEqual(1024, rescue['pids_limit'])
        self.assertEqual({'size': '5G'}, rescue['storage_opt'])
        # no disk limit where the engine has none; no PID limit when 0
        kw = container.create_kwargs(inst, 'i', 'h', 'img', 'quota',
                                     pids_limit=0, disk_limit=False)
        self.assertNotIn('pids_limit', kw)
        self.assertNotIn('storage_opt', kw)
        inst = helpers.instance(extra_specs={'docker:pids_limit': '64'})
        kw = container.create_kwargs(inst, 'i', 'h', 'img', 'quota',
                                     pids_limit=1024)
        self.assertEqual(64, kw['pids_limit'])
        inst = helpers.instance(extra_specs={'docker:pids_limit': '-1'})
        kw = container.create_kwargs(inst, 'i', 'h', 'img', 'quota',
                                     pids_limit=1024)
        self.assertNotIn('pids_limit', kw)

    def test_hostname_fallback_and_length(self):
        inst = helpers.instance(hostname=None)
        self.assertEqual('host-%s' % inst.uuid, container.hostname_of(inst))
        inst = helpers.instance(hostname='a' * 70)
        self.assertEqual(63, len(container.hostname_of(inst)))

    def test_authorized_keys_tar(self):
        data = container.authorized_keys_tar('ssh-ed25519 AAAA key\n\n')
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            members = {m.name: m for m in tar.getmembers()}
            self.assertEqual(0o700, members['root/.ssh'].mode)
            self.assertEqual(0o600, members['root/.ssh/authorized_keys'].mode)
            self.assertEqual(b'ssh-ed25519 AAAA key\n', tar.extractfile(
                'root/.ssh/authorized_keys').read())

    def test_parse_docker_time(self):
        self.assertAlmostEqual(
            1700000000.123456,
            container.parse_docker_time('2023-11-14T22:13:20.123456789Z'),
            places=5)
        self.assertEqual(1700000000.0,
                         container.parse_docker_time('2023-11-14T22:13:20Z'))
        self.assertIsNone(container.parse_docker_time(
            '0001-01-01T00:00:00Z'))
        self.assertIsNone(container.parse_docker_time(''))

    def test_command_from_image(self):
        self.assertEqual(['/bin/sh', '-c', 'echo hi there'],
                         container.command_from_image(helpers.image_meta(
                             os_command_line="/bin/sh -c 'echo hi there'")))
        self.assertIsNone(container.command_from_image(helpers.image_meta()))
