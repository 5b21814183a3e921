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
"""End-to-end: secrets stay where they belong.

tools/secrets_scan.py with the all-in-one cloud's secrets (--from-aio: its passwords, the
Keystone keys, tools/native-target's keys) searches
  * the stage's artifacts ($VMCT_E2E_DIR: Rally's HTML and JSON reports, the comparison exports,
    the demo, scale and conformance logs, tempest's results), and
  * the AIO's state dir ($VMCT_AIO_DIR, default /var/tmp/vmct-aio: every service's log, Rally's
    log, the demo's reports, tempest's workspace and log, tools/native-target's sshd log)
for private key material, the AIO's passwords and Keystone tokens, and lists every private key
file there (tools/native-target's keys in $VMCT_AIO_DIR/native). The scanner's own allow list
names the files that must hold secrets (the AIO's configs, secrets.env, Rally's env spec and
database, the key files); their modes are checked instead. Only files are read: the AIO may be
up or down, but its state dir must not have been wiped (tools/aio/down --wipe).
Reports: $VMCT_E2E_DIR/secrets-scan.txt and secrets-scan.json. Without $VMCT_E2E_DIR the
tests are skipped.
"""

import json
import os
import subprocess
import sys

from tests.e2e import test_demo_task

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCANNER = os.path.join(ROOT, "tools", "secrets_scan.py")
AIO_DIR = os.environ.get("VMCT_AIO_DIR", "/var/tmp/vmct-aio")


class SecretsTest(test_demo_task.E2ETest):

    @classmethod
    def load_artifacts(cls):
        super().load_artifacts()
        e2e = test_demo_task.E2E_DIR
        report = os.path.join(e2e, "secrets-scan.json")
        proc = subprocess.run(
            [sys.executable, SCANNER, "--from-aio", AIO_DIR, "--json", report, e2e, AIO_DIR],
            capture_output=True, text=True, timeout=900)
        cls.text = proc.stdout + proc.stderr
        with open(os.path.join(e2e, "secrets-scan.txt"), "w") as f:
            f.write(cls.text)
        if proc.returncode not in (0, 1):
            raise AssertionError("tools/secrets_scan.py exited %d:\n%s"
                                 % (proc.returncode, cls.text))
        with open(report) as f:
            cls.report = json.load(f)
        cls.key_files = {k["path"] for k in cls.report["key_files"]}

    def lines(self, kind, keys=None):
        """Findings of ``kind`` (in or, keys False, out of key files) as the report says them."""
        return ["%s %s%s: %s" % (f["kind"], f["path"],
                                 ":" + ",".join(map(str, f["lines"])) if f["lines"] else "",
                                 f["what"])
                for f in self.report["findings"]
                if f["kind"] == kind and keys in (None, (f["path"] in self.key_files))]

    def assertNone(self, findings):
        self.assertEqual([], findings, "%s (whole report: %s)" % (
            self.text.strip().splitlines()[-1],
            os.path.join(test_demo_task.E2E_DIR, "secrets-scan.txt")))

    def test_scan_read_the_reports_logs_and_keys(self):
        scanned = set(self.report["files"])
        e2e = test_demo_task.E2E_DIR
        for name in ("report.html", "task.json", "comparison.html", "comparison.json",
                     "comparison.csv", "demo.log"):
            self.assertIn(os.path.join(e2e, name), scanned)
        for name in ("logs/keystone.log", "logs/nova-api.out", "rally/rally.log"):
            self.assertIn(os.path.join(AIO_DIR, name), scanned)
        for name in ("ADMIN_PASS", "DB_PASS", "RABBIT_PASS", "NOVA_PASS", "NEUTRON_PASS"):
            self.assertIn(name, self.report["secrets"])
        native = [os.path.join(AIO_DIR, "native", k) for k in ("host_ed25519", "id_ed25519")]
        self.assertEqual(native, sorted(set(native) & set(self.report["known_keys"])))

    def test_no_key_password_or_token_in_reports_exports_or_logs(self):
        self.assertNone(self.lines("LEAK"))

    def test_private_key_files_are_0600(self):
        self.assertNone(self.lines("MODE", keys=True))
        for key in self.report["key_files"]:
            self.assertEqual(0, int(key["mode"], 8) & 0o077, key)
            self.assertTrue(key["allowed"], key)

    def test_files_holding_secrets_keep_them_from_others(self):
        # the allow list's modes: configs 0640, secrets.env, Rally's env and database,
        # tempest.conf and the Keystone keys 0600
        self.assertNone(self.lines("MODE", keys=False))
