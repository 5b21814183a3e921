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

    def test_the_host_end_is_named_by_the_driver_not_the_binding(self):
        vif = helpers.vif(port_id='0123456789abcdef')
        vif['devname'] = 'eth0'
        self.assertEqual('tap0123456789a',
                         vif_plan.plan(vif, 0, 'br-int').host_dev)

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

    def test_default_route_only_from_first_interface_per_family(self):
        nw = [helpers.vif(address='10.0.0.5', gateway='10.0.0.1'),
              helpers.vif(address='10.1.0.5', cidr='10.1.0.0/24',
                          gateway='10.1.0.1',
                          v6=('fd00::/64', 'fd00::5', 'fd00::1'))]
        plans = vif_plan.plans(nw, 'br-int')
        self.assertEqual(('10.0.0.1',), plans[0].gateways)
        self.assertEqual(('fd00::1',), plans[1].gateways)
        self.assertEqual(['eth0', 'eth1'], [p.ifname for p in plans])


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


class TestOwnNames(testtools.TestCase):
    """What the privsep daemons accept as the driver's devices."""

    def test_every_device_of_a_port_is_of_the_driver_s_naming(self):
        for hybrid in (False, True):
            vif = helpers.vif(port_id='8f3e2c1a-9b7d-4e6f-a1b2-c3d4e5f60718')
            vif['details']['ovs_hybrid_plug'] = hybrid
            p = vif_plan.plan(vif, 0, 'br-int')
            for dev in p.host_devs + (p.ovs_dev,):
                self.assertTrue(vif_plan.OWN_DEVICE_NAME.fullmatch(dev), dev)
            self.assertTrue(vif_plan.INSIDE_NAME.fullmatch(p.ifname))

    def test_other_names_are_not(self):
        for name in ('eth0', 'br-int', 'lo', 'tap', 'tap0123456789ab',
                     'tapABCDEF01234', 'tap01234567 9a', 'tap0123456789a\n',
                     'veth0123456789', '../tap0123456'):
            self.assertIsNone(vif_plan.OWN_DEVICE_NAME.fullmatch(name), name)


class TestAnnounce(testtools.TestCase):

    def test_ipv4_addresses_only(self):
        p = vif_plan.plan(helpers.vif(address='10.0.0.5', cidr='10.0.0.0/24',
                                      v6=('fd00::/64', 'fd00::5', 'fd00::1')),
                          0, 'br-int')
        self.assertEqual(('10.0.0.5',), vif_plan.ipv4_addresses(p))

    def test_frame_is_a_gratuitous_arp_request(self):
        frame = vif_plan.garp_frame('fa:16:3e:aa:bb:cc', '10.0.0.5')
        mac = bytes.fromhex('fa163eaabbcc')
        ip = bytes([10, 0, 0, 5])
        self.assertEqual(60, len(frame))
        self.assertEqual(b'\xff' * 6 + mac + b'\x08\x06', frame[:14])
        # htype 1, ptype IPv4, hlen 6, plen 4, op 1 (request)
        self.assertEqual(b'\x00\x01\x08\x00\x06\x04\x00\x01', frame[14:22])
        # sender = target = the port's own address
        self.assertEqual(mac + ip + b'\x00' * 6 + ip, frame[22:42])
