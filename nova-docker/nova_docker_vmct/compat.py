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
"""What differs between the Nova releases the driver runs under.

The driver supports Nova 31 (2025.1 Epoxy) to 34 (2026.2 Hibiscus). The
``ComputeDriver`` methods it implements have the same signatures in all
four (``rescue`` has had ``share_info`` since 31; 34 added it to
``finish_migration`` and ``finish_revert_migration``, which this driver
leaves to the base class, and added ``is_share_mounted`` and
``process_instances_at_startup`` with defaults). What differs is in the
Nova API the driver calls, and each difference is one name here:

``spawn``
    Run a function in the background with the caller's request context.
    ``nova.thread_pool_factory.spawn`` in 34 (named executors); before,
    ``nova.utils.spawn`` (a futurist executor in 32 and 33, an eventlet
    green pool in 31). Whichever exists is used: an editable Nova of a
    branch that moved it early needs nothing here.
``wait_for_instance_event``
    ``VirtAPI.wait_for_instance_event``'s timeout is ``deadline`` in 31
    and 32 and ``timeout`` from 33 on; passed by position, which is the
    same in all four.
``InstanceEventTimeout``
    What that wait raises when the events do not come in time:
    ``nova.exception.InstanceEventTimeout`` from 32 on, eventlet's
    ``Timeout`` (a BaseException) in 31.

Everything else the driver uses is checked by its unit tests, run against
each supported Nova (``tools/test-matrix``).
"""

import importlib

from nova import exception


def background_spawn(import_module=importlib.import_module):
    """Nova's "run in the background" function of the running release."""
    try:
        module = import_module('nova.thread_pool_factory')
    except ImportError:
        # Nova 31-33: nova.thread_pool_factory does not exist yet
        module = import_module('nova.utils')
    return module.spawn


spawn = background_spawn()


def event_timeout(nova_exception=exception):
    """The exception of a timed-out wait for instance events."""
    try:
        return nova_exception.InstanceEventTimeout
    except AttributeError:
        # Nova 31: the compute manager bounds the wait with eventlet
        import eventlet.timeout
        return eventlet.timeout.Timeout


InstanceEventTimeout = event_timeout()


def wait_for_instance_event(virtapi, instance, event_names, timeout,
                            error_callback=None):
    """``virtapi.wait_for_instance_event`` of any supported Nova.

    The timeout goes by position: its keyword is ``deadline`` in Nova 31
    and 32, ``timeout`` from 33 on.
    """
    return virtapi.wait_for_instance_event(
        instance, event_names, timeout, error_callback=error_callback)
