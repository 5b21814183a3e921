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
"""tools/secrets_scan.py on temporary files: what it finds, what it lets pass."""

import gzip
import io
import json
import os
from unittest import mock

from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from cryptography.hazmat.primitives import serialization
import fixtures
import testtools

from tests.unit import tools

secrets_scan = tools.load("secrets_scan", os.path.join(tools.TOOLS, "secrets_scan.py"))

PASSWORD = "Zq8rT2vLw9XnB4kPa7dHs3Fy"
FERNET = "gAAAAABpI" + "x7Kq_Lm3-Zt9Rw2Ny8Pv5Hs1Jd4Fb6Gc0Ak" * 5
SECRETS_ENV = "ADMIN_PASS=%s\nDB_PASS=Pp0Oo9Ii8Uu7Yy6Tt5Rr4Ee3\n" % PASSWORD


def openssh_key():
    """(private key file text, public key line) of a new ed25519 key, as ssh-keygen writes."""
    key = ed25519.Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode()
    return private, public + " vmct-native"


def rsa_pem():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


class SecretsScanTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tmp = self.useFixture(fixtures.TempDir()).path
        self.out = os.path.join(self.tmp, "out")          # what gets scanned
        os.makedirs(self.out)

    def write(self, path, text, mode=0o644):
        path = os.path.join(self.tmp, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
        os.chmod(path, mode)
        return path

    def aio(self):
        """A state dir as tools/aio/up, tools/aio/rally-env and tools/native-target leave it."""
        s = os.path.join(self.tmp, "aio")
        self.write("aio/secrets.env", SECRETS_ENV, 0o600)
        self.write("aio/admin-openrc", "export OS_PASSWORD=%s\n" % PASSWORD, 0o600)
        self.write("aio/etc/nova/nova.conf", "[database]\nconnection = mysql+pymysql://os:"
                   "Pp0Oo9Ii8Uu7Yy6Tt5Rr4Ee3@127.0.0.1/nova\n", 0o640)
        self.write("aio/rally/env.json", json.dumps(
            {"openstack": {"admin": {"username": "admin", "password": PASSWORD}}}), 0o600)
        self.write("aio/data/keystone/fernet-keys/0", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmE=\n",
                   0o600)
        self.key, self.pub = openssh_key()
        self.write("aio/native/id_ed25519", self.key, 0o600)
        self.write("aio/native/id_ed25519.pub", self.pub + "\n")
        self.write("aio/native/authorized_keys", 'from="127.0.0.1" %s\n' % self.pub, 0o600)
        self.write("aio/logs/keystone.log", "INFO keystone started\n")
        return s

    def scan(self, *argv, rc=None):
        """(exit status, report lines, JSON report) of the scanner's main()."""
        report = os.path.join(self.tmp, "report.json")
        stdout = io.StringIO()
        with mock.patch("sys.stdout", stdout):
            status = secrets_scan.main(list(argv) + ["--json", report])
        text = stdout.getvalue()
        for secret in (PASSWORD, FERNET, "Pp0Oo9Ii8Uu7Yy6Tt5Rr4Ee3"):
            self.assertNotIn(secret, text)            # a hint only, never the secret
        if rc is not None:
            self.assertEqual(rc, status, text)
        with open(report) as f:
            return status, text.splitlines(), json.load(f)

    def findings(self, data, kind="LEAK"):
        return [(os.path.basename(f["path"]), f["lines"], f["what"])
                for f in data["findings"] if f["kind"] == kind]

    def test_pem_key_in_a_log(self):
        log = "connecting\nkey was:\n%sdone\n" % rsa_pem()
        self.write("out/task.log", log)
        _, lines, data = self.scan(self.out, rc=1)
        self.assertEqual([("task.log", [3], "private key block (RSA)")], self.findings(data))
        self.assertIn("LEAK %s/task.log:3: private key block (RSA)" % self.out, lines)
        # the leaking file holds a key readable by others: listed, and its mode reported
        self.assertEqual([("task.log", [], "mode 0644, want 0600 or stricter: "
                                           "a private key file")], self.findings(data, "MODE"))
        self.assertEqual(["0644"], [k["mode"] for k in data["key_files"]])

    def test_known_key_body_json_escaped_in_an_html_report(self):
        s = self.aio()
        body = "\n".join(self.key.splitlines()[1:-1])            # no BEGIN/END lines
        page = "<html><script>var d = %s;</script></html>\n" % json.dumps({"out": body})
        self.write("out/report.html", "<!DOCTYPE html>\n" + page)
        _, _, data = self.scan("--from-aio", s, self.out, rc=1)
        self.assertEqual([("report.html", [2], "base64 body of the private key in %s"
                           % os.path.join(s, "native", "id_ed25519"))], self.findings(data))

    def test_whole_key_json_escaped_in_an_export(self):
        self.write("out/comparison.json", json.dumps({"stdout": rsa_pem()}))
        _, _, data = self.scan(self.out, rc=1)
        self.assertEqual([("comparison.json", [1], "private key block (RSA)")],
                         self.findings(data))

    def test_key_blocks_escaped_twice_in_html_and_with_slashes(self):
        pem = rsa_pem()
        task = json.dumps({"config": json.dumps({"args": {"key": pem}})})   # Rally's task config
        self.write("out/a.json", task)
        self.write("out/b.html", "<pre>%s</pre>" % pem.replace("\n", "&#10;"))
        self.write("out/c.json", json.dumps(pem).replace("/", "\\/"))
        self.write("out/d.log", pem.replace("-----BEGIN RSA PRIVATE KEY-----\n",
                                            "-----BEGIN RSA PRIVATE KEY-----\n"
                                            "Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n"))
        _, _, data = self.scan(self.out, rc=1)
        blocks = [(name, lines) for name, lines, what in self.findings(data)
                  if what == "private key block (RSA)"]
        self.assertEqual([("a.json", [1]), ("b.html", [1]), ("c.json", [1]), ("d.log", [1])],
                         blocks)

    def test_known_key_body_with_escaped_slashes(self):
        s = self.aio()
        body = "".join(self.key.splitlines()[1:-1])
        self.write("out/export.json", json.dumps({"body": body}).replace("/", "\\/"))
        _, _, data = self.scan("--from-aio", s, self.out, rc=1)
        self.assertEqual(["base64 body of the private key in %s"
                          % os.path.join(s, "native", "id_ed25519")],
                         [what for _, _, what in self.findings(data)])

    def test_password_found_by_line(self):
        s = self.aio()
        self.write("out/demo.log", "ok\nok\nauth with %s failed\nok %s\n" % (PASSWORD, PASSWORD))
        _, lines, data = self.scan("--from-aio", s, self.out, rc=1)
        self.assertEqual([("demo.log", [3, 4], "ADMIN_PASS (24 characters)")],
                         self.findings(data))
        self.assertIn("LEAK %s/demo.log:3,4: ADMIN_PASS (24 characters)" % self.out, lines)

    def test_password_given_as_argument_and_in_gzipped_log(self):
        with gzip.open(os.path.join(self.out, "nova-api.log.1.gz"), "wt") as f:
            f.write("x\nrabbit://openstack:%s@127.0.0.1:5672/\n" % PASSWORD)
        _, _, data = self.scan("--secret", PASSWORD, self.out, rc=1)
        self.assertEqual([("nova-api.log.1.gz", [2], "--secret #1 (24 characters)")],
                         self.findings(data))

    def test_fernet_token_found(self):
        self.write("out/rally.log", "DEBUG\nREQ: curl -H \"X-Auth-Token: %s\"\n" % FERNET)
        _, _, data = self.scan(self.out, rc=1)
        self.assertEqual([("rally.log", [2], "Keystone fernet token (gAAAAA..., %d characters)"
                           % len(FERNET))], self.findings(data))

    def test_clean_files_pass(self):
        s = self.aio()
        # public keys, a header named in prose, hashes and ids are not secrets
        self.write("out/task.json", json.dumps(
            {"key": self.pub, "note": "-----BEGIN RSA PRIVATE KEY----- is what Nova returns",
             "uuid": "6d08d2ec-03fb-4d05-8d96-1fa62b485e65",
             "token": "{SHA256}0123456789abcdef0123456789abcdef0123456789abcdef0123"}))
        self.write("out/sub/inventory.json", '{"keypairs": ["rally_6d08d2ec_x"]}')
        status, lines, data = self.scan("--from-aio", s, self.out, s, rc=0)
        self.assertEqual([], data["findings"])
        self.assertEqual("0 finding(s)", lines[-1].split(";")[0])
        self.assertEqual(["ADMIN_PASS", "DB_PASS", "Keystone fernet-keys/0"], data["secrets"])
        self.assertEqual([os.path.join(s, "native", "id_ed25519")], data["known_keys"])
        scanned = os.path.join(s, "native", "authorized_keys")
        self.assertNotIn(scanned, [a["path"] for a in data["allowed"]])

    def test_key_file_readable_by_others_reported(self):
        s = self.aio()
        os.chmod(os.path.join(s, "native", "id_ed25519"), 0o644)
        _, lines, data = self.scan("--from-aio", s, s, rc=1)
        key = os.path.join(s, "native", "id_ed25519")
        self.assertEqual([("id_ed25519", [], "mode 0644, want 0600 or stricter: "
                           "tools/native-target's client key (the native kind's key_file)")],
                         self.findings(data, "MODE"))
        self.assertEqual([], self.findings(data))                 # it may hold the key
        self.assertEqual([dict(path=key, mode="0644", allowed=True)], data["key_files"])
        self.assertIn("  0644 %s" % key, lines)

    def test_key_file_outside_the_allow_list(self):
        key = self.write("keys/id_rsa", rsa_pem(), 0o640)
        _, _, data = self.scan(os.path.dirname(key), rc=1)
        self.assertEqual([("id_rsa", [1], "private key block (RSA)")], self.findings(data))
        self.assertEqual([("id_rsa", [], "mode 0640, want 0600 or stricter: a private key file")],
                         self.findings(data, "MODE"))
        self.assertEqual([dict(path=key, mode="0640", allowed=False)], data["key_files"])

    def test_allowed_key_file_by_option(self):
        key = self.write("keys/id_rsa", rsa_pem(), 0o600)
        _, _, data = self.scan("--allow", os.path.join(self.tmp, "keys", "*") + "=0600",
                               os.path.dirname(key), rc=0)
        self.assertEqual([dict(path=key, mode="0600", allowed=True)], data["key_files"])

    def test_allow_listed_config_not_reported_but_its_mode_is(self):
        s = self.aio()
        tempest = self.write("aio/tempest/etc/tempest.conf",
                             "[auth]\nadmin_password = %s\n[compute-feature-enabled]\n"
                             "change_password = False\n" % PASSWORD, 0o644)
        _, lines, data = self.scan("--from-aio", s, s, rc=1)
        self.assertEqual([], self.findings(data))
        self.assertEqual([("tempest.conf", [], "mode 0644, want 0600 or stricter: tempest's "
                           "config: the admin password (tools/conformance/tempest_conf.py)")],
                         self.findings(data, "MODE"))
        allowed = {a["path"] for a in data["allowed"]}
        for name in ("secrets.env", "admin-openrc", "etc/nova/nova.conf", "rally/env.json",
                     "native/id_ed25519", "data/keystone/fernet-keys/0"):
            self.assertIn(os.path.join(s, name), allowed)
        self.assertIn(tempest, allowed)
        self.assertIn("allowed to hold secrets, not searched (7):", lines)

    def test_the_ovn_metadata_secret_belongs_in_its_agents_config_only(self):
        s = self.aio()
        secret = "Mm1Nn2Bb3Vv4Cc5Xx6Zz7Ll8"
        self.write("aio/secrets.env", SECRETS_ENV + "METADATA_PASS=%s\n" % secret, 0o600)
        ini = self.write("aio/etc/neutron/neutron_ovn_metadata_agent.ini",
                         "[DEFAULT]\nmetadata_proxy_shared_secret = %s\n" % secret, 0o640)
        _, _, data = self.scan("--from-aio", s, s, rc=0)
        self.assertIn(ini, {a["path"] for a in data["allowed"]})
        self.write("aio/logs/neutron-ovn-metadata-agent.log", "secret=%s\n" % secret)
        _, _, data = self.scan("--from-aio", s, s, rc=1)
        self.assertEqual([("neutron-ovn-metadata-agent.log", [1], "METADATA_PASS (24 characters)")],
                         self.findings(data))

    def test_skip_list_named_in_the_report(self):
        s = self.aio()
        self.write("aio/venv/lib/site-packages/paramiko/test_rsa.key", rsa_pem())
        self.write("aio/images/docker/rootfs.tar", rsa_pem())
        _, lines, data = self.scan("--from-aio", s, s, rc=0)
        skipped = {os.path.relpath(d["path"], s): d["why"] for d in data["skipped"]}
        self.assertEqual(["images", "venv"], sorted(skipped))
        self.assertIn("  %s/venv: third-party packages (their tests ship sample keys)" % s, lines)

    def test_state_dir_without_secrets_is_a_usage_error(self):
        stderr = io.StringIO()
        with mock.patch("sys.stderr", stderr):
            e = self.assertRaises(SystemExit, secrets_scan.main,
                                  ["--from-aio", self.tmp, self.out])
        self.assertEqual(2, e.code)
        self.assertIn("secrets.env: not an AIO state dir", stderr.getvalue())

    def test_short_secret_ignored_and_named(self):
        self.write("out/log", "the word admin is everywhere\n")
        _, lines, data = self.scan("--secret", "admin", self.out, rc=0)
        self.assertEqual(["--secret #1"], data["ignored"])
        self.assertIn("ignored secrets shorter than 8 characters: --secret #1", lines)

    def test_pieces_encode_only_the_secret_half(self):
        key, pub = openssh_key()
        pieces = secrets_scan.key_pieces(key.encode())
        self.assertTrue(pieces)
        body_lines = key.splitlines()[1:-1]
        for piece in pieces:
            self.assertEqual(secrets_scan.PIECE, len(piece))
            self.assertTrue(any(piece in line for line in body_lines), piece)
            self.assertNotIn(piece, pub)
