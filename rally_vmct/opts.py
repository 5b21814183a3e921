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
"""[vmct] options, registered with Rally through the ``rally_plugins`` entry point.

Rally calls :func:`list_opts` at start-up and registers the result in its global
``CONF``; code reads them with :func:`get` so that a value set in rally.conf (or in
``--config-file``) is what the scenarios use.
"""

from oslo_config import cfg

GROUP = "vmct"


def _seconds(name, default, what, minimum=1.0):
    """A duration option (float seconds) whose help reads ``Seconds <what>``."""
    return cfg.FloatOpt(name, default=default, min=minimum, help="Seconds " + what)


VMCT_OPTS = [
    _seconds("poll_interval", 0.2, "between two Nova API polls of one server while timing a "
             "phase. Short, so that sub-second transitions (containers) are resolved.", 0.01),
    cfg.FloatOpt("poll_max_interval", default=2.0, min=0.01,
                 help="Upper bound of the poll interval when the waiter backs "
                      "off after Nova API errors."),
    cfg.FloatOpt("max_requests_per_second", default=5.0, min=0.1,
                 help="Cap on Nova API requests per second for one server, "
                      "whatever poll_interval says; keeps high-concurrency "
                      "runs gentle on the API."),
    cfg.StrOpt("poll_mode", default="per_server",
               choices=[("per_server", "every polled server is GET on its own, every "
                                       "poll_interval"),
                        ("batched", "one list of the servers changed since the previous "
                                    "poll (changes-since) every poll_interval, for every "
                                    "server a Rally worker process waits for, per Nova "
                                    "endpoint, project and user: fewer requests at high "
                                    "concurrency (tools/bench/poll_cost.py)")],
               help="How the servers whose phases are timed are polled."),
    _seconds("changes_since_margin", 2.0, "subtracted from the time of the previous batched "
             "poll in its changes-since filter (poll_mode batched): Nova's updated_at has "
             "whole seconds in MySQL, and Nova's clock may be behind this host's by up to "
             "the margin minus one second before changes are missed.", 0.0),
    _seconds("build_timeout", 600.0, "a server may take from create request to ACTIVE."),
    _seconds("delete_timeout", 300.0, "a server may take from delete request to gone."),
    _seconds("reboot_timeout", 600.0, "a reboot, stop or start may take to settle."),
    _seconds("network_timeout", 300.0, "an instance may take to become reachable."),
    _seconds("ssh_connect_timeout", 5.0, "for one SSH or TCP connection attempt.", 0.1),
    _seconds("command_timeout", 900.0, "one workload command may run inside an instance."),
    cfg.StrOpt("ssh_proxy_command", default=None,
               help="Command to reach instances through (OpenSSH ProxyCommand "
                    "syntax, %h and %p are replaced by host and port), e.g. "
                    "'ssh -W %h:%p bastion' or 'ip netns exec NS nc %h %p'. "
                    "Task arguments override it."),
]


def list_opts():
    """Options Rally registers: ``[(group, [opts])]``."""
    return [(GROUP, VMCT_OPTS)]


def register(conf=None):
    """Register the [vmct] options in ``conf`` (Rally's CONF by default)."""
    conf = conf or cfg.CONF
    conf.register_opts(VMCT_OPTS, group=GROUP)
    return conf


def get(name, conf=None):
    """Value of option ``[vmct] name``, registering the group if needed."""
    conf = conf or cfg.CONF
    if GROUP not in conf or name not in conf[GROUP]:
        register(conf)
    return conf[GROUP][name]
