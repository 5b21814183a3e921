"""Fake Nova, Glance and SSH for the vmct_* contexts' tests."""

from unittest import mock

from rally import plugins
import testtools

from rally_vmct import opts
from rally_vmct.task.contexts import helper_server
from rally_vmct.task.contexts import netperf_peer
from rally_vmct.task.contexts import workload_image
from rally_vmct.timing import session as server_session
from tests.unit.timing import fakes
from tests.unit.task.scenarios.benchmark import fakes as benchfakes

KIND = {"name": "kvm", "image": {"name": "guest"}, "flavor": {"name": "tiny"},
        "image_id": "img-1", "flavor_id": "flv-1", "availability_zone": "qemu"}
ALL_THERE = (0, "", "")


def missing(*tools):
    return (0, "".join("vmct-missing=%s\n" % t for t in tools), "")


class ContextTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        plugins.load()
        opts.register()
        self.clock = fakes.FakeClock()
        self.glance = benchfakes.FakeGlance()
        self.nova = benchfakes.SnapshotNova(self.clock, self.glance)
        self.commands = []
        self.answers = [("command -v", ALL_THERE), ("netserver -p", (0, "", ""))]
        test = self

        class Session(server_session.ServerSession):
            clock = self.clock

            def make_probe(self, name):
                return fakes.FakeProbe(test.nova, self.server.id, 1.0)

            def ssh_client(self):
                return benchfakes.FakeSSH(test.answers, test.commands, self.address)

        self.patch((helper_server.HelperServer, "session_class", Session))
        clients = benchfakes.FakeClients(self.nova, self.glance)
        for cls in (netperf_peer.NetperfPeer, workload_image.WorkloadImage):
            self.patch((cls, "clients_factory", staticmethod(lambda user: clients)))

    def patch(self, args):
        patcher = mock.patch.object(*args)
        patcher.start()
        self.addCleanup(patcher.stop)

    def context(self, name, config, tenants=1, keypair=True):
        users, tenant_map = [], {}
        for i in range(tenants):
            tenant_id = "t%d" % i
            user = {"id": "u%d" % i, "tenant_id": tenant_id,
                    "credential": fakes.Obj(profiler_hmac_key=None, profiler_conn_str=None)}
            if keypair:
                user["keypair"] = {"name": "kp%d" % i, "private": "KEY"}
            users.append(user)
            tenant_map[tenant_id] = {"id": tenant_id, "users": [user],
                                     "networks": [{"id": "net-%d" % i}]}
        return {"task": {"uuid": "task-uuid"}, "owner_id": "owner-uuid", "users": users,
                "tenants": tenant_map, "config": {name: config}}

    def alive(self):
        return benchfakes.live_servers(self.nova)
