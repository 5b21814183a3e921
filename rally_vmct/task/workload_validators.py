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
"""Task validators for the benchmark scenarios' workload arguments."""

from rally.common import validation

from rally_vmct.workloads import plan as plan_lib
from rally_vmct.workloads import repeat
from rally_vmct.workloads import storage


@validation.configure(name="vmct_workloads")
class WorkloadsValidator(validation.Validator):
    """The ``workloads`` list names known tools, tests and parameters.

    :param param_name: scenario argument holding the list
    :param peer_param: argument that must be set when a netperf workload is
        listed (None: the scenario provides a peer itself)
    """

    def __init__(self, param_name="workloads", peer_param=None):
        super().__init__()
        self.param_name = param_name
        self.peer_param = peer_param

    def validate(self, context, config, plugin_cls, plugin_cfg):
        args = (config or {}).get("args", {})
        if self.param_name not in args:
            return  # the scenario's default plan is valid by construction
        try:
            workloads = plan_lib.parse_plan(args[self.param_name])
        except plan_lib.PlanError as e:
            self.fail("Invalid argument '%s': %s" % (self.param_name, e))
        if (self.peer_param and "netperf" in plan_lib.needed_tools(workloads)
                and not args.get(self.peer_param)):
            self.fail("Argument '%s' lists netperf workloads, so '%s' must name the "
                      "netserver peer, e.g. {host: 10.0.0.2, control_port: 12865, "
                      "data_port: 12866}" % (self.param_name, self.peer_param))


@validation.configure(name="vmct_non_empty_list")
class NonEmptyListValidator(validation.Validator):
    """A list argument has at least one item (JSON schema minItems for typed args).

    :param param_name: scenario argument that must be a non-empty list
    """

    def __init__(self, param_name):
        super().__init__()
        self.param_name = param_name

    def validate(self, context, config, plugin_cls, plugin_cfg):
        value = (config or {}).get("args", {}).get(self.param_name)
        if not isinstance(value, list) or not value:
            self.fail("Argument '%s' must be a non-empty list, got %r"
                      % (self.param_name, value))


@validation.configure(name="vmct_workload_options")
class WorkloadOptionsValidator(validation.Validator):
    """``fileio_dir`` is an absolute path; ``min_runs``/``max_runs``/``cv_target`` fit.

    The same checks the scenarios make at run time (storage.check_fileio_dir,
    repeat.RunPolicy), reported before the task starts.
    """

    def validate(self, context, config, plugin_cls, plugin_cfg):
        args = (config or {}).get("args", {})
        try:
            if args.get("fileio_dir") is not None:
                storage.check_fileio_dir(args["fileio_dir"])
            repeat.RunPolicy(args.get("min_runs", 1), args.get("max_runs"),
                             args.get("cv_target"))
        except (storage.StorageError, repeat.RunPolicyError) as e:
            self.fail(str(e))
