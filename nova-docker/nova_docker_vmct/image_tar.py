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
"""A tenant's ``docker save`` tarball without the names it gives images.

``docker load`` tags what it loads with the names the tarball carries
(``RepoTags`` of ``manifest.json``, the legacy ``repositories`` file, the
name annotations of an OCI ``index.json``) and moves a tag that exists
already. A tenant's tarball naming the cache tag of another project's image
would make every later boot of that image run the tenant's files. So the
tarball is filtered on its way to the engine: ``filtered()`` re-emits each
entry with a header of its own, ``manifest.json`` and ``index.json``
rewritten without names, ``repositories`` left out. The engine then prints
the content id of what it loaded, and the driver names it.

The engine extracts the tarball into a directory and opens the control
files there, so an entry that would make the engine read something else
than what was filtered is refused (``Refused``, naming the entry): absolute
names and ``..``, duplicates, control files that are not regular files,
entries below a symlink, hard links, symlinks leaving the archive. The
layers themselves pass unchanged: their content is what the image id
(the digest of its config, which lists the layers' digests) stands for.

Pure: no Docker, no Nova; streamed, nothing but a control file (at most
MAX_CONTROL_BYTES) is held in memory.
"""

import json
import tarfile

CHUNK = 1024 * 1024
BLOCK = tarfile.BLOCKSIZE
MAX_CONTROL_BYTES = 1024 * 1024

MANIFEST = 'manifest.json'
INDEX = 'index.json'
REPOSITORIES = 'repositories'
CONTROL_FILES = (MANIFEST, INDEX, REPOSITORIES)

# What the engine reads of a manifest.json entry besides RepoTags (Go's
# JSON decoder also takes keys that differ only in case: only these exact
# keys are kept).
MANIFEST_FIELDS = ('Config', 'Layers', 'Parent', 'LayerSources')
# The annotations containerd (and Docker with its containerd image store)
# names an image by.
NAME_ANNOTATIONS = ('org.opencontainers.image.ref.name',
                    'io.containerd.image.name')


class Refused(ValueError):
    """The tarball is no ``docker save`` tarball the driver loads."""


def filtered(chunks):
    """The tarball of ``chunks`` (bytes) as the engine may load it.

    A generator of bytes: the entries as they come, with clean headers,
    ``manifest.json`` and ``index.json`` without image names, no
    ``repositories``. Raises Refused when it meets an entry it cannot pass
    on: what it yielded until then holds no name, and a load aborted by
    the exception loads nothing. gzip, bzip2 and xz are decompressed.
    """
    try:
        tar = tarfile.open(fileobj=_Reader(chunks), mode='r|*',
                           bufsize=CHUNK)
    except (tarfile.TarError, EOFError, OSError) as e:
        raise Refused('not a tar archive (docker save writes one, maybe '
                      'compressed with gzip, bzip2 or xz): %s' % e)
    entries = _Entries()
    with tar:
        while True:
            member = _next(tar, entries.last)
            if member is None:
                break
            name = entries.add(member)
            yield from _emit(tar, member, name)
    if MANIFEST not in entries.names:
        # the engine would load it as a tarball of Docker < 1.10, named
        # by the repositories file left out here
        raise Refused('no %s: not a tarball of docker save 1.10 or later'
                      % MANIFEST)
    yield b'\0' * (2 * BLOCK)


def clean_manifest(data):
    """manifest.json (bytes) without RepoTags, as bytes."""
    items = _json(data, MANIFEST)
    if not isinstance(items, list) or not all(isinstance(i, dict)
                                              for i in items):
        raise Refused('%s is not a list of objects' % MANIFEST)
    clean = []
    for item in items:
        kept = {k: v for k, v in item.items() if k in MANIFEST_FIELDS}
        kept['RepoTags'] = None
        clean.append(kept)
    return _dump(clean, MANIFEST)


def clean_index(data):
    """index.json (bytes) without name annotations, as bytes.

    Those of the index and of the descriptors it lists; an index those
    descriptors point to (a blob) names nothing the engine reads.
    """
    index = _json(data, INDEX)
    if not isinstance(index, dict):
        raise Refused('%s is not an object' % INDEX)
    _drop_names(index, ('manifests', 'annotations'))
    for descriptor in index.get('manifests') or []:
        if isinstance(descriptor, dict):
            _drop_names(descriptor, ('annotations',))
    return _dump(index, INDEX)


def _drop_names(obj, fields):
    """Remove the name annotations from a JSON object of index.json.

    Keys that Go's decoder would take for one of ``fields`` without being
    it (another case, Unicode case folding) go too.
    """
    folded = {f.casefold(): f for f in fields}
    for key in list(obj):
        if key.casefold() in folded and key not in fields:
            del obj[key]
    annotations = obj.get('annotations')
    if isinstance(annotations, dict):
        names = {n.casefold() for n in NAME_ANNOTATIONS}
        for key in list(annotations):
            if key.casefold() in names:
                del annotations[key]


def _json(data, name):
    try:
        return json.loads(data.decode('utf-8'))
    except (ValueError, RecursionError) as e:
        raise Refused('%s is not JSON in UTF-8: %s' % (name, e))


def _dump(obj, name):
    try:
        return json.dumps(obj, allow_nan=False).encode('ascii')
    except ValueError as e:
        raise Refused('%s holds what JSON cannot: %s' % (name, e))


class _Reader(object):
    """A file object reading an iterator of bytes."""

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._buf = bytearray()

    def read(self, size=-1):
        while size < 0 or len(self._buf) < size:
            chunk = next(self._chunks, None)
            if chunk is None:
                break
            self._buf += chunk
        size = len(self._buf) if size < 0 else size
        out = bytes(self._buf[:size])
        del self._buf[:size]
        return out


def _next(tar, last):
    try:
        return tar.next()
    except (tarfile.TarError, EOFError, OSError) as e:
        where = 'after entry %s' % last if last else 'at its start'
        raise Refused('the tarball cannot be read %s: %s' % (where, e))


class _Entries(object):
    """The entries seen so far, and the rules an entry must meet."""

    def __init__(self):
        self.names = set()
        self.symlinks = set()
        self.last = None

    def add(self, member):
        """The entry's normalized name, or Refused naming it and why."""
        name = normal_name(member.name)
        self.last = name or member.name
        if name in self.names:
            raise Refused('entry %s appears twice' % name)
        self._check_type(member, name)
        self._check_parents(name)
        if member.issym():
            check_link(name, member.linkname)
            self.symlinks.add(name)
        self.names.add(name)
        return name

    def _check_type(self, member, name):
        if name in CONTROL_FILES and not (member.isreg() and
                                          not member.issparse()):
            raise Refused('entry %s must be a regular file; it is %s'
                          % (name, _kind(member)))
        if member.issparse() or not (member.isreg() or member.isdir() or
                                     member.issym()):
            raise Refused('entry %s is %s; docker save writes only files, '
                          'directories and symlinks' % (name, _kind(member)))
        if not name and not member.isdir():
            raise Refused('entry %r names the archive\'s root' % member.name)

    def _check_parents(self, name):
        parts = name.split('/')
        if len(parts) > 1 and parts[0] in CONTROL_FILES:
            raise Refused('entry %s: %s is a file of its own, not a directory'
                          % (name, parts[0]))
        for i in range(1, len(parts)):
            parent = '/'.join(parts[:i])
            if parent in self.symlinks:
                raise Refused('entry %s lies below the symlink %s'
                              % (name, parent))


def normal_name(raw):
    """An entry's name without ``./`` and ``//``; Refused if it escapes."""
    _check_ascii(raw, 'entry')
    if raw.startswith('/'):
        raise Refused('entry %s has an absolute name' % raw)
    parts = [p for p in raw.split('/') if p not in ('', '.')]
    if '..' in parts:
        raise Refused('entry %s has a .. component' % raw)
    return '/'.join(parts)


def check_link(name, target):
    """Refused unless the symlink ``name`` points inside the archive.

    The target must be relative, go up (``..``) first and only as far as
    the archive's root, then down (as ``docker save`` links a layer it
    wrote once: ``<id>/layer.tar -> ../<other id>/layer.tar``). Going down
    through other symlinks stays inside as well: each of them obeys the
    same rule from a real directory (no entry lies below a symlink).
    """
    _check_ascii(target, 'target of symlink %s:' % name)
    if not target or target.startswith('/'):
        raise Refused('symlink %s points to %r, outside the archive'
                      % (name, target))
    parts = [p for p in target.split('/') if p not in ('', '.')]
    ups = 0
    while ups < len(parts) and parts[ups] == '..':
        ups += 1
    if '..' in parts[ups:]:
        raise Refused('symlink %s points to %s: .. after a name'
                      % (name, target))
    if ups > name.count('/'):
        raise Refused('symlink %s points to %s, outside the archive'
                      % (name, target))


def _check_ascii(text, what):
    if not all(' ' <= c <= '~' for c in text):
        raise Refused('%s %r holds characters other than printable ASCII '
                      '(docker save writes hex ids and fixed names)'
                      % (what, text))


def _kind(member):
    if member.issparse():
        return 'a sparse file'
    if member.islnk():
        return 'a hard link to %s' % member.linkname
    if member.issym():
        return 'a symlink to %s' % member.linkname
    return {tarfile.DIRTYPE: 'a directory', tarfile.CHRTYPE: 'a device',
            tarfile.BLKTYPE: 'a device', tarfile.FIFOTYPE: 'a FIFO'}.get(
                member.type, 'of tar type %r' % member.type)


def _emit(tar, member, name):
    """The bytes of one entry as the engine gets it."""
    if name == REPOSITORIES:
        return
    if name in (MANIFEST, INDEX):
        data = _read_control(tar, member, name)
        data = clean_manifest(data) if name == MANIFEST else clean_index(data)
        yield _header(name, member, tarfile.REGTYPE, size=len(data))
        yield data + _padding(len(data))
    elif member.isreg():
        yield _header(name, member, tarfile.REGTYPE, size=member.size)
        yield from _data(tar, member, name)
    elif member.isdir():
        if name:    # the root exists: "./" of tar -C DIR . is no entry
            yield _header(name, member, tarfile.DIRTYPE)
    else:
        yield _header(name, member, tarfile.SYMTYPE,
                      linkname=member.linkname)


def _header(name, member, kind, size=0, linkname=''):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.linkname = linkname
    info.mode = member.mode & 0o777
    info.mtime = min(max(int(member.mtime), 0), 8 ** 11 - 1)
    return info.tobuf(tarfile.PAX_FORMAT, 'utf-8', 'strict')


def _padding(size):
    return b'\0' * (-size % BLOCK)


def _data(tar, member, name):
    """The entry's data in blocks of at most CHUNK bytes, then padding."""
    yield from _blocks(tar, member, name)
    yield _padding(member.size)


def _blocks(tar, member, name):
    f = tar.extractfile(member)
    left = member.size
    try:
        while left:
            block = f.read(min(left, CHUNK))
            if not block:
                raise tarfile.ReadError('unexpected end of data')
            left -= len(block)
            yield block
    except (tarfile.TarError, EOFError, OSError) as e:
        raise Refused('the tarball ends inside entry %s: %s' % (name, e))


def _read_control(tar, member, name):
    if member.size > MAX_CONTROL_BYTES:
        raise Refused('entry %s is %d bytes; docker save writes it far '
                      'smaller (at most %d accepted)'
                      % (name, member.size, MAX_CONTROL_BYTES))
    return b''.join(_blocks(tar, member, name))
