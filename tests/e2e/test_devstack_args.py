"""The task args devstack's plugin writes validate every sample against the all-in-one cloud.

The plugin's real function (``vmct_write_task_args`` in devstack/lib/vmct) runs in bash with
devstack's own helpers stubbed (tests/unit/devstack/devstack-stubs.sh) and the real Python, for
the AIO's instance network; then ``rally task validate`` (the demo's Rally, the AIO as its
cloud) checks every file of samples/tasks with those args: syntax, platform and the semantic
stage (images, flavors and zones the args name must exist in the cloud, and every concurrency
level must fit the users' quotas and placement's capacity of the kind's hosts). The Zuul jobs run
the samples with exactly this file. tools/test-stages/50-e2e leaves in $VMCT_E2E_DIR:
  task-args.yaml     the AIO's args (for its network id, fake kind and capacity)
  rally              the demo's Rally wrapper (its own DB and the AIO env)
  native-args.json   tools/native-target args (the bare-metal baseline of demo/native.yaml)
"""

from concurrent import futures
import glob
import json
import os
import subprocess
import sys
import unittest

import yaml

from tests.e2e import test_demo_task
from tests.unit.devstack import base

SAMPLES = sorted(glob.glob(os.path.join(base.ROOT, "samples", "tasks", "*.yaml")))
VALID = "Input Task is valid :)"
# Validations at once: each is ~19 s of a Rally process and Keystone's work on a temporary user
# (9 samples one after another took about 3 min of the e2e stage).
VALIDATORS = 3
JOB_SAMPLES = ("lifecycle.yaml", "benchmark.yaml", "demo.yaml")


@test_demo_task.needs_e2e
class DevstackArgsValidateTest(base.PluginTestCase):

    def write_devstack_args(self, net_id):
        """Run devstack/lib/vmct's vmct_write_task_args NET_ID; the file it wrote."""
        os.symlink(sys.executable, os.path.join(self.bin, "python3"))  # the real one
        script = "\n".join([
            "set -o errexit",
            'source "$1"', 'source "$2/settings"', 'mkdir -p "$VMCT_DATA_DIR"',
            'vmct_write_task_args "$3"', 'echo "$VMCT_TASK_ARGS_FILE"'])
        env = self.devstack_env(base.SINGLE_NODE, VMCT_KINDS="kvm docker")
        proc = subprocess.run(["bash", "-c", script, "-", base.STUBS, base.DEVSTACK, net_id],
                              env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(0, proc.returncode, proc.stderr)
        return proc.stdout.splitlines()[-1]  # after the writer's own line

    def setUp(self):
        super().setUp()
        os.unlink(os.path.join(self.bin, "python3"))
        with open(os.path.join(test_demo_task.E2E_DIR, "task-args.yaml")) as f:
            self.aio_args = yaml.safe_load(f)
        self.net_id = self.aio_args["network_id"]
        self.rally = test_demo_task.load("rally")
        native = test_demo_task.load("native-args.json")
        # demo.yaml's form and native.yaml's
        self.native = {"native": native["native"], "native_hosts": [native["native"]["host"]],
                       "netperf_peer": native["native"]["netperf_peer"]}

    def scale_args(self, args):
        """scale.yaml's fake_kind and capacity, which devstack's file does not have.

        Its writer reads no placement (and devstack runs no fake compute): the AIO's fake kind
        and the AIO's figures (tools/task_args.py --capacity-from-cloud), given to each kind of
        devstack's file by its availability zone.
        """
        aio = self.aio_args
        fake = [aio["fake_kind"]] if aio.get("fake_kind") else []
        holds = {k["availability_zone"]: aio["capacity"][k["name"]]
                 for k in aio["kinds"] + fake if k["name"] in aio.get("capacity", {})}
        extra = {"capacity": {k["name"]: holds[k["availability_zone"]]
                              for k in args["kinds"] + fake if k["availability_zone"] in holds}}
        if fake:
            extra["fake_kind"] = fake[0]
        return extra

    def validate(self, sample, path, args):
        """``rally task validate SAMPLE`` with devstack's file (and what the sample adds)."""
        argv = [self.rally, "task", "validate", sample, "--task-args-file", path]
        if os.path.basename(sample) in ("demo.yaml", "native.yaml"):
            argv += ["--task-args", json.dumps(self.native)]
        if os.path.basename(sample) == "scale.yaml":
            argv += ["--task-args", json.dumps(self.scale_args(args))]
        return subprocess.run(argv, capture_output=True, text=True, timeout=300)

    def validate_all(self, samples):
        path = self.write_devstack_args(self.net_id)
        with open(path) as f:
            args = yaml.safe_load(f)
        self.assertEqual(self.net_id, args["network_id"])
        self.assertEqual(["kvm", "docker"], [k["name"] for k in args["kinds"]])
        self.assertTrue(args["access_namespace"].startswith("qdhcp-"))
        with futures.ThreadPoolExecutor(VALIDATORS) as pool:
            procs = dict(zip(samples, pool.map(lambda s: self.validate(s, path, args), samples)))
        for sample, proc in procs.items():
            self.assertIn(VALID, proc.stdout, "%s:\n%s" % (sample, proc.stdout[-3000:]))

    def test_the_job_samples_validate_against_the_aio(self):
        # what the Zuul jobs run, and the demo: one round of validators
        self.assertEqual(len(JOB_SAMPLES), VALIDATORS)
        self.validate_all([s for s in SAMPLES if os.path.basename(s) in JOB_SAMPLES])

    @unittest.skipUnless(os.environ.get("VMCT_E2E_FULL") == "1",
                         "VMCT_E2E_FULL unset: the long suite validates the other samples "
                         "(about 3 min)")
    def test_the_other_samples_validate_against_the_aio(self):
        others = [s for s in SAMPLES if os.path.basename(s) not in JOB_SAMPLES]
        self.assertTrue(others)
        self.validate_all(others)
