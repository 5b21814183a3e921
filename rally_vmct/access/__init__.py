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
"""Access: reaching an instance over the network (floating IP, reachability probes, SSH).

Modules here import neither Rally's task machinery nor OpenStack clients unless
their docstring says so (``ssh`` uses Rally's SSH class, ``floating_ip`` Neutron),
so they can be unit tested with fake clients, a fake clock and no cloud.
"""
