"""End-to-end tests of the reference workloads (mlbench-workload imgclf, logreg), `mlbench demo`
and `mlbench run` with no command: run the built binaries on small synthetic data and check
exit statuses, messages and the JSON results' stages, counters and metadata.

Environment (set by ctest): MLBENCH, WORKLOAD (mlbench-workload), MLBENCH_SOURCE."""
import glob
import json
import os
import re
import struct
import subprocess
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
WORKLOAD = os.environ.get("WORKLOAD", "build/mlbench-workload")

_tmp = None
DATA = None  # a small synthetic dataset, prepared once for the module


def setUpModule():
    global _tmp, DATA
    _tmp = tempfile.TemporaryDirectory(prefix="mlbench-wl-")
    DATA = os.path.join(_tmp.name, "synthetic")
    p = subprocess.run([WORKLOAD, "imgclf", "--dataset", "synthetic", "--image-size", "16",
                        "--train-images", "600", "--val-images", "200", "--data-dir", DATA,
                        "--prepare-only"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr


def tearDownModule():
    _tmp.cleanup()


SMALL = ["--dataset", "synthetic", "--image-size", "16", "--train-images", "600",
         "--val-images", "200", "--quiet"]


class WorkloadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-wl-test-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def workload(self, *args, timeout=120, env=None):
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run([WORKLOAD, *args], capture_output=True, text=True, timeout=timeout,
                           env=e)
        return p.returncode, p.stdout, p.stderr

    def measure(self, *args, runs=1, timeout=300, env=None):
        """mlbench run -r RUNS -- mlbench-workload ARGS; returns the result document."""
        out = os.path.join(self.tmp.name, "r.json")
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run([MLBENCH, "run", "-q", "-r", str(runs), "--store", self.store, "-o",
                            out, "--", WORKLOAD, *args], capture_output=True, text=True,
                           timeout=timeout, env=e)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return json.load(f)

    @staticmethod
    def counter(run, name):
        for c in run["counters"]:
            if c["name"] == name:
                return c
        raise AssertionError(f"counter {name!r} missing")

    @staticmethod
    def stage(run, name):
        for s in run["stages"]:
            if s["name"] == name:
                return s
        raise AssertionError(f"stage {name!r} missing from {[s['name'] for s in run['stages']]}")

    def test_bad_input(self):
        cases = [
            (["nosuch"], "unknown workload 'nosuch'"),
            (["imgclf", "--batch", "0"], "--batch '0'"),
            (["imgclf", "--epochs", "-1"], "--epochs '-1'"),
            (["imgclf", "--dataset", "cifar"], "--dataset 'cifar'"),
            (["imgclf", "--device", "cuda"], "--device cuda"),
            (["imgclf", "--precision", "fp16"], "the CPU backend trains in fp32 or bf16"),
            (["imgclf", "--prefetch", "2"], "--prefetch 2 needs --loader-threads"),
            (["imgclf", "--dataset", "synthetic", "--image-size", "30"], "--image-size '30'"),
            (["imgclf", "--image-size", "32"], "--image-size is for --dataset synthetic"),
            (["imgclf", "--bogus"], "unknown option '--bogus'"),
            (["logreg", "--samples", "0"], "--samples '0'"),
            (["logreg", "--device", "cuda"], "--device cuda"),
        ]
        for args, msg in cases:
            rc, out, err = self.workload(*args)
            self.assertEqual(rc, 2, (args, err))
            self.assertIn(msg, err, args)

    def test_dataset_dir_refused(self):
        foreign = os.path.join(self.tmp.name, "foreign")
        os.mkdir(foreign)
        with open(os.path.join(foreign, "notes.txt"), "w") as f:
            f.write("mine\n")
        rc, out, err = self.workload("imgclf", *SMALL, "--data-dir", foreign)
        self.assertEqual(rc, 2, err)
        self.assertIn(foreign, err)
        self.assertIn("notes.txt", err)
        self.assertEqual(os.listdir(foreign), ["notes.txt"])  # nothing written
        # Under a regular file: cannot be created, whoever runs the test (root included).
        rc, out, err = self.workload("imgclf", *SMALL, "--data-dir",
                                     os.path.join(foreign, "notes.txt", "d"))
        self.assertEqual(rc, 2, err)
        self.assertIn("notes.txt", err)

    def test_imgclf_stages_counters_metadata(self):
        r = self.measure("imgclf", *SMALL, "--data-dir", DATA, "--epochs", "3", "--batch", "50")
        run = r["runs"][0]
        self.assertEqual(run["status"], "ok")
        names = [s["name"] for s in run["stages"]]
        self.assertEqual(names, ["load", "preprocess", "train", "evaluate"])
        self.assertEqual(self.stage(run, "train")["count"], 36)  # 600 / 50 x 3 epochs
        self.assertEqual(self.stage(run, "load")["count"], 36)
        self.assertEqual(self.stage(run, "evaluate")["count"], 3)
        self.assertEqual(self.counter(run, "images")["sum"], 1800)
        acc = self.counter(run, "accuracy")
        self.assertEqual(acc["n"], 3)
        self.assertGreater(acc["last"], 0.3)  # 10 classes: chance is 0.1
        loss = self.counter(run, "loss")  # every 10th step
        self.assertLess(loss["last"], loss["max"])
        self.assertGreater(self.counter(run, "train_images_per_s")["last"], 0)
        self.assertGreater(self.counter(run, "train_gflops")["last"], 0)
        meta = run["metadata"]
        for k, v in {"model": "small-cnn", "dataset": "synthetic", "image_shape": "16x16x3",
                     "batch_size": "50", "precision": "fp32", "device": "cpu",
                     "loader_threads": "0", "prefetch": "0"}.items():
            self.assertEqual(meta[k], v, k)

    def test_imgclf_bf16(self):
        """--precision bf16 on the CPU: trains Fashion-MNIST (4000 images, 2 epochs, the 10 000
        test images as val) to the fp32 accuracy at the same seed within 1.5 points (measured
        0.1-0.4) at batch 32 and 128; the result's metadata names the precision and the kernel.
        Without AVX512_BF16 (simulated by MLBENCH_CPU_DISABLE) it is refused with exit 2."""
        rc, out, err = self.workload("imgclf", "--precision", "bf16", "--epochs", "1",
                                     env={"MLBENCH_CPU_DISABLE": "avx512_bf16"})
        self.assertEqual(rc, 2, err)
        self.assertIn("this CPU has no AVX512_BF16", err)
        self.assertIn("MLBENCH_CPU_DISABLE", err)
        self.assertIn("use --precision fp32", err)
        with open("/proc/cpuinfo") as f:
            flags = f.read()
        if " avx512_bf16" not in flags or " avx512bw" not in flags:
            self.skipTest("this CPU has no AVX512_BF16: the bf16 kernels cannot run here")
        fmnist = os.path.join(self.tmp.name, "fmnist")
        common = ["imgclf", "--data-dir", fmnist, "--train-images", "4000", "--epochs", "2",
                  "--threads", "2", "--quiet"]
        for batch in ("32", "128"):
            acc = {}
            for precision in ("fp32", "bf16"):
                r = self.measure(*common, "--batch", batch, "--precision", precision)
                run = r["runs"][0]
                self.assertEqual(run["metadata"]["precision"], precision)
                kernel = run["metadata"]["cpu_kernel"]
                if precision == "bf16":
                    self.assertEqual(kernel, "avx512_bf16")
                else:
                    self.assertIn(kernel, ("avx512f", "openblas"))
                acc[precision] = self.counter(run, "accuracy")["last"]
            self.assertGreater(acc["fp32"], 0.6, acc)  # 10 classes: chance is 0.1
            self.assertLessEqual(abs(acc["bf16"] - acc["fp32"]), 0.015, (batch, acc))

    def test_loader_threads_same_training(self):
        """Loader threads and prefetch change when batches are made, never what they hold: the
        same seed trains to the same loss and accuracy; load and preprocess move to other
        threads and overlap train."""
        def final(*knobs):
            rc, out, err = self.workload("imgclf", *SMALL, "--data-dir", DATA, "--epochs", "1",
                                         "--threads", "1", "--seed", "5", *knobs)
            self.assertEqual(rc, 0, err)
            m = re.search(r"imgclf: (\d+) images .* train loss ([0-9.]+); val accuracy ([0-9.]+)",
                          out)
            self.assertIsNotNone(m, out)
            return m.groups()
        base = final()
        self.assertEqual(base[0], "600")
        for knobs in (["--loader-threads", "2"], ["--loader-threads", "1", "--prefetch", "3"]):
            self.assertEqual(final(*knobs), base, knobs)  # same images, loss and accuracy
        r = self.measure("imgclf", *SMALL, "--data-dir", DATA, "--epochs", "1",
                         "--loader-threads", "2", "--prefetch", "2")
        run = r["runs"][0]
        spans = run["spans"]
        train_tids = {s["tid"] for s in spans if s["name"] == "train"}
        load_tids = {s["tid"] for s in spans if s["name"] in ("load", "preprocess")}
        self.assertEqual(len(train_tids), 1)
        self.assertTrue(load_tids)
        self.assertFalse(train_tids & load_tids)
        # The overlap is accounted: preprocess ran (partly) beside train, evaluate never did.
        self.assertGreater(self.stage(run, "preprocess")["overlap_ns"], 0)
        self.assertGreater(self.stage(run, "train")["overlap_ns"], 0)
        self.assertEqual(self.stage(run, "evaluate")["overlap_ns"], 0)
        pre = self.stage(r["summary"], "preprocess")
        self.assertGreater(pre["overlap_ns_median"], 0)

    def test_corrupt_jpeg_skipped_and_counted(self):
        data = os.path.join(self.tmp.name, "corrupt")
        rc, out, err = self.workload("imgclf", *SMALL, "--data-dir", data, "--prepare-only")
        self.assertEqual(rc, 0, err)
        victims = sorted(glob.glob(os.path.join(data, "train", "*", "*.jpg")))[:3]
        for v in victims:
            with open(v, "r+b") as f:
                f.truncate(40)
        with open(sorted(glob.glob(os.path.join(data, "val", "*", "*.jpg")))[0], "wb") as f:
            f.write(b"not a jpeg at all")
        rc, out, err = self.workload("imgclf", *SMALL, "--data-dir", data, "--epochs", "1",
                                     "--loader-threads", "2", "--prefetch", "1")
        self.assertEqual(rc, 0, err)
        self.assertIn("skipped 4 unreadable or corrupt image(s)", out)
        self.assertTrue(any(v in err for v in victims), err)

    def test_input_only(self):
        rc, out, err = self.workload("imgclf", *SMALL, "--data-dir", DATA, "--epochs", "2",
                                     "--input-only", "--loader-threads", "2")
        self.assertEqual(rc, 0, err)
        self.assertIn("input only: 1200 images", out)

    def test_logreg(self):
        npy = os.path.join(self.tmp.name, "data")
        r = self.measure("logreg", "--samples", "4000", "--features", "40", "--informative",
                         "20", "--save-data", npy)
        run = r["runs"][0]
        self.assertEqual([s["name"] for s in run["stages"]], ["generate", "train", "evaluate"])
        self.assertGreater(self.counter(run, "accuracy")["last"], 0.75)
        self.assertGreater(self.counter(run, "iterations")["last"], 1)
        self.assertEqual(run["metadata"]["model"], "logreg")
        files = sorted(glob.glob(npy + "*.npy"))
        self.assertEqual(len(files), 4, files)
        shapes = {}
        for path in files:
            with open(path, "rb") as f:
                self.assertEqual(f.read(6), b"\x93NUMPY")
                f.read(2)
                (hlen,) = struct.unpack("<H", f.read(2))
                header = f.read(hlen).decode()
                shapes[os.path.basename(path)] = header
        self.assertTrue(any("(3000, 40)" in h for h in shapes.values()), shapes)
        self.assertTrue(any("(1000,)" in h for h in shapes.values()), shapes)


def gpu_present():
    """Whether an NVIDIA GPU is usable here (nvidia-smi lists one)."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return p.returncode == 0 and "GPU" in p.stdout


class DeviceWorkloadTest(unittest.TestCase):
    """gemm and mlp: the workloads with a CPU and a CUDA path."""

    def run_gemm(self, *args, workload="gemm"):
        p = subprocess.run([WORKLOAD, workload, *args], capture_output=True, text=True,
                           timeout=300)
        return p.returncode, p.stdout, p.stderr

    def test_mlp_cpu(self):
        with tempfile.TemporaryDirectory(prefix="mlbench-mlp-") as tmp:
            out = os.path.join(tmp, "r.json")
            p = subprocess.run([MLBENCH, "run", "-q", "-r", "1", "--store", tmp, "-o", out, "--",
                                WORKLOAD, "mlp", "--device", "cpu", "--hidden", "64",
                                "--batches", "1,16", "--reps", "5", "--warmup", "1"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                run = json.load(f)["runs"][0]
        self.assertEqual([s["name"] for s in run["stages"]], ["fp32-b1", "fp32-b16"])
        counters = {c["name"]: c["last"] for c in run["counters"]}
        self.assertGreater(counters["ms_fp32_b1"], 0)
        self.assertGreater(counters["tflops_fp32_b16"], 0)
        self.assertEqual(run["metadata"]["shape"], "64x256")

    def test_mlp_bad_input(self):
        for args, msg in ((["--device", "cpu", "--graph"], "--graph needs --device cuda"),
                          (["--device", "cpu", "--precision", "fp16"], "needs --device cuda"),
                          (["--batches", "0"], "--batches '0'"),
                          (["--hidden", "0"], "--hidden '0'")):
            rc, out, err = self.run_gemm(*args, workload="mlp")
            self.assertEqual(rc, 2, (args, err))
            self.assertIn(msg, err, args)

    def test_logreg_cuda_matches_cpu(self):
        """On a GPU: the same L-BFGS on the same data reaches the same loss and accuracy."""
        if not gpu_present():
            self.skipTest("no NVIDIA GPU here (nvidia-smi -L lists none)")
        found = {}
        for dev in ("cpu", "cuda"):
            rc, out, err = self.run_gemm("--device", dev, "--samples", "20000", "--features",
                                         "100", "--informative", "40", workload="logreg")
            self.assertEqual(rc, 0, err)
            m = re.search(r"loss ([0-9.]+), test accuracy ([0-9.]+)", out)
            self.assertIsNotNone(m, out)
            found[dev] = (float(m.group(1)), float(m.group(2)))
        self.assertAlmostEqual(found["cuda"][0] / found["cpu"][0], 1, delta=1e-6)
        self.assertAlmostEqual(found["cuda"][1], found["cpu"][1], delta=0.005)

    def test_imgclf_cuda_matches_cpu(self):
        """On a GPU: an epoch of the same batches from the same weights ends at the same loss
        and nearly the same accuracy as on the CPU (fp32 both)."""
        if not gpu_present():
            self.skipTest("no NVIDIA GPU here (nvidia-smi -L lists none)")
        found = {}
        for dev in ("cpu", "cuda"):
            rc, out, err = self.run_gemm(*SMALL, "--data-dir", DATA, "--epochs", "1",
                                         "--threads", "1", "--device", dev, workload="imgclf")
            self.assertEqual(rc, 0, err)
            m = re.search(r"train loss ([0-9.]+); val accuracy ([0-9.]+)", out)
            self.assertIsNotNone(m, out)
            found[dev] = (float(m.group(1)), float(m.group(2)))
        self.assertAlmostEqual(found["cuda"][0] / found["cpu"][0], 1, delta=1e-3)
        self.assertAlmostEqual(found["cuda"][1], found["cpu"][1], delta=0.02)

    def test_mlp_cuda(self):
        """On a GPU: every precision passes its check; with and without a CUDA graph."""
        if not gpu_present():
            self.skipTest("no NVIDIA GPU here (nvidia-smi -L lists none)")
        for graph in ([], ["--graph"]):
            rc, out, err = self.run_gemm("--device", "cuda", "--precision", "fp32,tf32,fp16,bf16",
                                         "--reps", "5", *graph, workload="mlp")
            self.assertEqual(rc, 0, err)
            for prec in ("fp32", "tf32", "fp16", "bf16"):
                self.assertRegex(out, rf"{prec} +batch +256 .* TFLOP/s")

    def test_cpu(self):
        with tempfile.TemporaryDirectory(prefix="mlbench-gemm-") as tmp:
            out = os.path.join(tmp, "r.json")
            p = subprocess.run([MLBENCH, "run", "-q", "-r", "1", "--store", tmp, "-o", out, "--",
                                WORKLOAD, "gemm", "--device", "cpu", "--sizes", "64,96",
                                "--reps", "3", "--threads", "1"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                run = json.load(f)["runs"][0]
        self.assertEqual([s["name"] for s in run["stages"]], ["fp32-64", "fp32-96"])
        tflops = {c["name"]: c["last"] for c in run["counters"]}
        self.assertGreater(tflops["tflops_fp32_64"], 0)
        self.assertGreater(tflops["tflops_fp32_96"], 0)
        self.assertEqual(run["metadata"]["device"], "cpu")

    def test_bad_input(self):
        for args, msg in ((["--sizes", "0"], "--sizes '0'"),
                          (["--sizes", "64,x"], "--sizes 'x'"),
                          (["--precision", "fp8", "--device", "cpu"], "--precision 'fp8'"),
                          (["--precision", "bf16", "--device", "cpu"], "needs --device cuda"),
                          (["--reps", "0"], "--reps '0'")):
            rc, out, err = self.run_gemm(*args)
            self.assertEqual(rc, 2, (args, err))
            self.assertIn(msg, err, args)

    def test_cuda_without_gpu_is_refused(self):
        if gpu_present():
            self.skipTest("a GPU is present: --device cuda is not refused here")
        rc, out, err = self.run_gemm("--device", "cuda", "--sizes", "64")
        self.assertEqual(rc, 2, err)
        self.assertIn("--device cuda: ", err)

    def test_cuda_every_precision(self):
        """On a GPU: every precision passes its correctness check and reports TFLOP/s."""
        if not gpu_present():
            self.skipTest("no NVIDIA GPU here (nvidia-smi -L lists none)")
        rc, out, err = self.run_gemm("--device", "cuda", "--sizes", "256,1024", "--reps", "3")
        self.assertEqual(rc, 0, err)
        for prec in ("fp32", "tf32", "fp16", "bf16"):
            self.assertRegex(out, rf"{prec} +1024 .* TFLOP/s")


def cpu_has(flag):
    """Whether the first CPU's flags line of /proc/cpuinfo has flag (what the demo reads)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("flags", "Features")) and ":" in line:
                    return flag in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


DURATION = r"[0-9.]+ [mµu]?s"  # as units_duration writes one under a minute


class DemoTest(unittest.TestCase):
    """`mlbench demo --quick`: the six steps, each a child mlbench whose command line is
    printed, the accuracy guard, the final table, and the documents each step wrote."""

    def demo(self, tmp, *args, disable=None):
        env = {k: v for k, v in os.environ.items() if k != "MLBENCH_CPU_DISABLE"}
        if disable:
            env["MLBENCH_CPU_DISABLE"] = disable
        store = os.path.join(tmp, "store")
        p = subprocess.run([MLBENCH, "demo", "--quick", "--store", store, "--data-dir",
                            os.path.join(tmp, "data"), *args], capture_output=True, text=True,
                           timeout=900, env=env)  # sanitizer builds are slow
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        return p.stdout, os.path.join(store, "demo"), store

    def point(self, store, sweep_path, name):
        with open(sweep_path) as f:
            doc = json.load(f)
        for p in doc["points"]:
            if p["name"] == name:
                with open(os.path.join(store, p["result_path"])) as f:
                    return doc, json.load(f)
        self.fail(f"{sweep_path} has no point {name}")

    def accuracy(self, r):
        return [c for c in r["summary"]["counters"] if c["name"] == "accuracy"][0]["last"]["median"]

    def test_demo_quick(self):
        with tempfile.TemporaryDirectory(prefix="mlbench-demo-") as tmp:
            out, demo_dir, store = self.demo(tmp)
            titles = ["baseline: serial loading in the training thread, batch 32, one thread, "
                      "fp32, trained to 0.4", "bottleneck: the analysis of step 1",
                      "optimise loading and preprocessing", "re-benchmark: step 3 against "
                      "step 1", "optimise training", "final: the whole pipeline, baseline "
                      "(step 1) -> final (step 5)"]
            at = [out.find(f"== step {i + 1}/6: {t}") for i, t in enumerate(titles)]
            self.assertNotIn(-1, at, out)
            self.assertEqual(at, sorted(at))  # in order
            self.assertIn("runs: 4 of each configuration", out)
            self.assertIn("interleaved: ", out)
            # each step is mlbench as a child, its command line shown
            for verb in ("run", "sweep", "compare", "report"):
                self.assertRegex(out, rf"\n\$ \S*mlbench {verb} --store ")
            self.assertRegex(out, r"\n\$ \S*mlbench sweep .*--find-max batch=32\.\.1024 --pow2 "
                                  r"--objective min:counter:time_to_target_s "
                                  r"'--constraint=counter:accuracy>=0\.\d+'")
            self.assertRegex(out, r"\n\$ \S*mlbench compare .*--max-accuracy-drop=0\.5 ")
            # step 2: the analysis of step 1
            self.assertRegex(out, r"\nbottleneck: \w+, [0-9.]+ % of a run: [a-z-]+")
            # the final table
            for stage in ("load", "preprocess", "train", "evaluate", "total"):
                self.assertRegex(out, rf"\n  {stage} +{DURATION} +{DURATION} +[+-][0-9.]+ %")
            self.assertRegex(out, rf"\n  time to 0\.4 +({DURATION}|not reached) +")
            m = re.search(r"\n  accuracy +([0-9.]+) +([0-9.]+) +[+-][0-9.]+ points", out)
            self.assertIsNotNone(m, out)
            # the guard: its verdict is what the numbers say
            g = re.search(r"\naccuracy guard \(step 5 against step 3, mlbench compare "
                          r"--max-accuracy-drop 0\.5\): (passed|FAILED): ([0-9.]+) -> ([0-9.]+)",
                          out)
            self.assertIsNotNone(g, out)
            self.assertEqual(g.group(1) == "passed",
                             float(g.group(2)) - float(g.group(3)) <= 0.005 + 1e-9)
            for what in ("mlbench monitor -- ", "history --detect", "/metrics"):
                self.assertIn(what, out)

            # step 1: the baseline, alone
            with open(os.path.join(demo_dir, "1-baseline.json")) as f:
                r1 = json.load(f)
            self.assertEqual(r1["summary"]["runs_ok"], 4)
            meta = r1["runs"][0]["metadata"]
            self.assertEqual((meta["batch_size"], meta["threads"], meta["loader_threads"],
                              meta["precision"]), ("32", "1", "0", "fp32"))
            # step 3: interleaved with step 1's configuration
            doc3, r3 = self.point(store, os.path.join(demo_dir, "3-loaders-sweep.json"),
                                  "demo-loaders")
            self.assertTrue(doc3["interleave"])
            self.assertEqual(len(doc3["rounds"]), 4)
            self.assertEqual([p["name"] for p in doc3["points"]], ["demo-baseline", "demo-loaders"])
            self.assertEqual(r3["summary"]["runs_ok"], 4)
            self.assertEqual((r3["runs"][0]["metadata"]["loader_threads"],
                              r3["runs"][0]["metadata"]["prefetch"]), ("1", "4"))
            # step 5: the batch search under its budget, then the final configuration
            with open(os.path.join(demo_dir, "5-batch-search.json")) as f:
                search = json.load(f)
            self.assertEqual(search["mode"], "find-max")
            # the budget puts the answer inside the range: a largest fit and a first failure
            fm = search["find_max"]
            self.assertIsNotNone(fm["largest_fit"])
            self.assertIsNotNone(fm["first_failure"])
            self.assertEqual(fm["first_failure"], 2 * fm["largest_fit"])
            self.assertIn(f"largest batch that fits the budget: {fm['largest_fit']}", out)
            chosen = re.search(r"\nchosen: batch (\d+)", out)
            self.assertIsNotNone(chosen, out)
            doc5, r5 = self.point(store, os.path.join(demo_dir, "5-final-sweep.json"),
                                  "demo-final")
            self.assertTrue(doc5["interleave"])
            meta = r5["runs"][0]["metadata"]
            self.assertEqual(meta["batch_size"], chosen.group(1))
            self.assertEqual(meta["threads"], str(os.cpu_count()))
            self.assertEqual(meta["precision"], "bf16" if cpu_has("avx512_bf16") else "fp32")
            self.assertEqual(r5["summary"]["runs_ok"], 4)
            # the table's accuracies are the results' medians
            self.assertAlmostEqual(float(m.group(1)), self.accuracy(r1), places=4)
            self.assertAlmostEqual(float(m.group(2)), self.accuracy(r5), places=4)
            with open(os.path.join(demo_dir, "demo.html")) as f:
                self.assertIn("<svg", f.read())

    def test_demo_without_bf16_stays_fp32(self):
        """A CPU without bf16 instructions, simulated: step 5 says so and trains in fp32.
        Both features go: every CPU with AMX also has AVX512_BF16, and the analysis's bf16
        finding counts either, so leaving amx_bf16 would simulate no real CPU."""
        with tempfile.TemporaryDirectory(prefix="mlbench-demo-") as tmp:
            out, demo_dir, store = self.demo(tmp, "--runs", "1",
                                             disable="avx512_bf16,amx_bf16")
            self.assertIn("this CPU has no AVX512_BF16", out)
            self.assertIn("step 5 stays in fp32", out)
            self.assertIn("too few for any comparison to be significant", out)
            self.assertNotIn("--precision bf16", out)
            _, r5 = self.point(store, os.path.join(demo_dir, "5-final-sweep.json"), "demo-final")
            self.assertEqual(r5["runs"][0]["metadata"]["precision"], "fp32")
            self.assertIn("final: the whole pipeline", out)

    def test_demo_bad_input(self):
        with tempfile.TemporaryDirectory(prefix="mlbench-demo-") as tmp:
            store = os.path.join(tmp, "store")
            for args, says in ((["--runs", "0"], "--runs '0'"),
                               (["--train-images", "-1"], "--train-images '-1'"),
                               (["--train-images", "70000"], "--train-images '70000'"),
                               (["--target-accuracy", "1.5"], "--target-accuracy '1.5'"),
                               (["--epochs", "x"], "--epochs 'x'")):
                p = subprocess.run([MLBENCH, "demo", "--store", store, *args],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 2, args)
                self.assertIn(says, p.stderr)
                self.assertFalse(os.path.exists(store), "nothing is written on bad input")


class DefaultWorkflowTest(unittest.TestCase):
    def test_run_without_command(self):
        """No command: the default workflow, once, and mlbench says so. Stopped by --timeout
        (the full epoch is not needed to check what was run)."""
        with tempfile.TemporaryDirectory(prefix="mlbench-default-") as tmp:
            out = os.path.join(tmp, "r.json")
            env = dict(os.environ, MLBENCH_DATA_DIR=os.path.join(tmp, "data"))
            p = subprocess.run([MLBENCH, "run", "--store", os.path.join(tmp, "store"), "-o",
                                out, "--timeout", "2"], capture_output=True, text=True,
                               timeout=120, env=env)
            self.assertIn("no command given: running the default workflow once", p.stderr)
            with open(out) as f:
                r = json.load(f)
            self.assertEqual(len(r["runs"]), 1)
            self.assertEqual(r["command"]["argv"][1:], ["imgclf", "--epochs", "1"])
            self.assertTrue(r["command"]["argv"][0].endswith("mlbench-workload"))


if __name__ == "__main__":
    unittest.main()
