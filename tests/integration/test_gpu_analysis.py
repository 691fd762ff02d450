"""End-to-end tests of what mlbench concludes from NVML GPM (docs/analysis.md): the activities
sampled (or absent without GPM), a GPU "busy" with kernels that fill few SMs called
under-occupied, and a stage that ends before its GPU work warned about. The GPU is the fake NVML
library (tests/fakes/fake_nvml.c), whose scripted answers advance one per call: the timelines
below are written per sampling tick, with margins for a loaded machine.

Environment (set by ctest): MLBENCH, STAGE_PROG, FAKE_NVML (fake_gpu.py)."""
import glob
import os
import subprocess
import sys
import unittest

from fake_gpu import FakeGpuCase, MLBENCH, STAGE_PROG

SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

# One GPU with GPM, the workload's process on it.
GPM_GPU = """name 0 NVIDIA H200
cc 0 9 0
gpm 0 1
mem_total 0 150000000000
mem_used 0 20000000000
procs 0 CHILD:20000000000
power 0 500000
"""


class GpuAnalysisTest(FakeGpuCase):
    def run_fake(self, script, *args):
        """One measured run with the fake NVML replaying script: the result and the printed
        summary."""
        rc, out, err = self.mlbench(script, "-w", "0", "-r", "1", "-v", *args)
        self.assertEqual(rc, 0, err)
        return self.result(), out

    @staticmethod
    def series(result):
        return {(s["metric"], s.get("labels", "")): s for s in result["runs"][0]["samples"]["series"]}

    @staticmethod
    def verdict(result, stage):
        return next(v for v in result["analysis"]["verdicts"] if v["stage"] == stage)

    def test_under_occupied(self):
        """A kernel always running but a fifth of the SMs active: under-occupied, and the
        activities are in the result as ratios."""
        script = GPM_GPU + "util 0 97/10\ngpm_sm 0 20\ngpm_occupancy 0 8\ngpm_tensor 0 3\n"
        r, out = self.run_fake(script, "--interval", "50ms", "--", STAGE_PROG, "sleeper")
        names = {name for name, _ in self.series(r)}
        for name in ("gpu_sm_active_ratio", "gpu_sm_occupancy_ratio", "gpu_tensor_active_ratio"):
            self.assertIn(name, names)
        v = self.verdict(r, "wait")
        self.assertEqual(v["rule"], "gpu-under-occupied", v)
        self.assertIn("20 % of the SMs", v["evidence"])
        stage = next(s for s in r["summary"]["stages"] if s["name"] == "wait")
        sm = next(x for x in stage["resources"] if x["metric"] == "gpu_sm_active_ratio")
        self.assertAlmostEqual(sm["mean"], 0.20)
        self.assertIn("gpu-under-occupied", out)
        self.assertIn("SM act", out)  # the resources table's column
        md = subprocess.run([MLBENCH, "report", "--store", self.store, "-f", "md", "latest"],
                            capture_output=True, text=True, timeout=60)
        self.assertEqual(md.returncode, 0, md.stderr)
        self.assertIn("| GPU util | SM active |", md.stdout)

    def test_no_gpm(self):
        """Without GPM the activities are absent, not 0, and utilisation alone decides."""
        script = GPM_GPU.replace("gpm 0 1", "gpm 0 0") + "util 0 97/10\ngpm_sm 0 20\n"
        r, out = self.run_fake(script, "--interval", "50ms", "--", STAGE_PROG, "sleeper")
        names = {name for name, _ in self.series(r)}
        self.assertNotIn("gpu_sm_active_ratio", names)
        self.assertEqual(self.verdict(r, "wait")["rule"], "gpu-bound")
        self.assertNotIn("SM act", out)

    # train 1.5 s then eval 1.5 s, sampled every 100 ms: the GPU's value at tick k covers
    # [k-1, k] x 100 ms (GPM), so step j of gpm_sm is the window ending at (j + 1) x 100 ms.
    STAGES = ("--interval", "100ms", "--", STAGE_PROG, "stages", "train", "1500", "eval", "1500")

    def test_unsynchronized(self):
        """The GPU busy 500 ms past train's end, then idle: train's time leaves GPU work out."""
        busy = " ".join(["90"] * 20)  # up to 2.0 s: 500 ms into eval
        r, out = self.run_fake(GPM_GPU + f"util 0 90/10\ngpm_sm 0 {busy} 0\n", *self.STAGES)
        warnings = [w for w in r["warnings"] if w["code"] == "gpu_unsynchronized"]
        self.assertEqual(len(warnings), 1, r["warnings"])
        text = warnings[0]["message"]
        self.assertIn("stage 'train' seems to end before its GPU work", text)
        self.assertIn("into 'eval'", text)
        self.assertIn("torch.cuda.synchronize()", text)
        self.assertIn("seems to end before its GPU work", out)
        # the report draws SM active beside utilisation: the tail is seen there
        html = subprocess.run([MLBENCH, "report", "--store", self.store, "-f", "html", "latest"],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(html.returncode, 0, html.stderr)
        self.assertIn("GPU SM active", html.stdout)
        self.assertIn("GPU utilisation", html.stdout)

    def test_synchronized(self):
        """The GPU falls idle before train ends (synchronised): no warning; nor when eval keeps
        the GPU busy to its end (its own work)."""
        busy = " ".join(["90"] * 12)  # up to 1.2 s
        r, _ = self.run_fake(GPM_GPU + f"util 0 90/10\ngpm_sm 0 {busy} 0\n", *self.STAGES)
        self.assertNotIn("gpu_unsynchronized", [w["code"] for w in r["warnings"]])
        for f in glob.glob(os.path.join(self.store, "runs", "*.json")):
            os.unlink(f)
        r, _ = self.run_fake(GPM_GPU + "util 0 90/10\ngpm_sm 0 90\n", *self.STAGES)
        self.assertNotIn("gpu_unsynchronized", [w["code"] for w in r["warnings"]])

    def test_queued_seen_by_the_marker_client(self):
        """The Python marker client checks PyTorch's stream at each stage end: a stage that
        leaves work queued is named with certainty, without any GPU measured (here a torch
        whose stream is busy at the end of 'train' only)."""
        script = os.path.join(self.tmp.name, "train.py")
        with open(script, "w") as f:
            f.write(
                "import sys, time, types\n"
                "busy = []\n"
                "class Stream:\n"
                "    def query(self):\n"
                "        return not busy\n"
                "torch = types.ModuleType('torch')\n"
                "torch.cuda = types.SimpleNamespace(is_initialized=lambda: True, "
                "current_stream=Stream)\n"
                "sys.modules['torch'] = torch\n"
                "import mlbench_marker as m\n"
                "with m.stage('train'):\n"
                "    busy.append(1)\n"
                "    time.sleep(0.05)\n"
                "busy.clear()\n"
                "with m.stage('eval'):\n"
                "    time.sleep(0.05)\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"))
        p = subprocess.run([MLBENCH, "run", "--store", self.store, "-w", "0", "-r", "2", "--",
                            sys.executable, script], capture_output=True, text=True, env=env,
                           timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        warnings = [w["message"] for w in self.result()["warnings"]
                    if w["code"] == "gpu_unsynchronized"]
        self.assertEqual(len(warnings), 1, warnings)
        self.assertIn("stage 'train' ended with GPU work still queued in 2 of 2 runs", warnings[0])


if __name__ == "__main__":
    unittest.main()
