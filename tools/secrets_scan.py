#!/usr/bin/env python3
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
"""Find secrets where they must not be: in reports, exports and logs.

    secrets_scan.py [--from-aio STATE_DIR] [--secrets-file FILE]... [--secret VALUE]...
                    [--key-file FILE]... [--allow GLOB[=MODE]]... [--skip GLOB]...
                    [--json FILE] PATH...

Every regular file under each PATH (recursively; links to files are read, links to
directories are named in the report and not followed; sockets and pipes are left out) is
searched for
  * private key material: a ``-----BEGIN ... PRIVATE KEY-----`` block (PEM, OpenSSH; also
    JSON- or HTML-escaped, e.g. with ``\\n`` between its lines), and pieces of the base64 body
    of every known private key (the keys found in allow-listed files and ``--key-file``), even
    without their header: only pieces that encode the key's secret numbers, never its public
    half;
  * the literal secret values given (``--secret``, ``--secrets-file``, ``--from-aio``);
  * Keystone fernet tokens (``gAAAAA`` and 60 or more base64url characters).
``.gz`` files are read decompressed. Every file holding a private key block is listed with its
mode and must be 0600 or stricter (nothing for group or others).

Files that must hold secrets are named by the allow list, never left out silently: an allowed
file is not searched for secrets, but its mode is checked (at most the MODE of its entry) and
its private keys become known keys. Directories that hold no output of ours (third-party
packages, disk images) are named by the skip list. Both lists are printed with every report.
``--from-aio STATE_DIR`` (tools/aio/up's state dir, default of tools/aio: /var/tmp/vmct-aio)
adds the all-in-one cloud's secrets and its lists (``AIO_ALLOW``, ``AIO_SKIP`` below):
  * secrets.env (every ``*_PASS`` tools/aio/lib/install.sh generates), admin-openrc
    (``OS_PASSWORD``), rally/env.json (tools/aio/rally-env's env spec), tempest/etc/tempest.conf
    (tools/conformance/tempest_conf.py) and the Keystone fernet and credential keys;
  * tools/native-target's keys under STATE_DIR/native are allow-listed: their mode is checked.

The report names file:line and what was found, never the secret itself (a label and its
length only). Exit status: 0 nothing found, 1 something found, 2 usage error.
``--json FILE`` writes the same report as JSON (for tests/e2e/test_secrets.py).
"""

import argparse
import base64
import binascii
import collections
import fnmatch
import gzip
import json
import os
import re
import stat
import sys

# private keys are small: larger allow-listed files are not read for keys
KEY_FILE_MAX = 1 << 20
# larger files are named in the report as not read
SCAN_MAX = 512 << 20
# secrets shorter than this would match everywhere
MIN_SECRET = 8
# base64 characters in each piece of a key body looked for (12 bytes: 96 random bits)
PIECE = 16
# at most this many lines are named per file and thing found
LINES_SHOWN = 5

# line breaks as they are in a file, escaped in JSON (once or more) and in HTML
BREAK = rb"(?:\s|\\+[nr]|\\+u000[adAD]|&#1[03];|&#x[adAD];)+"
# the header of a PEM or OpenSSH private key, followed by its base64 body, maybe after PEM
# headers such as Proc-Type (a text that only names a header, e.g. documentation, is no key)
KEY_BLOCK = re.compile(rb"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----" + BREAK
                       + rb"(?:[A-Za-z-]+: [^\r\n\\]*" + BREAK + rb")*(?:[A-Za-z0-9+/]|\\/){40}")
PUTTY_KEY = re.compile(rb"PuTTY-User-Key-File-\d+: ")
# a whole block, for reading known keys out of key files
PEM_BLOCK = re.compile(rb"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----(.*?)"
                       rb"-----END \1PRIVATE KEY-----", re.DOTALL)
FERNET_TOKEN = re.compile(rb"gAAAAA[A-Za-z0-9_-]{60,}={0,2}")

# (glob relative to the AIO's state dir, largest mode allowed or None, why it holds secrets)
AIO_ALLOW = (
    ("secrets.env", 0o600, "the AIO's passwords (tools/aio/lib/install.sh ensure_secrets)"),
    ("admin-openrc", 0o600, "the admin password (tools/aio/lib/install.sh write_openrc)"),
    ("member-openrc", 0o600, "the project member's password (tools/aio/lib/install.sh "
                             "write_openrc)"),
    ("etc/*.conf", 0o640, "service configs: database, RabbitMQ and service user passwords "
                          "(tools/aio/lib/configs.sh)"),
    ("etc/neutron/neutron_ovn_metadata_agent.ini", 0o640,
     "the OVN metadata agent's config: the metadata proxy's shared secret "
     "(tools/aio/lib/configs.sh)"),
    ("rally/env.json", 0o600, "Rally's env spec with the admin password (tools/aio/rally-env)"),
    ("rally/env-member.json", 0o600, "Rally's env spec with the member's password "
                                     "(tools/aio/rally-env)"),
    ("rally/rally.sqlite*", 0o600, "Rally's database: the env spec with the admin password"),
    ("tempest/etc/tempest.conf", 0o600, "tempest's config: the admin password "
                                        "(tools/conformance/tempest_conf.py)"),
    ("native/host_ed25519", 0o600, "tools/native-target's sshd host key"),
    ("native/id_ed25519", 0o600, "tools/native-target's client key (the native kind's key_file)"),
    ("data/keystone/fernet-keys/*", 0o600, "Keystone's token keys"),
    ("data/keystone/credential-keys/*", 0o600, "Keystone's credential keys"),
    ("data/mysql/*", None, "MariaDB's databases (nova_api.cell_mappings holds the database and "
                           "RabbitMQ URLs); MariaDB sets their modes (database dirs 0700)"),
)
# (glob relative to the AIO's state dir, why it is not read)
AIO_SKIP = (
    ("venv", "third-party packages (their tests ship sample keys)"),
    ("venvs", "the OpenStack venv of each release, `venv` links to one: third-party packages"),
    ("rally-venv", "third-party packages (their tests ship sample keys)"),
    ("tempest-venv", "third-party packages (their tests ship sample keys)"),
    ("src", "Nova's released source (its tests ship sample keys)"),
    ("images", "guest images and their package cache: the Docker workload image bakes its "
               "sshd host keys by design (tools/images/docker/README.md)"),
    ("data/glance", "Glance's image data (the same guest images)"),
    ("data/nova-*/instances/_base", "Nova's image cache (the same guest images)"),
)
SKIP_NAMES = ((".git", "version control data"), ("__pycache__", "compiled Python"))

Secret = collections.namedtuple("Secret", "label value")
Rule = collections.namedtuple("Rule", "pattern mode why")
Finding = collections.namedtuple("Finding", "path lines kind what")


def redact(label, value):
    return "%s (%d characters)" % (label, len(value))


# ------------------------------------------------------------------ secrets of the AIO

def env_values(path):
    """KEY=VALUE lines (``export`` and quotes allowed) of a shell env file: [(KEY, VALUE)]."""
    pairs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, value = line.split("=", 1)
            key = key.replace("export ", "").strip()
            value = value.strip().strip("'\"")
            if value:
                pairs.append((key, value))
    return pairs


def json_passwords(node, where):
    """Values of every "password" member of a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "password" and isinstance(value, str) and value:
                yield Secret("%s password" % where, value)
            else:
                yield from json_passwords(value, where)
    elif isinstance(node, list):
        for value in node:
            yield from json_passwords(value, where)


def aio_secrets(state):
    """The secrets tools/aio and the tools that use it write into the state dir."""
    env = os.path.join(state, "secrets.env")
    if not os.path.isfile(env):
        raise ValueError("no %s: not an AIO state dir (tools/aio/up writes it)" % env)
    secrets = [Secret(k, v) for k, v in env_values(env)]
    openrc = os.path.join(state, "admin-openrc")
    if os.path.isfile(openrc):
        secrets += [Secret("admin-openrc " + k, v) for k, v in env_values(openrc)
                    if "PASSWORD" in k or "TOKEN" in k]
    spec = os.path.join(state, "rally", "env.json")
    if os.path.isfile(spec):
        with open(spec) as f:
            secrets += json_passwords(json.load(f), "rally/env.json")
    tempest = os.path.join(state, "tempest", "etc", "tempest.conf")
    if os.path.isfile(tempest):
        with open(tempest) as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip() in ("password", "admin_password") and value.strip():
                    secrets.append(Secret("tempest.conf " + key.strip(), value.strip()))
    for repo in ("fernet-keys", "credential-keys"):
        d = os.path.join(state, "data", "keystone", repo)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            with open(os.path.join(d, name)) as f:
                secrets.append(Secret("Keystone %s/%s" % (repo, name), f.read().strip()))
    return secrets


# private key files of the AIO: known keys (their bodies are looked for) even when the state
# dir itself is not among the paths searched
AIO_KEYS = ("native/host_ed25519", "native/id_ed25519")


def aio_key_files(state):
    return [os.path.join(state, k) for k in AIO_KEYS if os.path.isfile(os.path.join(state, k))]


def aio_rules(state):
    state = os.path.abspath(state)
    allow = [Rule(os.path.join(state, p), m, w) for p, m, w in AIO_ALLOW]
    skip = [Rule(os.path.join(state, p), None, w) for p, w in AIO_SKIP]
    return allow, skip


# ------------------------------------------------------------------ known private keys

def _secret_numbers(block):
    """Byte strings of the secret numbers of a private key (not its public half).

    None when the key cannot be read (encrypted, unknown type, no ``cryptography``).
    """
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa
        if b"OPENSSH PRIVATE KEY" in block:
            key = serialization.load_ssh_private_key(block, password=None)
        else:
            key = serialization.load_pem_private_key(block, password=None)
    except Exception:
        return None
    if isinstance(key, rsa.RSAPrivateKey):
        n = key.private_numbers()
        numbers = (n.d, n.p, n.q, n.dmp1, n.dmq1, n.iqmp)
    elif isinstance(key, ec.EllipticCurvePrivateKey):
        numbers = (key.private_numbers().private_value,)
    elif isinstance(key, dsa.DSAPrivateKey):
        numbers = (key.private_numbers().x,)
    elif isinstance(key, (ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)):
        return [key.private_bytes_raw()]
    else:
        return None
    return [i.to_bytes((i.bit_length() + 7) // 8, "big") for i in numbers]


def key_pieces(block):
    """Pieces of a key block's base64 body that encode only its secret bytes.

    Each piece is PIECE characters at a 4-character boundary of the body (3 bytes each), so it
    is found in any copy of the body that keeps PIECE + 3 characters of it on one line, however
    the copy is wrapped or escaped. Pieces start every 12 characters. Without a readable key
    (encrypted: the whole body is random) every piece past the first 64 characters is used.
    """
    text = PEM_BLOCK.match(block).group(2)
    lines = [ln for ln in re.split(BREAK, text) if ln and b":" not in ln]
    try:
        body = base64.b64decode(b"".join(lines))
    except (binascii.Error, ValueError):
        return []
    b64 = base64.b64encode(body).decode()
    ranges = []
    for secret in _secret_numbers(block) or ():
        at = body.find(secret)
        if at >= 0 and len(secret) >= 12:
            ranges.append((at, at + len(secret)))
    if not ranges:
        ranges = [(48, len(body))]
    pieces = set()
    nbytes = PIECE // 4 * 3
    for start, end in ranges:
        group = (start + 2) // 3
        while 3 * group + nbytes <= end:
            pieces.add(b64[4 * group:4 * group + PIECE])
            group += 3
    return sorted(pieces)


# ------------------------------------------------------------------ files

def read(path, limit):
    """The bytes of a file (decompressed when .gz); None when larger than ``limit``."""
    if path.endswith(".gz"):
        try:
            with gzip.open(path) as f:
                data = f.read(limit + 1)
        except (OSError, EOFError):
            with open(path, "rb") as f:
                data = f.read(limit + 1)
    else:
        if os.path.getsize(path) > limit:
            return None
        with open(path, "rb") as f:
            data = f.read()
    return None if len(data) > limit else data


def matches(path, rules):
    for rule in rules:
        if fnmatch.fnmatchcase(path, rule.pattern):
            return rule
    return None


def walk(paths, skip):
    """(regular files, skipped [(path, why)]) under paths, absolute, sorted."""
    files, skipped = [], []
    for top in paths:
        top = os.path.abspath(top)
        if os.path.isfile(top):
            files.append(top)
            continue
        for root, dirs, names in os.walk(top):
            kept = []
            for d in sorted(dirs):
                full = os.path.join(root, d)
                rule = matches(full, skip)
                why = rule.why if rule else dict(SKIP_NAMES).get(d)
                if why:
                    skipped.append((full, why))
                elif os.path.islink(full):
                    skipped.append((full, "a symbolic link to a directory: not followed"))
                else:
                    kept.append(d)
            dirs[:] = kept
            for name in sorted(names):
                full = os.path.join(root, name)
                rule = matches(full, skip)
                if rule:
                    skipped.append((full, rule.why))
                elif os.path.isfile(full):          # a regular file, or a link to one
                    files.append(full)
    return sorted(set(files)), skipped


def line_numbers(data, positions):
    out, line, last = [], 1, 0
    for pos in sorted(positions):
        line += data.count(b"\n", last, pos)
        last = pos
        out.append(line)
    return sorted(set(out))


def find_all(data, needle):
    at = data.find(needle)
    while at >= 0:
        yield at
        at = data.find(needle, at + 1)


class Scanner:
    """What one run found: findings, key files, what was allowed, skipped, scanned."""

    def __init__(self, secrets, allow, skip, key_files=()):
        self.secrets = []
        self.ignored = []
        for s in secrets:
            if len(s.value) < MIN_SECRET:
                self.ignored.append(s.label)
            elif s.value not in {k.value for k in self.secrets}:
                self.secrets.append(s)
        self.allow, self.skip = list(allow), list(skip)
        self.extra_keys = [os.path.abspath(k) for k in key_files]
        self.findings, self.key_files, self.allowed, self.skipped = [], [], [], []
        self.known = {}          # piece -> the key file it belongs to
        self.scanned = self.bytes = 0
        self.files, self.unread = [], []

    def add(self, path, kind, what, lines=()):
        self.findings.append(Finding(path, list(lines), kind, what))

    def check_mode(self, path, limit, why):
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & ~limit and not any(f.path == path and f.kind == "MODE" for f in self.findings):
            self.add(path, "MODE", "mode %04o, want %04o or stricter: %s" % (mode, limit, why))
        return mode

    def learn_keys(self, path, data, allowed, why="a private key file"):
        """List a file holding private keys, check its mode, remember its keys' pieces."""
        blocks = list(PEM_BLOCK.finditer(data)) + list(PUTTY_KEY.finditer(data))
        if not blocks:
            return
        mode = self.check_mode(path, 0o600, why)
        self.key_files.append(dict(path=path, mode="%04o" % mode, allowed=allowed))
        for m in blocks:
            if m.re is PEM_BLOCK:
                for piece in key_pieces(m.group(0)):
                    self.known.setdefault(piece.encode(), path)
                    # as JSON encoders that escape "/" write it
                    self.known.setdefault(piece.replace("/", "\\/").encode(), path)

    def run(self, paths):
        files, self.skipped = walk(paths, self.skip)
        for path in self.extra_keys:
            rule = matches(path, self.allow)
            with open(path, "rb") as f:
                self.learn_keys(path, f.read(KEY_FILE_MAX), True,
                                rule.why if rule else "a private key file (--key-file)")
        scan = []
        for path in files:
            rule = matches(path, self.allow)
            if rule is None:
                scan.append(path)
                continue
            self.allowed.append((path, rule.why))
            if rule.mode is not None:
                self.check_mode(path, rule.mode, rule.why)
            data = read(path, KEY_FILE_MAX)
            if data is not None and path not in self.extra_keys:
                self.learn_keys(path, data, True)
        for path in scan:
            data = read(path, SCAN_MAX)
            if data is None:
                self.unread.append(path)
                continue
            self.scanned += 1
            self.files.append(path)
            self.bytes += len(data)
            self.scan(path, data)
        return self

    def scan(self, path, data):
        if KEY_BLOCK.search(data) or PUTTY_KEY.search(data):
            self.learn_keys(path, data, False)
            kinds = collections.defaultdict(list)
            for m in KEY_BLOCK.finditer(data):
                kinds[(m.group(1).decode().strip() or "PKCS#8")].append(m.start())
            for m in PUTTY_KEY.finditer(data):
                kinds["PuTTY"].append(m.start())
            for kind, positions in sorted(kinds.items()):
                self.add(path, "LEAK", "private key block (%s)" % kind,
                         line_numbers(data, positions))
        owners = collections.defaultdict(list)
        for piece, owner in self.known.items():
            if owner != path and piece in data:
                owners[owner] += find_all(data, piece)
        for owner, positions in sorted(owners.items()):
            self.add(path, "LEAK", "base64 body of the private key in %s" % owner,
                     line_numbers(data, positions))
        for s in self.secrets:
            if s.value.encode() in data:
                self.add(path, "LEAK", redact(s.label, s.value),
                         line_numbers(data, find_all(data, s.value.encode())))
        tokens = collections.defaultdict(list)
        for m in FERNET_TOKEN.finditer(data):
            tokens[len(m.group(0))].append(m.start())
        if tokens:
            sizes = "/".join(str(n) for n in sorted(tokens))
            self.add(path, "LEAK", "Keystone fernet token (gAAAAA..., %s characters)" % sizes,
                     line_numbers(data, [p for ps in tokens.values() for p in ps]))

    def report(self):
        out = []
        for f in self.findings:
            where = f.path
            if f.lines:
                more = len(f.lines) - LINES_SHOWN
                where += ":" + ",".join(str(n) for n in f.lines[:LINES_SHOWN])
                where += " (+%d more lines)" % more if more > 0 else ""
            out.append("%s %s: %s" % (f.kind, where, f.what))
        out.append("private key files (%d):" % len(self.key_files))
        for k in self.key_files:
            out.append("  %s %s%s" % (k["mode"], k["path"], "" if k["allowed"] else
                                      " (not on the allow list)"))
        out.append("allowed to hold secrets, not searched (%d):" % len(self.allowed))
        by_why = collections.OrderedDict()
        for path, why in self.allowed:
            by_why.setdefault(why, []).append(path)
        for why, paths in by_why.items():
            shown = ", ".join(paths[:3]) + (" and %d more" % (len(paths) - 3)
                                            if len(paths) > 3 else "")
            out.append("  %s: %s" % (why, shown))
        out.append("skipped (%d):" % len(self.skipped))
        for path, why in self.skipped:
            out.append("  %s: %s" % (path, why))
        for path in self.unread:
            out.append("  %s: larger than %d MB, not read" % (path, SCAN_MAX >> 20))
        if self.ignored:
            out.append("ignored secrets shorter than %d characters: %s"
                       % (MIN_SECRET, ", ".join(self.ignored)))
        out.append("%d finding(s); %d files (%.1f MB) searched for %d secrets, %d pieces of %d "
                   "known private keys, key blocks and fernet tokens"
                   % (len(self.findings), self.scanned, self.bytes / 1e6, len(self.secrets),
                      len(self.known), len(set(self.known.values()))))
        return out

    def as_json(self):
        return dict(findings=[f._asdict() for f in self.findings], key_files=self.key_files,
                    allowed=[dict(path=p, why=w) for p, w in self.allowed],
                    skipped=[dict(path=p, why=w) for p, w in self.skipped], unread=self.unread,
                    scanned=self.scanned, files=self.files, bytes=self.bytes,
                    secrets=[s.label for s in self.secrets], ignored=self.ignored,
                    known_keys=sorted(set(self.known.values())))


def parse_rule(text):
    pattern, _, mode = text.partition("=")
    return Rule(os.path.abspath(pattern) if not pattern.startswith("*") else pattern,
                int(mode, 8) if mode else None, "--allow %s" % text)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="See the module docstring (tools/secrets_scan.py) for the allow and skip lists.")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--from-aio", metavar="STATE_DIR",
                        help="the AIO's secrets, allow list and skip list (tools/aio's state dir)")
    parser.add_argument("--secret", action="append", default=[], metavar="VALUE",
                        help="a secret value (visible in ps: prefer --secrets-file)")
    parser.add_argument("--secrets-file", action="append", default=[], metavar="FILE",
                        help="KEY=VALUE lines (as secrets.env): every VALUE is a secret")
    parser.add_argument("--key-file", action="append", default=[], metavar="FILE",
                        help="a private key file: look for its body, check its mode")
    parser.add_argument("--allow", action="append", default=[], metavar="GLOB[=MODE]",
                        help="files that may hold secrets (mode at most MODE, octal)")
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB",
                        help="files or directories not to read")
    parser.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    args = parser.parse_args(argv)

    secrets = [Secret("--secret #%d" % (i + 1), v) for i, v in enumerate(args.secret)]
    for path in args.secrets_file:
        secrets += [Secret("%s %s" % (os.path.basename(path), k), v)
                    for k, v in env_values(path)]
    allow = [parse_rule(a) for a in args.allow]
    skip = [Rule(os.path.abspath(s), None, "--skip %s" % s) for s in args.skip]
    if args.from_aio:
        try:
            secrets = aio_secrets(args.from_aio) + secrets
        except ValueError as e:
            parser.error(str(e))
        args.key_file += aio_key_files(args.from_aio)
        aio_allow, aio_skip = aio_rules(args.from_aio)
        allow += aio_allow
        skip += aio_skip
    for path in args.paths:
        if not os.path.exists(path):
            parser.error("no such file or directory: %s" % path)
    scanner = Scanner(secrets, allow, skip, args.key_file).run(args.paths)
    print("\n".join(scanner.report()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(scanner.as_json(), f, indent=1)
    return 1 if scanner.findings else 0


if __name__ == "__main__":
    sys.exit(main())
