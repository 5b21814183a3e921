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
"""Host cost: what each instance costs its compute host, from the agent on the host to the page.

* :mod:`.agent` -- what runs on the host (stdlib only, shipped as source): :mod:`.agent.procfs`
  parses /proc and cgroups, :mod:`.agent.sampler` writes one JSON line per sample.
* :mod:`.context` -- ``vmct_host_monitor``: starts an agent per host for the task;
  :mod:`.remote` relays one over SSH.
* :mod:`.iteration` -- an iteration's host cost tables and charts; :mod:`.density` --
  ``VMCT.density``'s tables (per server, per step the hosts' memory).
* :mod:`.phase_samples` and :mod:`.density_curves` -- what the comparison exporter reads
  back from those tables.
"""
