"""Nova objects for the driver tests (instances, network info, images),
instance action events recorded, a fake clock."""

import uuid

import fixtures

from nova import context as nova_context
from nova.network import model as network_model
from nova import objects
from nova.tests.unit import fake_instance

objects.register_all()


def context():
    return nova_context.RequestContext('fake-user', 'fake-project',
                                       is_admin=False)


def flavor(vcpus=1, memory_mb=256, root_gb=1, extra_specs=None):
    return objects.Flavor(id=1, name='m1.vmct', memory_mb=memory_mb,
                          vcpus=vcpus, root_gb=root_gb, ephemeral_gb=0,
                          flavorid='1', swap=0, rxtx_factor=1.0,
                          vcpu_weight=1, disabled=False, is_public=True,
                          extra_specs=dict(extra_specs or {}), projects=[])


def instance(ctx=None, key_data=None, hostname='vmct-test', vcpus=1,
             memory_mb=256, network_info=None, root_gb=1, extra_specs=None,
             **updates):
    inst = fake_instance.fake_instance_obj(
        ctx or context(), uuid=str(uuid.uuid4()), hostname=hostname,
        key_data=key_data,
        flavor=flavor(vcpus, memory_mb, root_gb, extra_specs), **updates)
    inst.info_cache = objects.InstanceInfoCache(
        network_info=network_model.NetworkInfo(network_info or []))
    inst.obj_reset_changes(recursive=True)
    return inst


def image(image_id=None, container_format='docker', **props):
    """A Glance image as Nova's compute manager gets it (a dict)."""
    return {'id': image_id or str(uuid.uuid4()), 'name': 'vmct-workload',
            'container_format': container_format, 'disk_format': 'raw',
            'status': 'active', 'properties': props}


def image_meta(image_id=None, container_format='docker', **props):
    return objects.ImageMeta.from_dict(
        image(image_id, container_format, **props))


def vif(port_id=None, mac='fa:16:3e:00:00:01', address='198.51.100.10',
        cidr='198.51.100.0/24', gateway='198.51.100.1', bridge='br-int',
        mtu=1400, active=True, routes=(), dns=(), v6=None):
    """A nova.network.model.VIF with one IPv4 (and optional IPv6) subnet."""
    port_id = port_id or str(uuid.uuid4())
    subnets = [network_model.Subnet(
        cidr=cidr,
        ips=[network_model.FixedIP(address=address)],
        gateway=network_model.IP(address=gateway) if gateway else None,
        routes=[network_model.Route(
            cidr=r[0], gateway=network_model.IP(address=r[1]))
            for r in routes],
        dns=[network_model.IP(address=d) for d in dns])]
    if v6:
        subnets.append(network_model.Subnet(
            cidr=v6[0], ips=[network_model.FixedIP(address=v6[1])],
            gateway=network_model.IP(address=v6[2]) if v6[2] else None))
    network = network_model.Network(
        id=str(uuid.uuid4()), bridge=bridge, label='vmct-net',
        subnets=subnets)
    if mtu:
        network['meta']['mtu'] = mtu
    return network_model.VIF(
        id=port_id, address=mac, network=network,
        type=network_model.VIF_TYPE_OVS,
        devname=('tap' + port_id)[:network_model.NIC_NAME_LEN],
        vnic_type=network_model.VNIC_TYPE_NORMAL,
        details={'port_filter': True, 'ovs_hybrid_plug': False,
                 'datapath_type': 'netdev', 'bridge_name': bridge},
        active=active)


class Clock(object):
    """A monotonic clock that moves only when a test moves it."""

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds

    def until(self, when):
        self.now = max(self.now, when)


class ActionEvents(fixtures.Fixture):
    """InstanceActionEvent creation recorded, not sent anywhere.

    What :class:`nova_docker_vmct.steps.ActionEvents` calls once the spawn
    is over, sent at once (no background thread). ``calls``: ('create',
    event, request id, instance uuid, host, result, details, start time,
    finish time) and ('finish', event, details) for a failed step's;
    ``fail_create``/``fail_finish``: raised when set.
    """

    def __init__(self):
        super().__init__()
        self.calls = []
        self.fail_create = self.fail_finish = None

    def _setUp(self):
        fixture = self

        def create(event, instance_uuid, request_id):
            fixture.calls.append((
                'create', event.event, request_id, instance_uuid, event.host,
                event.obj_attr_is_set('result') and event.result or None,
                event.obj_attr_is_set('details') and event.details or None,
                event.start_time,
                event.obj_attr_is_set('finish_time') and event.finish_time
                or None))
            if fixture.fail_create:
                raise fixture.fail_create
        self.useFixture(fixtures.MockPatch(
            'nova.objects.InstanceActionEvent.create', create))
        self.useFixture(fixtures.MockPatch(
            'nova.objects.InstanceActionEvent.event_finish_with_failure',
            side_effect=self._finish))
        self.useFixture(fixtures.MockPatch(
            'nova_docker_vmct.compat.spawn',
            side_effect=lambda func, *args: func(*args)))

    def _finish(self, context, instance_uuid, event_name, exc_val=None,
                exc_tb=None, want_result=True):
        self.calls.append(('finish', event_name, exc_val))
        if self.fail_finish:
            raise self.fail_finish

    def finished(self):
        """(event, 'Success' or 'Error'), in the order the steps ended."""
        finished = {c[1] for c in self.calls if c[0] == 'finish'}
        return [(c[1], 'Error' if c[1] in finished else c[5])
                for c in self.calls if c[0] == 'create']


class OsVifOptions(fixtures.Fixture):
    """os-vif's plugins loaded, their options ([os_vif_ovs]) registered.

    As nova-compute has them from its start.

    ``ovsdb_connection``: os-vif's OVSDB for the rest of this process (its
    plugins read it when they load, once: they are loaded again with it).
    """

    def __init__(self, ovsdb_connection=None):
        super().__init__()
        self.ovsdb_connection = ovsdb_connection

    def _setUp(self):
        import os_vif
        from nova import conf
        os_vif.initialize()
        wanted = self.ovsdb_connection
        if wanted and conf.CONF.os_vif_ovs.ovsdb_connection != wanted:
            conf.CONF.set_override('ovsdb_connection', wanted,
                                   group='os_vif_ovs')
            os_vif.initialize(reset=True)
