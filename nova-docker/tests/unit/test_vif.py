import testtools

from nova_docker_vmct import vif as vif_plan

from tests import helpers


class TestPlan(testtools.TestCase):

    def test_plan_from_nova_vif(self):
        vif = helpers.vif(port_id='0123456789abcdef-port',
                          mac='fa:16:3e:aa:bb:cc',
                          address='10.0.0.5', cidr='10.0.0.0/24',
                          gateway='10.0.0.1', bridge='br-int', mtu=1442,
                          routes=[('172.16.0.0/16', '10.0.0.254')],
                          dns=['10.0.0.2'],
                          v6=('fd00::/64', 'fd00::5', 'fd00::1'))
        p = vif_plan.plan(vif, 1, 'br-default')
        self.assertEqual('0123456789abcdef-port', p.port_id)
        self.assertEqual('tap0123456789a', p.host_dev)
        self.assertEqual('vns0123456789a', p.peer_dev)
        self.assertEqual('eth1', p.ifname)
        self.assertEqual('br-int', p.bridge)
        self.assertEqual(1442, p.mtu)
        self.assertEqual(('10.0.0.5/24', 'fd00::5/64'), p.addresses)
        self.assertEqual(('10.0.0.1', 'fd00::1'), p.gateways)
        self.assertEqual((vif_plan.Route('172.16.0.0/16', '10.0.0.254'),),
                         p.routes)
        self.assertEqual(('10.0.0.2',), p.nameservers)

    def test_names_fit_linux_limit(self):
        self.assertEqual(14, len(vif_plan.host_dev_name('x' * 36)))
        self.assertEqual(14, len(vif_plan.peer_dev_name('x' * 36)))
        self.assertEqual('tapabc', vif_plan.host_dev_name('zzz', 'tapabc'))

    def test_bridge_falls_back_to_details_then_default(self):
        vif = helpers.vif(bridge=None)
        self.assertEqual('br-default',
                         vif_plan.plan(vif, 0, 'br-default').bridge)
        vif['details']['bridge_name'] = 'br-x'
        self.assertEqual('br-x', vif_plan.plan(vif, 0, 'br-default').bridge)

    def test_no_mtu_no_gateway(self):
        p = vif_plan.plan(helpers.vif(mtu=None, gateway=None), 0, 'br')
        self.assertIsNone(p.mtu)
        self.assertEqual((), p.gateways)
        cmds = vif_plan.container_commands(p)
        self.assertFalse(any('route' in c for c in cmds))
        self.assertNotIn('mtu', vif_plan.veth_commands(p, 1)[0])

    def test_default_route_only_from_first_interface_per_family(self):
        nw = [helpers.vif(address='10.0.0.5', gateway='10.0.0.1'),
              helpers.vif(address='10.1.0.5', cidr='10.1.0.0/24',
                          gateway='10.1.0.1',
                          v6=('fd00::/64', 'fd00::5', 'fd00::1'))]
        plans = vif_plan.plans(nw, 'br-int')
        self.assertEqual(('10.0.0.1',), plans[0].gateways)
        self.assertEqual(('fd00::1',), plans[1].gateways)
        self.assertEqual(['eth0', 'eth1'], [p.ifname for p in plans])


class TestCommands(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.p = vif_plan.plan(
            helpers.vif(port_id='port-1', mac='fa:16:3e:00:00:01',
                        address='10.0.0.5', cidr='10.0.0.0/24',
                        gateway='10.0.0.1', bridge='br-int', mtu=1400,
                        routes=[('172.16.0.0/16', '10.0.0.254')],
                        v6=('fd00::/64', 'fd00::5', None)),
            0, 'br-int')

    def test_every_command_is_a_list_of_strings(self):
        cmds = (vif_plan.veth_commands(self.p, 42) +
                vif_plan.container_commands(self.p) +
                [vif_plan.ovs_attach_command(self.p, 'uuid'),
                 vif_plan.ovs_attach_command(self.p, 'uuid',
                                             keep={'tag': 1, 'ofport': 2}),
                 vif_plan.ovs_wiring_command(self.p),
                 vif_plan.ovs_detach_command(self.p),
                 vif_plan.linuxbridge_attach_command(self.p),
                 vif_plan.netns_prefix(42)])
        for cmd in cmds:
            self.assertIsInstance(cmd, list)
            for word in cmd:
                self.assertIsInstance(word, str)

    def test_veth_commands(self):
        self.assertEqual([
            ['ip', 'link', 'add', 'tapport-1', 'mtu', '1400', 'type', 'veth',
             'peer', 'name', 'vnsport-1', 'mtu', '1400'],
            ['ip', 'link', 'set', 'vnsport-1', 'netns', '42'],
            ['ip', 'link', 'set', 'tapport-1', 'up'],
        ], vif_plan.veth_commands(self.p, 42))

    def test_ovs_attach_sets_neutron_external_ids(self):
        cmd = vif_plan.ovs_attach_command(self.p, 'inst-uuid',
                                          db='unix:/x.sock', timeout=30)
        self.assertEqual(['ovs-vsctl', '--timeout=30', '--db=unix:/x.sock',
                          '--', '--if-exists', 'del-port', 'tapport-1',
                          '--', 'add-port', 'br-int', 'tapport-1',
                          '--', 'set', 'Interface', 'tapport-1',
                          'external_ids:iface-id=port-1',
                          'external_ids:iface-status=active',
                          'external_ids:attached-mac=fa:16:3e:00:00:01',
                          'external_ids:vm-uuid=inst-uuid',
                          'mtu_request=1400'], cmd)

    def test_ovs_detach(self):
        self.assertEqual(['ovs-vsctl', '--timeout=120', '--', '--if-exists',
                          'del-port', 'br-int', 'tapport-1'],
                         vif_plan.ovs_detach_command(self.p))

    def test_container_commands(self):
        self.assertEqual([
            ['ip', 'link', 'set', 'lo', 'up'],
            ['ip', 'link', 'set', 'vnsport-1', 'name', 'eth0'],
            ['ip', 'link', 'set', 'eth0', 'address', 'fa:16:3e:00:00:01',
             'mtu', '1400'],
            ['ip', 'addr', 'add', '10.0.0.5/24', 'dev', 'eth0'],
            ['ip', 'addr', 'add', 'fd00::5/64', 'dev', 'eth0', 'nodad'],
            ['ip', 'link', 'set', 'eth0', 'up'],
            ['ip', 'route', 'replace', 'default', 'via', '10.0.0.1',
             'dev', 'eth0'],
            ['ip', 'route', 'replace', '172.16.0.0/16', 'via',
             '10.0.0.254', 'dev', 'eth0'],
        ], vif_plan.container_commands(self.p))
        self.assertNotIn(['ip', 'link', 'set', 'lo', 'up'],
                         vif_plan.container_commands(self.p, first=False))

    def test_netns_prefix(self):
        self.assertEqual(['nsenter', '--net=/proc/42/ns/net', '--'],
                         vif_plan.netns_prefix('42'))

    def test_ip_batch(self):
        self.assertEqual('link set lo up\naddr add 10.0.0.5/24 dev eth0\n',
                         vif_plan.ip_batch([
                             ['ip', 'link', 'set', 'lo', 'up'],
                             ['ip', 'addr', 'add', '10.0.0.5/24', 'dev',
                              'eth0']]))
        for bad in (['ip', 'link', 'set', 'a b', 'up'],
                    ['ip', 'link', 'set', '', 'up'],
                    ['ip', 'link', 'set', '#x', 'up'],
                    ['nsenter', 'ip']):
            self.assertRaises(ValueError, vif_plan.ip_batch, [bad])


class TestAnnounce(testtools.TestCase):

    def plan(self, **kw):
        return vif_plan.plan(helpers.vif(mac='fa:16:3e:aa:bb:cc', **kw), 0,
                             'br-int')

    def test_command_names_interface_mac_and_ipv4_only(self):
        p = self.plan(address='10.0.0.5', cidr='10.0.0.0/24',
                      v6=('fd00::/64', 'fd00::5', 'fd00::1'))
        cmd = vif_plan.announce_command(p, '/venv/bin/python')
        self.assertEqual(['/venv/bin/python', '-c'], cmd[:2])
        self.assertEqual(['eth0', 'fa:16:3e:aa:bb:cc', '10.0.0.5'], cmd[3:])

    def test_no_ipv4_no_command(self):
        p = vif_plan.VifPlan('port', 'fa:16:3e:aa:bb:cc', 'br-int', 'tapx',
                             'vnsx', 'eth0', addresses=('fd00::5/64',))
        self.assertIsNone(vif_plan.announce_command(p, 'python3'))

    def test_frame_is_a_gratuitous_arp_request(self):
        sent = []

        class Sock(object):
            def __init__(self, family, kind):
                self.family = family

            def bind(self, addr):
                sent.append(('bind', addr))

            def send(self, frame):
                sent.append(('send', frame))

        import socket
        import sys
        p = self.plan(address='10.0.0.5', cidr='10.0.0.0/24')
        cmd = vif_plan.announce_command(p, 'python3')
        self.patch(socket, 'socket', Sock)
        self.patch(sys, 'argv', ['-c'] + cmd[3:])
        exec(compile(cmd[2], '<garp>', 'exec'), {})
        self.assertEqual(('bind', ('eth0', 0)), sent[0])
        frame = sent[1][1]
        mac = bytes.fromhex('fa163eaabbcc')
        ip = bytes([10, 0, 0, 5])
        self.assertEqual(60, len(frame))
        self.assertEqual(b'\xff' * 6 + mac + b'\x08\x06', frame[:14])
        # htype 1, ptype IPv4, hlen 6, plen 4, op 1 (request)
        self.assertEqual(b'\x00\x01\x08\x00\x06\x04\x00\x01', frame[14:22])
        # sender = target = the port's own address
        self.assertEqual(mac + ip + b'\x00' * 6 + ip, frame[22:42])


class TestOvsWiring(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.p = vif_plan.plan(helpers.vif(port_id='port-1'), 0, 'br-int')

    def test_wiring_command_reads_tag_and_ofport_of_a_maybe_missing_port(self):
        self.assertEqual(['ovs-vsctl', '--timeout=120',
                          '--', '--if-exists', 'get', 'Port', 'tapport-1',
                          'tag',
                          '--', '--if-exists', 'get', 'Interface',
                          'tapport-1', 'ofport'],
                         vif_plan.ovs_wiring_command(self.p))

    def test_parse(self):
        parse = vif_plan.parse_ovs_wiring
        self.assertEqual({'tag': 7, 'ofport': 93}, parse('7\n93\n'))
        self.assertEqual({'tag': None, 'ofport': 93}, parse('[]\n93\n'))
        self.assertEqual({'tag': 7, 'ofport': None}, parse('7\n-1\n'))
        self.assertEqual({'tag': None, 'ofport': None}, parse(''))
        self.assertEqual({'tag': None, 'ofport': None}, parse(None))

    def test_attach_keeps_tag_and_ofport(self):
        cmd = vif_plan.ovs_attach_command(self.p, 'inst',
                                          keep={'tag': 7, 'ofport': 93})
        self.assertEqual(['add-port', 'br-int', 'tapport-1', 'tag=7', '--'],
                         cmd[cmd.index('add-port'):cmd.index('add-port') + 5])
        self.assertEqual('ofport_request=93', cmd[-2])
        fresh = vif_plan.ovs_attach_command(self.p, 'inst',
                                            keep={'tag': None, 'ofport': None})
        self.assertEqual(vif_plan.ovs_attach_command(self.p, 'inst'), fresh)
        self.assertFalse([w for w in fresh
                          if w.startswith(('tag=', 'ofport_request='))])


class TestUnsupported(testtools.TestCase):
    """Ports bound for a plug the driver cannot do are named, with the type."""

    def test_an_ovs_port_of_vnic_type_normal_is_plugged(self):
        self.assertIsNone(vif_plan.unsupported(helpers.vif(), 'ovs'))

    def test_sriov_vnic_types_are_refused(self):
        for vnic_type in ('direct', 'macvtap', 'direct-physical', 'vdpa'):
            vif = helpers.vif(port_id='p1')
            vif['vnic_type'] = vnic_type
            reason = vif_plan.unsupported(vif, 'ovs')
            self.assertIn('port p1 has vnic_type %s' % vnic_type, reason)
            self.assertIn('only vnic_type normal', reason)

    def test_other_vif_types_are_refused(self):
        vif = helpers.vif(port_id='p2')
        vif['type'] = 'vhostuser'
        self.assertIn('port p2 has vif_type vhostuser: with [docker] host_attach = ovs',
                      vif_plan.unsupported(vif, 'ovs'))
        # host_attach linuxbridge (tests, no Neutron agents) takes any vif_type
        self.assertIsNone(vif_plan.unsupported(vif, 'linuxbridge'))
        self.assertIsNone(vif_plan.unsupported(helpers.vif(), 'linuxbridge'))

    def test_a_hybrid_plug_is_plugged_not_refused(self):
        vif = helpers.vif(port_id='p3')
        vif['details']['ovs_hybrid_plug'] = True
        self.assertIsNone(vif_plan.unsupported(vif, 'ovs'))


class TestHybridPlug(testtools.TestCase):

    def plan(self, hybrid=True, mtu=1450):
        vif = helpers.vif(port_id='0123456789abcdef', mtu=mtu)
        vif['details']['ovs_hybrid_plug'] = hybrid
        return vif_plan.plan(vif, 0, 'br-int')

    def test_novas_device_names(self):
        p = self.plan()
        self.assertTrue(p.hybrid)
        self.assertEqual(('tap0123456789a', 'qbr0123456789a', 'qvb0123456789a',
                          'qvo0123456789a'),
                         (p.host_dev, p.qbr_dev, p.qvb_dev, p.ovs_dev))
        self.assertEqual((p.host_dev, p.peer_dev, p.qvb_dev, p.qbr_dev), p.host_devs)

    def test_without_the_binding_detail_the_tap_goes_to_ovs(self):
        p = self.plan(hybrid=False)
        self.assertFalse(p.hybrid)
        self.assertEqual(p.host_dev, p.ovs_dev)
        self.assertEqual((p.host_dev, p.peer_dev), p.host_devs)

    def test_tap_in_its_bridge_and_qvo_on_ovs(self):
        p = self.plan()
        cmds = vif_plan.hybrid_commands(p)
        self.assertIn(['ip', 'link', 'add', 'qbr0123456789a', 'type', 'bridge',
                       'forward_delay', '0', 'stp_state', '0'], cmds)
        self.assertIn(['ip', 'link', 'add', 'qvb0123456789a', 'mtu', '1450', 'type', 'veth',
                       'peer', 'name', 'qvo0123456789a', 'mtu', '1450'], cmds)
        self.assertIn(['ip', 'link', 'set', 'qvb0123456789a', 'master', 'qbr0123456789a'],
                      cmds)
        self.assertEqual(['ip', 'link', 'set', 'tap0123456789a', 'master', 'qbr0123456789a'],
                         cmds[-1])
        vif_plan.ip_batch(cmds)     # every word fits ip -batch
        attach = vif_plan.ovs_attach_command(p, 'uuid')
        self.assertIn('qvo0123456789a', attach)
        self.assertNotIn('tap0123456789a', attach)
        self.assertIn('qvo0123456789a', vif_plan.ovs_detach_command(p))


class TestPrivilegedArgv(testtools.TestCase):
    """What the privsep daemon agrees to run as root."""

    def plan(self):
        return vif_plan.plan(helpers.vif(mac='fa:16:3e:aa:bb:cc',
                                         address='10.0.0.5',
                                         cidr='10.0.0.0/24'), 0, 'br-int')

    def test_every_plugging_command_is_allowed_as_built(self):
        p = self.plan()
        prefix = vif_plan.netns_prefix(4242)
        for cmd in [['ip', '-batch', '-'], prefix + ['ip', '-batch', '-'],
                    ['ip', 'link', 'del', p.host_dev],
                    vif_plan.ovs_attach_command(p, 'uuid', db='tcp:x:6640'),
                    vif_plan.ovs_detach_command(p),
                    vif_plan.ovs_wiring_command(p),
                    vif_plan.linuxbridge_attach_command(p)]:
            self.assertEqual(cmd, vif_plan.privileged_argv(cmd, '/py'))

    def test_announce_runs_with_the_daemons_interpreter(self):
        cmd = vif_plan.netns_prefix(7) + vif_plan.announce_command(
            self.plan(), '/caller/python')
        argv = vif_plan.privileged_argv(cmd, '/daemon/python')
        self.assertEqual(vif_plan.netns_prefix(7) + ['/daemon/python'],
                         argv[:4])
        self.assertEqual(cmd[4:], argv[4:])

    def test_anything_else_is_refused(self):
        prefix = vif_plan.netns_prefix(7)
        for cmd in [[], ['sh', '-c', 'id'], ['/usr/sbin/ip', 'link'],
                    ['nsenter', '--net=/proc/7/ns/net', '--', 'sh'],
                    ['nsenter', '--mount=/proc/7/ns/mnt', '--', 'ip'],
                    ['nsenter', '--net=/proc/self/ns/net', '--', 'ip'],
                    ['nsenter', '--net=/proc/7/ns/net', 'ip'],
                    prefix + ['python3', '-c', 'import os'],
                    ['python3', '-c', vif_plan._GARP]]:
            self.assertRaises(ValueError, vif_plan.privileged_argv, cmd,
                              '/py')
