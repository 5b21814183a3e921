"""Build the vmct QEMU guest from Debian packages only (stdlib; run as root on Debian 12).

A Debian cloud kernel plus an initramfs that holds the whole userland: busybox (init, DHCP,
shell), dropbear (sshd on 22), sysbench and netperf/netserver with exactly the shared libraries
their ELF headers name, the kernel modules for virtio, the config-drive CD-ROM and the ACPI
power button, and a virtio root disk with an ext2 file system mounted on /var/tmp (where
sysbench fileio runs, with O_DIRECT). Packages come from the machine's Debian mirrors
(apt-get download, dpkg-deb -x).

  python3 qemu_guest.py OUTDIR CACHEDIR     writes OUTDIR/{vmlinuz,initrd.img,disk.qcow2,build-id}
  python3 qemu_guest.py --packages          prints the packages it would download, one a line

Every package it starts from must be installable (tools/vmct-apt resolve: non-free for netperf).
"""

import gzip
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "qemu-guest")
VMCT_APT = os.path.join(HERE, "..", "vmct-apt")
KERNEL_META = "linux-image-cloud-amd64"
TOOLS = ["busybox-static", "dropbear-bin", "sysbench", "netperf"]
# sysbench depends on "libluajit2-5.1-2 | libluajit-5.1-2": take the second, skip the first
SKIP_PACKAGES = {"libluajit2-5.1-2", "libluajit2-5.1-common"}
BINARIES = {  # path in the packages -> path in the guest
    "bin/busybox": "bin/busybox",
    "usr/sbin/dropbear": "usr/sbin/dropbear",
    "usr/bin/dropbearkey": "usr/bin/dropbearkey",
    "usr/bin/sysbench": "usr/bin/sysbench",
    "usr/bin/netperf": "usr/bin/netperf",
    "usr/bin/netserver": "usr/bin/netserver",
}
MODULES = ["virtio_pci", "virtio_net", "virtio_blk", "virtio_scsi", "sr_mod", "isofs",
           "evdev", "button"]
# The root disk's size: no larger than the flavor's (tools/vmct-values VMCT_FLAVOR_DISK, 1 GB)
DISK_BYTES = 1 << 30
DISK_LABEL = "vmct-fileio"
LIB_DIRS = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "usr/lib"]


def log(msg):
    print("[build-qemu-guest] %s" % msg, flush=True)


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def kernel_package():
    out = run("apt-cache", "depends", KERNEL_META)
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Depends: linux-image-"):
            return line.split()[1]
    raise SystemExit("no linux-image-*-cloud-amd64 found (apt-get update?)")


def package_closure(roots):
    out = run("apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
              "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *roots)
    names = {ln for ln in out.splitlines() if ln and not ln.startswith((" ", "<"))}
    lost = sorted(set(roots) - names)
    if lost:
        raise SystemExit("apt-cache depends lost %s: no install candidate" % ", ".join(lost))
    return sorted(names - SKIP_PACKAGES)


def packages():
    """The .debs of the guest: its tools with their dependencies, and the kernel."""
    subprocess.run([VMCT_APT, "resolve", KERNEL_META, *TOOLS], check=True)
    return sorted(set(package_closure(TOOLS)) | {kernel_package()})


def download(packages, cache):
    os.makedirs(cache, exist_ok=True)
    have = {f.split("_")[0]: f for f in os.listdir(cache) if f.endswith(".deb")}
    missing = [p for p in packages if p not in have]
    if missing:
        log("apt-get download %s" % " ".join(missing))
        os.chmod(cache, 0o755)
        subprocess.run(["apt-get", "download", "-qq", *missing], cwd=cache, check=True,
                       stderr=subprocess.DEVNULL)
        have = {f.split("_")[0]: f for f in os.listdir(cache) if f.endswith(".deb")}
    return [os.path.join(cache, have[p]) for p in packages]


def extract(debs, root):
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    for deb in debs:
        run("dpkg-deb", "-x", deb, root)


def needed(path):
    out = run("readelf", "-dW", path)
    return [ln.split("[")[1].split("]")[0] for ln in out.splitlines() if "(NEEDED)" in ln]


def find_lib(root, soname):
    for d in LIB_DIRS:
        p = os.path.join(root, d, soname)
        if os.path.exists(p):
            return os.path.join(d, soname)
    raise SystemExit("shared library %s not found in the downloaded packages" % soname)


def copy_resolved(root, rel, dest_root, dest_rel=None):
    dst = os.path.join(dest_root, dest_rel or rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(os.path.realpath(os.path.join(root, rel)), dst)


def copy_with_libs(root, tree):
    todo, seen = [], set()
    for src, dst in BINARIES.items():
        copy_resolved(root, src, tree, dst)
        todo.append(src)
    while todo:
        for soname in needed(os.path.realpath(os.path.join(root, todo.pop()))):
            if soname in seen:
                continue
            seen.add(soname)
            rel = find_lib(root, soname)
            copy_resolved(root, rel, tree, os.path.join("lib/x86_64-linux-gnu", soname))
            todo.append(rel)
    # the dynamic loader where the binaries' PT_INTERP expects it
    copy_resolved(root, find_lib(root, "ld-linux-x86-64.so.2"), tree, "lib64/ld-linux-x86-64.so.2")
    return sorted(seen)


def kernel_modules(root, tree):
    kver = os.listdir(os.path.join(root, "lib/modules"))[0]
    run("depmod", "-b", root, kver)
    deps = {}
    with open(os.path.join(root, "lib/modules", kver, "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            deps[os.path.basename(path).split(".ko")[0]] = (path, rest.split())
    order = []

    def add(name):
        if name in order:
            return
        if name not in deps:
            return  # built into this kernel
        for d in deps[name][1]:
            add(os.path.basename(d).split(".ko")[0])
        order.append(name)

    for m in MODULES:
        add(m)
    os.makedirs(os.path.join(tree, "lib/modules"), exist_ok=True)
    for name in order:
        src = os.path.join(root, "lib/modules", kver, deps[name][0])
        dst = os.path.join(tree, "lib/modules", name + ".ko")
        if src.endswith(".xz"):
            run("sh", "-c", 'xz -dc "$1" > "$2"', "-", src, dst)
        else:
            shutil.copy2(src, dst)
    with open(os.path.join(tree, "etc/modules"), "w") as f:
        f.write("\n".join(order) + "\n")
    vmlinuz = [f for f in os.listdir(os.path.join(root, "boot")) if f.startswith("vmlinuz-")][0]
    return kver, os.path.join(root, "boot", vmlinuz)


def skeleton(tree):
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "etc/init.d", "proc", "sys", "dev", "run",
              "tmp", "root", "mnt", "var/log", "lib/x86_64-linux-gnu"):
        os.makedirs(os.path.join(tree, d), exist_ok=True)
    files = {"etc/inittab": ("inittab", 0o644), "etc/init.d/rcS": ("rcS", 0o755),
             "etc/init.d/rcK": ("rcK", 0o755), "etc/udhcpc.script": ("udhcpc.script", 0o755)}
    for dst, (src, mode) in files.items():
        shutil.copy(os.path.join(FILES, src), os.path.join(tree, dst))
        os.chmod(os.path.join(tree, dst), mode)
    text = {
        # "*": no password login (dropbear runs with -s anyway), keys only
        "etc/passwd": "root:*:0:0:root:/root:/bin/sh\n",
        "etc/group": "root:x:0:\n",
        "etc/shells": "/bin/sh\n",
        "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
        "etc/hosts": "127.0.0.1 localhost\n",
    }
    for path, content in text.items():
        with open(os.path.join(tree, path), "w") as f:
            f.write(content)


def applet_links(tree):
    os.symlink("bin/busybox", os.path.join(tree, "init"))
    # busybox applets as symlinks (the static busybox lists them itself)
    applets = run(os.path.join(tree, "bin/busybox"), "--list-full").split()
    for a in applets:
        p = os.path.join(tree, a)
        if not os.path.lexists(p):
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink("/bin/busybox", p)


def cpio_gz(tree, out):
    files = run("sh", "-c", "cd \"$1\" && find . | LC_ALL=C sort", "-", tree)
    cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"], cwd=tree,
                          input=files.encode(), capture_output=True, check=True).stdout
    with open(out, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as f:
            f.write(cpio)


def root_disk(work, disk):
    """The instance's virtio disk: an empty ext2 file system that rcS mounts on /var/tmp.

    sysbench fileio works there (its default directory), so O_DIRECT reaches a block device
    as KEK's parameters expect, instead of the initramfs, which refuses O_DIRECT. Made here
    rather than at boot, so no boot pays for mke2fs; the compressed qcow2 stays small.
    """
    raw = os.path.join(work, "disk.raw")
    with open(raw, "wb") as f:
        f.truncate(DISK_BYTES)
    run("mke2fs", "-q", "-F", "-t", "ext2", "-m", "0", "-L", DISK_LABEL,
        "-E", "root_owner=0:0", raw)
    run("qemu-img", "convert", "-q", "-c", "-f", "raw", "-O", "qcow2", raw, disk)


def build_id(debs):
    h = hashlib.sha256()
    for d in sorted(os.path.basename(d) for d in debs):
        h.update(d.encode())
    for name in sorted(os.listdir(FILES)) + [os.path.basename(__file__)]:
        path = os.path.join(FILES, name) if name != os.path.basename(__file__) else __file__
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def main(out, cache):
    debs = download(packages(), cache)
    bid = build_id(debs)
    try:
        with open(os.path.join(out, "build-id")) as f:
            if f.read().strip() == bid:
                log("up to date (build %s)" % bid)
                return 0
    except OSError:
        pass
    work = out + ".work"
    shutil.rmtree(work, ignore_errors=True)
    root, tree = os.path.join(work, "debs"), os.path.join(work, "initrd")
    extract(debs, root)
    os.makedirs(tree)
    skeleton(tree)
    libs = copy_with_libs(root, tree)
    applet_links(tree)
    kver, vmlinuz = kernel_modules(root, tree)
    os.makedirs(out, exist_ok=True)
    cpio_gz(tree, os.path.join(out, "initrd.img"))
    shutil.copy(vmlinuz, os.path.join(out, "vmlinuz"))
    disk = os.path.join(out, "disk.qcow2")
    if os.path.exists(disk):
        os.unlink(disk)
    root_disk(work, disk)
    with open(os.path.join(out, "build-id"), "w") as f:
        f.write(bid + "\n")
    shutil.rmtree(work)
    log("built %s: kernel %s, initrd %.1f MB, %d shared libraries" % (
        bid, kver, os.path.getsize(os.path.join(out, "initrd.img")) / 1e6, len(libs)))
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--packages"]:
        print("\n".join(packages()))
        sys.exit(0)
    sys.exit(main(sys.argv[1], sys.argv[2]))
