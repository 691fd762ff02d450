"""The scenario suite (issue 35): realistic workloads with a known truth, and the answer mlbench
must give of each: the verdict and advice it must get, and what it must not say. Each scenario
is measured for real by the built binary; on a machine busy with something else (two busy loops
beside it: ../shared/tools/under-load) a scenario either holds or mlbench says the run was
disturbed, and then the test asserts that answer instead.

| scenario | the truth | must | must not |
|---|---|---|---|
| sleep beside another process's synchronous disk writes | the workload sleeps | `idle` | `io-bound`, storage advice, an I/O saving |
| uncached reads (O_DIRECT) | it waits for its own disk | `io-bound` from its own waits | — |
| one Python thread computing | one core | `cpu-bound-single-thread` (disturbed: `cpu-starved` with `other_load`/`cpu_contention`) | `idle`, `io-bound` |
| three processes passing one piece of work around | one core's work, in turns | `cpu-bound-one-core`, "before adding workers" | "single-thread", "parallelise it over" |
| a PyTorch loop whose DataLoader loads in the main process | input-bound (`num_workers=0`) | advice to raise `num_workers` | bf16 advice for the training stage that waits for data |
| an A/A pair, back to back | no change | `no change` or `inconclusive` | `faster`, `slower` |
| a 2x slowdown at the README's 3 runs | slower | `slower`; `--fail-if-slower 5` exits 1 | a silent pass |
| a sweep of two identical commands | no point is better | no winner, the reason | a winner |

Run: python3 -m unittest -v test_scenarios (ctest: scenarios). Environment: MLBENCH (the binary),
MLBENCH_SOURCE (the source tree)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
DISTURBED = {"other_load", "cpu_contention", "cpu_steal"}


def torch_python():
    """An interpreter that imports torch (Debian's /usr/bin/python3 has python3-torch), or None."""
    for python in (sys.executable, "/usr/bin/python3"):
        if python and os.path.exists(python) and subprocess.run(
                [python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    return None


class Scenario(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-scenario-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def env(self):
        e = dict(os.environ)
        e.pop("MLBENCH_STORE", None)
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        return e

    def cli(self, *args, timeout=300):
        p = subprocess.run([MLBENCH, args[0], "--store", self.store, *args[1:]],
                           capture_output=True, text=True, env=self.env(), timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def run_script(self, source, *options, python=sys.executable, args=()):
        """mlbench run of a Python script: the result document and the printed summary."""
        script = os.path.join(self.tmp.name, "workload.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(source))
        out = os.path.join(self.tmp.name, "result.json")
        rc, text, err = self.cli("run", "-o", out, *options, "--", python, script, *args)
        self.assertEqual(rc, 0, err)
        with open(out) as f:
            return json.load(f), text

    @staticmethod
    def verdict(result, stage):
        for v in result["analysis"]["verdicts"]:
            if v["stage"] == stage:
                return v
        raise AssertionError(f"no verdict for {stage}: {result['analysis']['verdicts']}")

    @staticmethod
    def codes(result):
        return {w["code"] for w in result["warnings"]}

    def disturbed(self, result, v):
        """Whether other processes took the CPUs and mlbench said so (a warning): then a CPU
        stage's verdict is the disturbance's (cpu-starved), or no CPU rule can fit (mixed), or
        its advice is a quiet machine first; the scenario's own verdict cannot be asked for."""
        if not self.codes(result) & DISTURBED:
            return False
        advice = [f["recommendation"] for f in result["analysis"]["findings"]
                  if f["stage"] == v["stage"]]
        return v["rule"] in ("cpu-starved", "mixed") or any("quiet machine" in a
                                                              for a in advice)

    def direct_io_dir(self):
        """A directory that takes O_DIRECT (tmpfs does not), or the scenario is skipped."""
        d = tempfile.mkdtemp(prefix="mlbench-scenario-io-", dir=os.getcwd())
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "data")
        with open(path, "wb") as f:
            f.write(os.urandom(32 << 20))
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
        except OSError as e:
            self.skipTest(f"O_DIRECT is refused in {d} ({e}): no real disk waits can be made")
        return d

    # ---------------------------------------------------------------- I/O: own against others'

    def test_sleep_beside_disk_writes(self):
        d = self.direct_io_dir()
        writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
            import mmap, os, sys
            buf = mmap.mmap(-1, 1 << 20)
            fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_DIRECT | os.O_DSYNC, 0o600)
            while True:
                for i in range(64):
                    os.pwritev(fd, [buf], i << 20)
            """), os.path.join(d, "w")])
        try:
            time.sleep(0.3)
            r, text = self.run_script("""
                import time
                from mlbench_marker import stage
                with stage("load"):
                    time.sleep(0.2)
                with stage("evaluate"):
                    time.sleep(1.0)
                """, "-r", "3", "--interval", "20ms")
        finally:
            writer.kill()
            writer.wait()
        for stage in ("load", "evaluate"):
            self.assertEqual(self.verdict(r, stage)["rule"], "idle", r["analysis"]["verdicts"])
        for f in r["analysis"]["findings"]:
            self.assertNotEqual(f["rule"], "io-bound", f)
            self.assertNotIn("WebDataset", f["recommendation"])
        self.assertNotIn("WebDataset", text)
        stall = [s for s in r["summary"]["resources"]
                 if s["metric"] == "system_pressure_io_some_seconds_total"]
        if stall and stall[0]["mean"] >= 0.25:
            self.assertIn("io_contention", self.codes(r))

    def test_uncached_reads(self):
        d = self.direct_io_dir()
        r, _ = self.run_script("""
            import mmap, os, sys, time
            from mlbench_marker import stage
            buf = mmap.mmap(-1, 1 << 20)
            fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
            with stage("read"):
                end = time.monotonic() + 1.5
                off = 0
                while time.monotonic() < end:
                    n = os.preadv(fd, [buf], off)
                    off = off + n if n and off + n < (32 << 20) else 0
            """, "-r", "2", args=(os.path.join(d, "data"),))
        v = self.verdict(r, "read")
        self.assertEqual(v["rule"], "io-bound", v)
        self.assertIn("its tasks were blocked on I/O", v["evidence"])

    # ---------------------------------------------------------------- CPU

    def test_one_thread_computing(self):
        r, text = self.run_script("""
            from mlbench_marker import stage
            with stage("compute"):
                x = 0
                for i in range(12_000_000):
                    x += i * i
            """, "-r", "3")
        v = self.verdict(r, "compute")
        self.assertNotIn(v["rule"], ("idle", "io-bound"), v)
        self.assertIn("answer: compute holds the run back", text)
        if self.disturbed(r, v):
            return
        self.assertEqual(v["rule"], "cpu-bound-single-thread", v)

    def test_processes_taking_turns(self):
        r, text = self.run_script("""
            import multiprocessing as mp
            from mlbench_marker import stage

            def work(n):
                x = 0
                for i in range(n):
                    x += i * i
                return x

            def worker(inbox, outbox):
                for n in iter(inbox.get, None):
                    work(n)
                    outbox.put(n)           # the piece of work goes on to the next process

            if __name__ == "__main__":
                mp.set_start_method("fork")
                a, b, c = mp.Queue(), mp.Queue(), mp.Queue()
                p = [mp.Process(target=worker, args=(a, b)),
                     mp.Process(target=worker, args=(b, c))]
                for q in p:
                    q.start()
                with stage("pipeline"):
                    for _ in range(8):
                        a.put(600_000)      # one piece of work goes round: one core busy
                        work(c.get())
                a.put(None)
                b.put(None)
                for q in p:
                    q.join()
            """, "-r", "3")
        v = self.verdict(r, "pipeline")
        for f in r["analysis"]["findings"]:
            self.assertNotIn("parallelise it over", f["recommendation"])
        self.assertNotIn("single-thread", text)
        if self.disturbed(r, v):
            return
        self.assertEqual(v["rule"], "cpu-bound-one-core", v)
        self.assertIn("processes", v["evidence"])

    def test_dataloader_in_main_process(self):
        python = torch_python()
        if not python:
            self.skipTest("no interpreter imports torch (Debian's python3-torch is not "
                          "installed)")
        r, text = self.run_script("""
            import torch
            from torch.utils.data import DataLoader, Dataset
            import mlbench_marker as m

            class Items(Dataset):
                def __len__(self):
                    return 256
                def __getitem__(self, i):
                    x = 0
                    for k in range(6000):       # Python work per item: the loader's time
                        x += k * i
                    return torch.full((16,), float(x % 7)), i % 4

            torch.manual_seed(0)
            loader = m.dataloader(DataLoader(Items(), batch_size=16, num_workers=0))
            model = torch.nn.Linear(16, 4)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            with m.stage("train"):
                it = iter(loader)
                while True:
                    with m.stage("data_wait"):
                        batch = next(it, None)
                    if batch is None:
                        break
                    x, y = batch
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
            """, "-r", "3", python=python)
        meta = {m["key"]: m["value"] for m in r["summary"]["metadata"]}
        self.assertEqual(meta.get("framework.dataloader.num_workers"), "0", meta)
        rules = {f["stage"]: f["rule"] for f in r["analysis"]["findings"]}
        # the training stage waits for data: no bf16 advice for it
        self.assertFalse([f for f in r["analysis"]["findings"]
                          if f["stage"] == "train" and f["rule"] == "mixed-precision"], rules)
        v = self.verdict(r, "data_wait")
        if self.disturbed(r, v):
            return
        advice = " ".join(f["recommendation"] for f in r["analysis"]["findings"]
                          if f["stage"] == "data_wait")
        self.assertIn("num_workers from 0 to", advice, r["analysis"]["findings"])

    # ---------------------------------------------------------------- compare and sweep

    def measure(self, label, *command, runs="3"):
        rc, _, err = self.cli("run", "-q", "-r", runs, "-l", label, "--", *command)
        self.assertEqual(rc, 0, err)

    def total(self, *refs):
        rc, out, err = self.cli("compare", "--json", *refs)
        self.assertEqual(rc, 0, err)
        return json.loads(out)["candidates"][0]["stages"][-1]

    def test_aa_pair(self):
        self.measure("a", "sleep", "0.2", runs="5")
        self.measure("b", "sleep", "0.2", runs="5")
        t = self.total("a", "b")
        if t["verdict"] == "unreliable":
            return  # one side clearly more disturbed, and mlbench says so
        self.assertIn(t["verdict"], ("no change", "inconclusive"), t)

    def test_slowdown_at_three_runs(self):
        self.measure("fast", "sleep", "0.1")
        self.measure("slow", "sleep", "0.2")
        t = self.total("fast", "slow")
        if t["verdict"] == "unreliable":
            return
        self.assertEqual(t["verdict"], "slower", t)
        self.assertEqual(t["decided_by"], "ratio interval", t)
        rc, _, err = self.cli("compare", "--fail-if-slower", "5", "fast", "slow")
        self.assertEqual(rc, 1, err)
        self.assertIn("gate failed", err)

    def test_sweep_of_equals(self):
        rc, out, err = self.cli("sweep", "-r", "3", "-c", "sleep 0.3", "-n", "a", "-c",
                                "sleep 0.3", "-n", "b")
        self.assertEqual(rc, 0, err)
        self.assertIn("no winner: no point is significantly better", out)
        self.assertNotIn("\u2605", out)


if __name__ == "__main__":
    unittest.main()
