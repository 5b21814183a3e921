"""Fakes for VMCT.boot_and_benchmark and the vmct_* contexts: SSH, Glance, snapshots."""

import itertools

from tests.unit.timing import fakes
from tests.unit.workloads import test_runner

FACTS = test_runner.FACTS
fixture = test_runner.fixture


class FakeSSH(object):
    """An SSH client answering scripted commands (first matching substring wins)."""

    def __init__(self, answers, log, address=None):
        self.answers = answers
        self.log = log
        self.address = address
        self.closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.closed = True

    def execute(self, command, timeout=None):
        self.log.append((self.address, command))
        for needle, answer in self.answers:
            if needle in command:
                if callable(answer):
                    answer = answer(command)
                if isinstance(answer, Exception):
                    raise answer
                return answer
        raise AssertionError("unexpected command %r" % command)


class FakeImages(object):

    def __init__(self, glance):
        self.glance = glance

    def get(self, image_id):
        image = self.glance.images_by_id.get(image_id)
        if image is None:
            raise fakes.NotFound()
        # becomes active after ``active_after`` polls (or stays as scripted)
        image["polls"] += 1
        if image["status"] == "saving" and image["polls"] > self.glance.active_after:
            image["status"] = self.glance.final_status
        return dict(image)

    def delete(self, image_id):
        self.glance.deleted.append(image_id)
        if self.glance.images_by_id.pop(image_id, None) is None:
            raise fakes.NotFound()

    def update(self, image_id, **kwargs):
        self.glance.images_by_id[image_id].update(kwargs)


class FakeMembers(object):

    def __init__(self, glance):
        self.glance = glance

    def create(self, image_id, member_id):
        self.glance.members.append((image_id, member_id))


class FakeGlance(object):

    def __init__(self):
        self.images_by_id = {}
        self.deleted = []
        self.members = []
        self.active_after = 2
        self.final_status = "active"
        self.ids = itertools.count(1)
        self.images = FakeImages(self)
        self.image_members = FakeMembers(self)

    def snapshot(self, server_id, name):
        image_id = "img-snap-%d" % next(self.ids)
        self.images_by_id[image_id] = {"id": image_id, "name": name, "status": "saving",
                                       "server": server_id, "polls": 0}
        return image_id


class SnapshotNova(fakes.FakeNova):
    """FakeNova with ``servers.create_image`` backed by a :class:`FakeGlance`."""

    def __init__(self, clock, glance, **scripts):
        super().__init__(clock, **scripts)
        self.glance = glance
        servers = self.servers
        nova = self

        def create_image(server, name):
            record = servers._record(server)
            nova.count("POST /servers/id/action createImage")
            nova.snapshots.append((record.id, record.state()[1]))
            return glance.snapshot(record.id, name)
        servers.create_image = create_image
        self.snapshots = []


class FakeClients(fakes.FakeClients):

    def __init__(self, nova, glance=None):
        super().__init__(nova)
        self._glance = glance

    def glance(self, version=None):
        return self._glance


def answers(facts=None, mounts="facts/qemu-tcg-guest-var-tmp.probe",
            fileio_modes=("seqrd", "rndrd", "seqwr", "rndwr"), memory=True):
    """FakeSSH answers: the facts, then sysbench 1.0's and netperf's real outputs.

    ``facts``: the facts text (default :data:`FACTS`); ``mounts``: the fixture the
    storage probe answers; the fileio modes and memory operations answered.
    """
    f = fixture
    found = [("uname", (0, FACTS if facts is None else facts, "")),
             ("vmct-mounts-begin", (0, f(mounts), "")),
             (" prepare", (0, f("sysbench/1.0-fileio-prepare.txt"), "")),
             (" cleanup", (0, f("sysbench/1.0-fileio-cleanup.txt"), "")),
             ("sysbench cpu", (0, f("sysbench/1.0-cpu.txt"), ""))]
    found += [("--memory-oper=%s" % op, (0, f("sysbench/1.0-memory-%s.txt" % op), ""))
              for op in (("read", "write") if memory else ())]
    found += [("--file-test-mode=%s" % mode, (0, f("sysbench/1.0-fileio-%s.txt" % mode), ""))
              for mode in fileio_modes]
    return found + [("netperf -H", (0, f("netperf/tcp_rr.keyval"), ""))]


def live_servers(nova):
    """Ids of servers the fake Nova still has (not deleted and gone)."""
    alive = []
    for record in nova.servers.created:
        state = record.state()
        if state is not None and state[1] != "GONE":
            alive.append(record.id)
    return alive
