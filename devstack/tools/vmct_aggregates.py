#!/usr/bin/env python3
"""Put every compute host into the availability zone of its instance kind.

    vmct_aggregates.py [--values FILE] [--expect KIND=N]... [--timeout SECONDS] [--wait-only]

A hypervisor of type ``docker`` (the Docker driver in nova-docker/) belongs to
the ``docker`` kind, one of type ``QEMU`` or ``KVM`` (libvirt) to the ``kvm``
kind; each kind has an aggregate named after its availability zone
(``VMCT_DOCKER_AZ`` and ``VMCT_KVM_AZ`` in tools/vmct-values, or in the
environment, which wins: local.conf may override them). Hosts of
other hypervisor types are left alone. Idempotent.

``--expect docker=1`` waits (up to ``--timeout``) until at least one enabled,
up hypervisor of that kind is known: a multinode job runs this on the
controller once every node has stacked. ``--wait-only`` stops there (new hosts
must be mapped to a cell, ``nova-manage cell_v2 discover_hosts``, before an
aggregate takes them).

Credentials: openstacksdk's ``OS_CLOUD`` (devstack's ``devstack-admin``) or the
``OS_*`` variables. Exit 1 with a message naming the problem.
"""

import argparse
import os
import sys
import time

KIND_BY_HYPERVISOR_TYPE = {"docker": "docker", "qemu": "kvm", "kvm": "kvm"}
AZ_VALUES = {"kvm": "VMCT_KVM_AZ", "docker": "VMCT_DOCKER_AZ"}
# tools/vmct_values.py of this repository reads the shared values file
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir, "tools"))
import vmct_values  # noqa: E402

DEFAULT_VALUES = vmct_values.VALUES
read_values = vmct_values.read_values


def zone_values(path, environ):
    """The values file with the zone names of ``environ`` (local.conf's) over it."""
    values = read_values(path)
    values.update({name: environ[name] for name in AZ_VALUES.values() if environ.get(name)})
    for name in AZ_VALUES.values():
        if not values.get(name):
            raise ValueError("%s: %s is not set" % (path, name))
    return values


def parse_expect(specs):
    """["docker=1", ...] -> {"docker": 1}; ValueError naming the bad one."""
    expect = {}
    for spec in specs:
        kind, sep, count = spec.partition("=")
        if kind not in AZ_VALUES or not sep or not count.isdigit():
            raise ValueError("--expect %r: use KIND=N with KIND one of %s, e.g. "
                             "--expect docker=1" % (spec, ", ".join(sorted(AZ_VALUES))))
        expect[kind] = int(count)
    return expect


def hosts_by_kind(hypervisors):
    """{kind: sorted service hosts} of the enabled, up hypervisors."""
    kinds = {}
    for h in hypervisors:
        kind = KIND_BY_HYPERVISOR_TYPE.get((h.hypervisor_type or "").lower())
        host = (h.service_details or {}).get("host")
        if kind is None or not host:
            continue
        if h.status != "enabled" or h.state != "up":
            continue
        kinds.setdefault(kind, set()).add(host)
    return {k: sorted(v) for k, v in kinds.items()}


def missing(kinds, expect):
    """Human-readable shortfalls of ``kinds`` against ``expect``."""
    return ["%d %s host(s) expected, found %d (%s)"
            % (n, kind, len(kinds.get(kind, [])), ", ".join(kinds.get(kind, [])) or "none")
            for kind, n in sorted(expect.items()) if len(kinds.get(kind, [])) < n]


def ensure_aggregate(compute, az, hosts, log):
    agg = compute.find_aggregate(az)
    if agg is None:
        agg = compute.create_aggregate(name=az, availability_zone=az)
        log("created aggregate %s (availability zone %s)" % (az, az))
    for host in hosts:
        if host not in (agg.hosts or []):
            compute.add_host_to_aggregate(agg, host)
            log("added %s to %s" % (host, az))


def run(conn, values, expect, timeout, log, sleep=time.sleep, clock=time.monotonic,
        wait_only=False):
    deadline = clock() + timeout
    while True:
        kinds = hosts_by_kind(conn.compute.hypervisors(details=True))
        short = missing(kinds, expect)
        if not short:
            break
        if clock() >= deadline:
            raise RuntimeError("after %ds: %s" % (timeout, "; ".join(short)))
        sleep(5)
    if wait_only:
        log("found %s" % "; ".join("%s: %s" % (k, ", ".join(h)) for k, h in sorted(kinds.items())))
        return kinds
    for kind, hosts in sorted(kinds.items()):
        ensure_aggregate(conn.compute, values[AZ_VALUES[kind]], hosts, log)
        log("%s: %s in availability zone %s" % (kind, ", ".join(hosts), values[AZ_VALUES[kind]]))
    return kinds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", default=DEFAULT_VALUES,
                        help="vmct-values file (default: %(default)s)")
    parser.add_argument("--expect", action="append", default=[], metavar="KIND=N",
                        help="wait for at least N up hypervisors of KIND (kvm, docker)")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds to wait for --expect (default: %(default)s)")
    parser.add_argument("--wait-only", action="store_true",
                        help="only wait for --expect, change nothing")
    args = parser.parse_args(argv)
    try:
        expect = parse_expect(args.expect)
        values = zone_values(args.values, os.environ)
    except (OSError, ValueError) as e:
        parser.error(str(e))

    import openstack  # only where a cloud is reached

    def log(msg):
        print("[vmct_aggregates] %s" % msg, flush=True)

    try:
        run(openstack.connect(), values, expect, args.timeout, log, wait_only=args.wait_only)
    except RuntimeError as e:
        print("[vmct_aggregates] ERROR: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
