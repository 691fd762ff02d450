"""What the end-to-end tests of GPU figures share (test_gpu_clock.py, test_gpu_analysis.py):
mlbench run with a private store, the GPU being the fake NVML library replaying a script
(tests/fakes/fake_nvml.c; its answers advance one per call, whoever calls), and the one result
it wrote.

Environment (set by ctest): MLBENCH, STAGE_PROG, FAKE_NVML."""
import glob
import json
import os
import subprocess
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")


class FakeGpuCase(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("FAKE_NVML"):
            self.skipTest("FAKE_NVML not set (run through ctest): no fake GPU")
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-test-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def mlbench(self, script, *args, timeout=120):
        """mlbench run with a private store and the fake NVML replaying script (None: no fake);
        returns (exit status, stdout, stderr)."""
        env = dict(os.environ)
        if script is not None:
            path = os.path.join(self.tmp.name, "nvml.script")
            with open(path, "w") as f:
                f.write(script)
            env.update(MLBENCH_NVML_LIBRARY=os.environ["FAKE_NVML"], FAKE_NVML_SCRIPT=path)
        p = subprocess.run([MLBENCH, "run", "--store", self.store, *args], capture_output=True,
                           text=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def result(self):
        """The one result in the store."""
        files = glob.glob(os.path.join(self.store, "runs", "*.json"))
        self.assertEqual(len(files), 1, files)
        with open(files[0]) as f:
            return json.load(f)
