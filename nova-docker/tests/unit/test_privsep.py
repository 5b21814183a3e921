import errno
import inspect
import os

import fixtures
from oslo_privsep import priv_context
from oslo_utils import importutils
import testtools

from nova_docker_vmct import network
from nova_docker_vmct import privsep
from nova_docker_vmct.privsep import arguments
from nova_docker_vmct.privsep import linux_net
from nova_docker_vmct.privsep import netlink

ENTRYPOINT_ATTR = priv_context._ENTRYPOINT_ATTR
NETNS = '/run/docker/netns/0123456789ab'


def entrypoints():
    """{name: (context, the undecorated function)} of linux_net."""
    found = {}
    for name, obj in vars(linux_net).items():
        context = getattr(obj, ENTRYPOINT_ATTR, None)
        if context is not None:
            found[name] = (context, obj.args[0])
    return found


class TestEntrypoints(testtools.TestCase):

    def test_contexts_are_found_by_their_pypath(self):
        # privsep-helper looks each context up by this name
        for context in privsep.CONTEXTS:
            self.assertIs(context, importutils.import_class(context.pypath))

    def test_the_plugger_calls_the_entrypoints(self):
        self.assertIs(linux_net, network.Plugger(None)._links)

    def test_every_entrypoint_is_typed_and_takes_no_command(self):
        found = entrypoints()
        self.assertEqual(
            {'create_veth_pair', 'delete_device', 'add_to_bridge',
             'move_to_netns', 'configure_in_netns', 'announce',
             'vif_plug_capabilities', 'netns_plug_capabilities'},
            set(found))
        for name, (context, func) in found.items():
            params = inspect.signature(func).parameters.values()
            for param in params:
                self.assertNotIn(param.name, ('cmd', 'argv', 'args',
                                              'command', 'stdin'), name)
                self.assertNotEqual(param.kind, param.VAR_POSITIONAL, name)
                self.assertNotEqual(param.kind, param.VAR_KEYWORD, name)
                self.assertIsNot(param.annotation, param.empty,
                                 '%s(%s) has no type' % (name, param.name))

    def test_only_namespace_work_holds_cap_sys_admin(self):
        sys_admin = 21
        for name, (context, func) in entrypoints().items():
            inside = name in ('configure_in_netns', 'announce',
                              'netns_plug_capabilities')
            self.assertIs(privsep.netns_plug if inside else privsep.vif_plug,
                          context, name)
        self.assertEqual((12,), privsep.VIF_PLUG_CAPABILITIES)
        self.assertIn(sys_admin, privsep.NETNS_PLUG_CAPABILITIES)


class TestChecksComeFirst(testtools.TestCase):
    """In-process (client mode off): a refused call does no netlink work."""

    def setUp(self):
        super().setUp()
        for context in privsep.CONTEXTS:
            context.set_client_mode(False)
            self.addCleanup(context.set_client_mode, True)
        self.done = []
        for name in ('create_veth_pair', 'delete_device', 'set_master',
                     'move_to_netns', 'in_netns'):
            self.useFixture(fixtures.MonkeyPatch(
                'nova_docker_vmct.privsep.netlink.' + name,
                lambda *a, _n=name: self.done.append((_n,) + a)))

    def refused(self, func, *args):
        e = self.assertRaises(ValueError, func, *args)
        self.assertEqual([], self.done)
        return str(e)

    def test_foreign_devices_are_refused(self):
        self.assertIn("host_dev 'eth0' refused", self.refused(
            linux_net.create_veth_pair, 'eth0', 'vns0123456789a', 1400))
        self.refused(linux_net.delete_device, 'br-int')
        self.refused(linux_net.add_to_bridge, 'lo', 'br-int')
        self.refused(linux_net.move_to_netns, 'eth0', NETNS)

    def test_bad_values_are_refused(self):
        self.refused(linux_net.create_veth_pair, 'tap0123456789a',
                     'vns0123456789a', 10)
        self.refused(linux_net.create_veth_pair, 'tap0123456789a',
                     'vns0123456789a', '1400')
        self.refused(linux_net.announce, NETNS, 'eth0', '01:00:5e:00:00:01',
                     ['10.0.0.5'])
        self.refused(linux_net.announce, NETNS, 'eth0', 'fa:16:3e:00:00:01',
                     ['fd00::5'])
        self.refused(linux_net.configure_in_netns, NETNS, 'vns0123456789a',
                     'eth0', 'fa:16:3e:00:00:01', 1400, ['10.0.0.5'],
                     [], [])
        self.refused(linux_net.configure_in_netns, NETNS, 'vns0123456789a',
                     'eth0', 'fa:16:3e:00:00:01', 1400, ['10.0.0.5/24'],
                     [], [['10.9.0.0/16', 'fd00::1']])
        self.refused(linux_net.configure_in_netns, NETNS, 'vns0123456789a',
                     'eth0;id', 'fa:16:3e:00:00:01', 1400, [], [], [])

    def test_namespaces_outside_dockers_are_refused(self):
        for path in ('/proc/1/ns/net', '/run/netns/x',
                     '/run/docker/netns/default',
                     '/run/docker/netns/../netns/0123456789ab',
                     '/run/docker/netns/0123456789ab/',
                     'run/docker/netns/0123456789ab',
                     '/run/docker/netns/0123456789AB'):
            self.assertIn('refused', self.refused(
                linux_net.move_to_netns, 'vns0123456789a', path), path)

    def netns_folder(self):
        folder = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              'netns')
        os.mkdir(folder)
        return folder

    def test_a_folder_others_can_write_is_refused(self):
        path = os.path.join(self.netns_folder(), '0123456789ab')
        open(path, 'w').close()
        # /tmp: anyone may create files there
        self.assertIn('not writable by root only', self.refused(
            linux_net.move_to_netns, 'vns0123456789a', path))

    def test_a_file_that_is_no_namespace_is_refused(self):
        folder = self.netns_folder()
        self.patch(arguments, '_root_only', lambda path: True)
        fake = os.path.join(folder, '0123456789ab')
        open(fake, 'w').close()
        self.assertIn('not a network namespace', self.refused(
            linux_net.move_to_netns, 'vns0123456789a', fake))
        link = os.path.join(folder, 'abcdef012345')
        os.symlink('/proc/self/ns/net', link)
        self.assertIn('symlink', self.refused(
            linux_net.move_to_netns, 'vns0123456789a', link))

    def test_root_only_folders(self):
        folder = self.netns_folder()
        os.chmod(folder, 0o755)
        self.assertFalse(arguments._root_only(folder))   # /tmp is 1777
        self.assertTrue(arguments._root_only('/proc/self'))

    def test_accepted_calls_reach_netlink(self):
        linux_net.create_veth_pair('tap0123456789a', 'vns0123456789a', None)
        linux_net.delete_device('qvo0123456789a')
        self.assertEqual([('create_veth_pair', 'tap0123456789a',
                           'vns0123456789a', None),
                          ('delete_device', 'qvo0123456789a')], self.done)


class TestNoProgram(testtools.TestCase):

    def test_the_daemons_code_runs_no_program(self):
        # a program exec'd by the root daemon would get every capability
        # back: links, addresses and routes go over netlink in the daemon
        for module in (linux_net, netlink, arguments):
            source = inspect.getsource(module)
            for word in ('subprocess', 'processutils', 'os.exec', 'os.spawn',
                         'os.system', 'os.popen', 'Popen', 'pty.'):
                self.assertNotIn(word, source, module.__name__)


class TestCapabilities(testtools.TestCase):

    def test_reads_the_effective_set(self):
        status = self.useFixture(fixtures.TempDir()).join('status')
        with open(status, 'w') as f:
            f.write('Name:\tx\nCapEff:\t0000000000203000\n')
        self.assertEqual([12, 13, 21], netlink.effective_capabilities(status))


class FakeIPRoute(object):
    """link_lookup finds the device; link('del') meets the kernel's ``err``."""

    def __init__(self, err):
        self.err = err

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def link_lookup(self, ifname):
        return [7]

    def link(self, command, index):
        raise netlink.pyroute2.NetlinkError(self.err)


class TestDeleteDevice(testtools.TestCase):

    def use(self, err):
        self.useFixture(fixtures.MockPatch(
            'nova_docker_vmct.privsep.netlink.pyroute2.IPRoute',
            lambda: FakeIPRoute(err)))

    def test_gone_between_lookup_and_delete_is_not_there(self):
        # the veth of a stopped container: the kernel removes it with its
        # peer's netns, some time after docker says the container stopped
        self.use(errno.ENODEV)
        self.assertFalse(netlink.delete_device('tap0123456789a'))

    def test_other_errors_are_raised(self):
        self.use(errno.EPERM)
        e = self.assertRaises(netlink.pyroute2.NetlinkError,
                              netlink.delete_device, 'tap0123456789a')
        self.assertEqual(errno.EPERM, e.code)
