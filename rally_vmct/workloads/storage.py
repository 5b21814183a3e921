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
"""Where sysbench fileio's files live: directory, file system, device, O_DIRECT.

Pure: :func:`probe_command` is a POSIX shell line (busybox too) that makes the
work directory and prints what backs it; :func:`storage_facts` turns its output
into the facts ``fileio_dir``, ``fileio_fs``, ``fileio_device``, ``fileio_mount``
(and ``fileio_direct`` from the plan, :func:`direct_mode`).

The default directory, :data:`DEFAULT_FILEIO_DIR`, is on block storage in every
kind: the QEMU guest mounts its virtio disk on /var/tmp, a Docker container's
/var/tmp is its overlay2 writable layer, and natively /var/tmp is the host's disk.
"""

import posixpath
import re
import shlex

DEFAULT_FILEIO_DIR = "/var/tmp/vmct-fileio"
ARGUMENT = "fileio_dir"
FACT_KEYS = ("fileio_dir", "fileio_fs", "fileio_device", "fileio_mount", "fileio_direct")
NO_FILEIO = "not used (no fileio workload)"

# File systems that keep files in memory: O_DIRECT (if accepted) reaches no disk.
MEMORY_FS = ("tmpfs", "ramfs", "rootfs")

_BEGIN = "vmct-mounts-begin"
_END = "vmct-mounts-end"

# Prints existed=, real= (physical path), statfs=, block=, driver= and /proc/mounts.
# st_dev -> major:minor as glibc's gnu_dev_major/minor do; /sys/dev/block/M:m is the
# disk or partition (then its parent holds device/driver).
_PROBE = r"""
d=%(dir)s
if [ -d "$d" ]; then echo existed=yes; else echo existed=no; fi
mkdir -p "$d" && cd "$d" || exit 1
echo "real=$(pwd -P)"
echo "statfs=$(stat -f -c %%T . 2>/dev/null)"
n=$(stat -c %%d . 2>/dev/null)
if [ -n "$n" ]; then
    b=/sys/dev/block/$(( (n >> 8) & 4095 )):$(( (n & 255) | ((n >> 12) & 1048320) ))
    if [ -e "$b" ]; then
        echo "block=$(basename "$(readlink -f "$b")")"
        [ -e "$b/partition" ] && b="$b/.."
        echo "driver=$(basename "$(readlink -f "$b/device/driver" 2>/dev/null)" 2>/dev/null)"
    fi
fi
echo %(begin)s
cat /proc/mounts
echo %(end)s
"""


class StorageError(ValueError):
    """The fileio directory is unusable; the message names the argument and the fix."""


def check_fileio_dir(path):
    """``path`` normalized, or :class:`StorageError` naming the task argument."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise StorageError("Argument '%s' must be an absolute directory path on block "
                           "storage, e.g. %s; got %r" % (ARGUMENT, DEFAULT_FILEIO_DIR, path))
    if any(ch in path for ch in "\n\r\0"):
        raise StorageError("Argument '%s' must not contain control characters; got %r"
                           % (ARGUMENT, path))
    normalized = posixpath.normpath(path)
    if normalized.startswith("//"):
        normalized = "/" + normalized.lstrip("/")
    if normalized == "/":
        raise StorageError("Argument '%s' must not be the root directory: sysbench fileio "
                           "creates and removes its files there; use e.g. %s"
                           % (ARGUMENT, DEFAULT_FILEIO_DIR))
    return normalized


def probe_command(workdir):
    """Shell command that creates ``workdir`` and prints what backs it."""
    script = _PROBE % {"dir": shlex.quote(workdir), "begin": _BEGIN, "end": _END}
    return "sh -c %s" % shlex.quote(script)


def _unescape(field):
    # /proc/mounts writes space, tab, newline and backslash as octal escapes.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text):
    """``[(source, mount point, fs type, options)]`` of /proc/mounts text."""
    mounts = []
    for line in (text or "").splitlines():
        fields = line.split()
        if len(fields) >= 4:
            mounts.append(tuple(_unescape(f) for f in fields[:4]))
    return mounts


def mount_of(path, mounts):
    """The entry of ``mounts`` whose mount point is the longest prefix of ``path``.

    Of several mounts on one point the last (the one on top) wins; None if none fits.
    """
    best = None
    for entry in mounts:
        point = entry[1]
        inside = point == "/" or path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[1])):
            best = entry
    return best


def parse_probe(output):
    """``{existed, real, statfs, block, driver, mounts}`` of :func:`probe_command` output."""
    values, mounts, inside = {}, [], False
    for line in (output or "").splitlines():
        if line == _BEGIN:
            inside = True
        elif line == _END:
            inside = False
        elif inside:
            mounts.append(line)
        else:
            key, sep, value = line.partition("=")
            if sep:
                values[key.strip()] = value.strip()
    values["mounts"] = parse_mounts("\n".join(mounts))
    return values


def _device(source, fs_type, options, block, driver):
    if block:
        name = "/dev/%s" % block
        return "%s (%s)" % (name, driver) if driver else name
    if fs_type in MEMORY_FS:
        return "%s (memory, no block device)" % source
    if fs_type == "overlay":
        layer = "Docker overlay2" if "/overlay2/" in options else "overlay"
        return "%s (%s writable layer; host disk not visible)" % (source, layer)
    return source


def storage_facts(workdir, output):
    """fileio_dir, fileio_fs, fileio_device, fileio_mount of a probe's output."""
    probe = parse_probe(output)
    real = probe.get("real") or workdir
    entry = mount_of(real, probe["mounts"]) or ("unknown", "unknown", "", "")
    source, point, fs_type, options = entry
    fs_type = fs_type or probe.get("statfs") or "unknown"
    facts = {"fileio_dir": workdir if real == workdir else "%s (-> %s)" % (workdir, real),
             "fileio_fs": fs_type,
             "fileio_device": _device(source, fs_type, options, probe.get("block"),
                                      probe.get("driver")),
             "fileio_mount": point}
    return facts, probe.get("existed") == "yes"


def is_direct(params):
    """Whether sysbench fileio parameters ask for O_DIRECT (extra_flags direct)."""
    flags = params.get("extra_flags")
    flags = [flags] if isinstance(flags, str) else (flags or [])
    return "direct" in flags


def direct_mode(param_sets):
    """fileio_direct of the fileio workloads' parameters: "on", "off" or "mixed"."""
    modes = {is_direct(params) for params in param_sets}
    if modes == {True}:
        return "on"
    if modes == {False}:
        return "off"
    return "mixed"


_EINVAL = re.compile(r"errno\s*=\s*22\b|Invalid argument")


def direct_refused(text):
    """Whether sysbench output shows an open() refused with EINVAL (O_DIRECT unsupported)."""
    return bool(_EINVAL.search(text or ""))


def direct_refused_hint(workdir, fs_type=None):
    """What to do when the file system of ``workdir`` refuses O_DIRECT."""
    on = " (%s)" % fs_type if fs_type else ""
    return ("the file system of fileio_dir %s%s refused O_DIRECT (EINVAL on open): set the "
            "task argument fileio_dir to a directory on block storage (e.g. ext4 or xfs on "
            "a disk), or drop extra_flags: direct from this workload" % (workdir, on))
