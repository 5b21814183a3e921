import testtools

from nova_docker_vmct import network
from nova_docker_vmct import privsep
from nova_docker_vmct.privsep import linux_net


class TestPrivsep(testtools.TestCase):

    def test_plugger_runs_through_the_privsep_entrypoint(self):
        self.assertIs(linux_net.run_plug_command,
                      network.Plugger(None)._run)

    def test_context_is_found_by_its_pypath(self):
        # privsep-helper looks the context up by this name
        from oslo_utils import importutils
        self.assertIs(privsep.vif_plug,
                      importutils.import_class(privsep.vif_plug.pypath))

    def test_entrypoint_refuses_other_commands_before_running(self):
        privsep.vif_plug.set_client_mode(False)
        self.addCleanup(privsep.vif_plug.set_client_mode, True)
        ran = []
        self.patch(linux_net, 'execute', lambda *a: ran.append(a))
        self.assertRaises(ValueError, linux_net.run_plug_command,
                          ['touch', '/tmp/x'])
        self.assertEqual([], ran)
        linux_net.run_plug_command(['ip', 'link', 'show'], False, None)
        self.assertEqual([(['ip', 'link', 'show'], False, None)], ran)
