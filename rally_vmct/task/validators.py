# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Validators of the rally-vmct scenario arguments (run by ``rally task validate``).

* ``vmct_kind`` (syntax): what the ``kind`` JSON schema cannot say.
* ``vmct_access`` (syntax): ``probe``, ``proxy_command``, ``wait_for_ssh``,
  ``boot_args`` and the SSH key source fit together.
* ``vmct_kind_resources`` (semantic, needs the cloud): the kind's image and
  flavor exist and the image fits the flavor (rally-openstack's
  ``image_valid_on_flavor`` applied to the nested ``kind.image``/``kind.flavor``).

Every message names the argument and says how to fix it.
"""

from rally.common import validation
from rally_openstack.common import validators as openstack_validators

from rally_vmct.common import probes
from rally_vmct.common import ssh as vmct_ssh
from rally_vmct import opts
from rally_vmct.task import kinds

RESERVED_BOOT_ARGS = ("name", "image", "flavor", "availability_zone", "scheduler_hints")


def _has_context(config, name):
    return any(key.split("@")[0] == name for key in (config.get("contexts") or {}))


@validation.configure(name="vmct_kind")
class KindValidator(validation.Validator):
    """Checks the ``kind`` argument beyond its JSON schema."""

    def __init__(self, param_name="kind"):
        super().__init__()
        self.param_name = param_name

    def validate(self, context, config, plugin_cls, plugin_cfg):
        kind = (config or {}).get("args", {}).get(self.param_name)
        if kind is None:
            return          # args-spec reports the missing argument
        wrong = kinds.problems(kind)
        if wrong:
            self.fail("Argument '%s' is invalid: %s" % (self.param_name, "; ".join(wrong)))


@validation.configure(name="vmct_access")
class AccessValidator(validation.Validator):
    """Checks that the reachability probe, proxy command, SSH and boot args fit together."""

    def validate(self, context, config, plugin_cls, plugin_cfg):
        config = config or {}
        args = config.get("args", {})
        probe = args.get("probe", "tcp")
        proxy = args.get("proxy_command")
        source = "Argument 'proxy_command'"
        if proxy is None:
            proxy = opts.get("ssh_proxy_command")
            source = "Option [vmct] ssh_proxy_command"
        if proxy:
            try:
                vmct_ssh.expand_proxy_command(proxy, "192.0.2.1", 22, "root")
            except ValueError as e:
                self.fail("%s is invalid: %s" % (source, e))
        if probe == "ping" and proxy:
            self.fail("Argument 'probe' is 'ping', which cannot go through the proxy command "
                      "(%s %r): use probe 'tcp' or 'ssh', or set proxy_command: ''"
                      % (source.lower(), proxy))
        if probe not in probes.PROBES:
            return          # args-spec reports it
        kind = args.get("kind") if isinstance(args.get("kind"), dict) else {}
        needs_ssh = probe == "ssh" or args.get("wait_for_ssh")
        if needs_ssh and not kind.get("ssh_key_file") and not _has_context(config, "keypair"):
            what = "probe: ssh" if probe == "ssh" else "wait_for_ssh: true"
            self.fail("Argument %r needs an SSH key: add the 'keypair' context to the "
                      "workload's contexts, or set kind.ssh_key_file" % what)
        boot_args = args.get("boot_args") or {}
        if isinstance(boot_args, dict):
            clash = sorted(set(boot_args) & set(RESERVED_BOOT_ARGS))
            if clash:
                self.fail("Argument 'boot_args' must not set %s: the scenario sets the name "
                          "and the kind sets image, flavor, availability_zone and "
                          "scheduler_hints" % ", ".join(repr(c) for c in clash))


@validation.add("required_platform", platform="openstack", users=True)
@validation.configure(name="vmct_kind_resources", platform="openstack")
class KindResourcesValidator(openstack_validators.ImageValidOnFlavorValidator):
    """The kind's image and flavor exist and the image fits the flavor."""

    def __init__(self, param_name="kind"):
        super().__init__(flavor_param="flavor", image_param="image")
        self.kind_param = param_name

    def validate(self, context, config, plugin_cls, plugin_cfg):
        kind = (config or {}).get("args", {}).get(self.kind_param)
        if not isinstance(kind, dict) or kinds.problems(kind):
            return          # the syntax validators report it
        flat = {"args": {"image": kind.get("image"), "flavor": kind.get("flavor")},
                "contexts": config.get("contexts", {})}
        try:
            super().validate(context, flat, plugin_cls, plugin_cfg)
        except validation.ValidationError as e:
            self.fail("Argument '%s' (kind %r): %s"
                      % (self.kind_param, kind.get("name"), e.message))
