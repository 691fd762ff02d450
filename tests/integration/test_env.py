"""End-to-end tests of `mlbench env` and of the environment inside results: run the built
binary and check its text and JSON against this machine (/proc/cpuinfo, os.cpu_count()), GPUs
through the fake NVML library, bad usage, and that a result of `mlbench run` carries the
environment with every field documented in docs/result-schema.md.

Environment (set by ctest): MLBENCH (the binary), MLBENCH_SOURCE (the source tree), FAKE_NVML
(tests/fakes libfake_nvml.so; the GPU tests are skipped without it)."""
import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import unittest

from test_run import load_schema, walk

MLBENCH = os.path.abspath(os.environ.get("MLBENCH", "build/mlbench"))  # tests change cwd
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
FAKE_NVML = os.environ.get("FAKE_NVML")

GPU_SCRIPT = """devices 1
name 0 NVIDIA H200
uuid 0 GPU-12345678-fake
cc 0 9 0
mem_total 0 150000000000
mem_used 0 1000000000
driver 580.65.06
"""


def cpuinfo_model():
    """The first "model name" of /proc/cpuinfo, or None (ARM has none)."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return None


class EnvTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-env-")

    def tearDown(self):
        self.tmp.cleanup()

    def env(self, *args, extra=None, cwd=None, timeout=30):
        """Runs mlbench env; returns (exit status, stdout, stderr)."""
        e = dict(os.environ)
        e.pop("MLBENCH_NVML_LIBRARY", None)
        e.update(extra or {})
        p = subprocess.run([MLBENCH, "env", *args], capture_output=True, text=True, env=e,
                           cwd=cwd or self.tmp.name, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def fake_gpu_env(self):
        if not FAKE_NVML:
            self.skipTest("FAKE_NVML (the fake NVML library) is not set")
        path = os.path.join(self.tmp.name, "nvml.script")
        with open(path, "w") as f:
            f.write(GPU_SCRIPT)
        return {"MLBENCH_NVML_LIBRARY": os.path.abspath(FAKE_NVML), "FAKE_NVML_SCRIPT": path}

    def test_text_describes_machine(self):
        rc, out, err = self.env(extra={"MLBENCH_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"})
        self.assertEqual(rc, 0, err)
        model = cpuinfo_model()
        if model:
            self.assertIn(model, out)
        self.assertRegex(out, rf"\b{os.cpu_count()} (threads|online)\b")
        self.assertIn(socket.gethostname(), out)
        self.assertRegex(out, r"(?m)^gpus\s+none: .*not found")
        for label in ("mlbench", "host", "os", "cpu", "memory", "blas", "virtual", "git",
                      "variables"):
            self.assertRegex(out, rf"(?m)^{label}\b", f"no line {label!r} in:\n{out}")

    def test_json(self):
        rc, out, err = self.env("--json", extra={"OMP_NUM_THREADS": "3",
                                                 "OPENBLAS_CORETYPE": "Haswell",
                                                 "NCCL_API_KEY": "secret",
                                                 "MLBENCH_NVML_LIBRARY": "/nonexistent/x.so"})
        self.assertEqual(rc, 0, err)
        env = json.loads(out)
        self.assertEqual(env["hostname"], socket.gethostname())
        self.assertEqual(env["cpus_online"], os.cpu_count())
        if cpuinfo_model():
            self.assertEqual(env["cpu"]["model"], cpuinfo_model())
        self.assertEqual(env["cpu"]["threads"], os.cpu_count())
        self.assertEqual(env["build"]["version"], subprocess.run(
            [MLBENCH, "version"], capture_output=True, text=True).stdout.split()[1])
        variables = {v["name"]: v["value"] for v in env["variables"]}
        self.assertEqual(variables.get("OMP_NUM_THREADS"), "3")
        self.assertEqual(variables.get("OPENBLAS_CORETYPE"), "Haswell")
        self.assertNotIn("NCCL_API_KEY", variables)  # looks like a secret
        self.assertNotIn("HOME", variables)
        self.assertEqual(env["blas"]["openblas_coretype"], "Haswell")
        self.assertNotIn("gpus", env)
        self.assertIn("gpu_error", env)
        self.assertNotIn("git", env)  # a fresh temporary directory is no work tree
        self.assertIn(env["virtualization"]["container"], {"none", "docker", "podman",
                                                           "kubernetes", "lxc", "containerd"}
                      | {os.environ.get("container", "none")})

    def test_fake_gpu(self):
        extra = self.fake_gpu_env()
        rc, out, err = self.env(extra=extra)
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"(?m)^gpu 0\s+NVIDIA H200")
        self.assertIn("580.65.06", out)
        rc, out, err = self.env("--json", extra=extra)
        self.assertEqual(rc, 0, err)
        env = json.loads(out)
        self.assertEqual([g["name"] for g in env["gpus"]], ["NVIDIA H200"])
        self.assertEqual(env["gpus"][0]["uuid"], "GPU-12345678-fake")
        self.assertEqual(env["gpus"][0]["compute_capability"], "9.0")
        self.assertEqual(env["gpus"][0]["memory_bytes"], 150000000000)
        self.assertEqual(env["gpu_driver"], "580.65.06")

    def test_bad_usage(self):
        rc, out, err = self.env("--bogus")
        self.assertEqual(rc, 2)
        self.assertIn("--bogus", err)
        rc, out, err = self.env("extra")
        self.assertEqual(rc, 2)
        self.assertIn("extra", err)
        rc, out, err = self.env("--help")
        self.assertEqual(rc, 0)
        self.assertIn("Usage: mlbench env", out)

    def make_repo(self):
        """A git work tree with one commit; returns (path, commit) or skips without git."""
        if not shutil.which("git"):
            self.skipTest("git is not installed")
        repo = os.path.join(self.tmp.name, "repo")
        os.mkdir(repo)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
        subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
        with open(os.path.join(repo, "train.py"), "w") as f:
            f.write("print('train')\n")
        subprocess.run(git + ["add", "train.py"], cwd=repo, check=True)
        subprocess.run(git + ["commit", "-q", "-m", "first"], cwd=repo, check=True)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout.strip()
        return repo, head

    def test_git_state(self):
        repo, head = self.make_repo()
        rc, out, err = self.env("--json", cwd=repo)
        self.assertEqual(rc, 0, err)
        git = json.loads(out)["git"]
        self.assertEqual(git["commit"], head)
        self.assertFalse(git["dirty"])
        with open(os.path.join(repo, "train.py"), "a") as f:
            f.write("print('changed')\n")
        rc, out, err = self.env("--json", cwd=repo)
        git = json.loads(out)["git"]
        self.assertTrue(git["dirty"])
        self.assertEqual(git["changed_files"], 1)
        rc, out, err = self.env("--json", "--no-git", cwd=repo)
        self.assertNotIn("git", json.loads(out))

    def test_result_carries_environment(self):
        """A result of mlbench run has the environment: machine, variables, the GPU its sampler
        saw, the git state of the directory it ran in; every field is documented."""
        repo, head = self.make_repo()
        store = os.path.join(repo, ".mlbench")  # untracked, inside the work tree
        extra = {"OMP_NUM_THREADS": "2"}
        if FAKE_NVML:
            extra.update(self.fake_gpu_env())
        e = dict(os.environ)
        e.update(extra)
        p = subprocess.run([MLBENCH, "run", "-q", "--store", store, "-r", "1", "--", "true"],
                           capture_output=True, text=True, env=e, cwd=repo, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        files = glob.glob(os.path.join(store, "runs", "*.json"))
        self.assertEqual(len(files), 1)
        with open(files[0]) as f:
            result = json.load(f)
        env = result["environment"]
        self.assertEqual(env["cpus_online"], os.cpu_count())
        if cpuinfo_model():
            self.assertEqual(env["cpu"]["model"], cpuinfo_model())
        self.assertIn({"name": "OMP_NUM_THREADS", "value": "2"}, env["variables"])
        self.assertEqual(env["git"]["commit"], head)
        self.assertFalse(env["git"]["dirty"])  # the untracked store does not count
        self.assertEqual(env["build"]["git_commit"], result["mlbench"]["git_commit"])
        if FAKE_NVML:
            self.assertEqual(env["gpus"][0]["name"], "NVIDIA H200")
            self.assertEqual(env["gpu_driver"], "580.65.06")
        self.assertNotIn("gpu_error", env)

        documented = load_schema(os.path.join(SOURCE, "docs", "result-schema.md"))
        seen = {}
        walk(result, "", seen)
        for path, types in seen.items():
            if not path.startswith("environment"):
                continue
            self.assertIn(path, documented, f"{path} is not documented")
            for t in types:
                self.assertIn(t, documented[path][0], f"{path}: {t} not in {documented[path][0]}")

    def test_env_matches_result(self):
        """mlbench env --json and a result describe the machine alike."""
        rc, out, err = self.env("--json", "--no-git")
        self.assertEqual(rc, 0, err)
        env = json.loads(out)
        store = os.path.join(self.tmp.name, "store")
        p = subprocess.run([MLBENCH, "run", "-q", "--store", store, "-r", "1", "--", "true"],
                           capture_output=True, text=True, cwd=self.tmp.name, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(glob.glob(os.path.join(store, "runs", "*.json"))[0]) as f:
            renv = json.load(f)["environment"]
        for key in ("hostname", "cpus_online", "kernel", "os", "cpu", "memory", "build",
                    "virtualization"):
            self.assertEqual(env.get(key), renv.get(key), key)


if __name__ == "__main__":
    unittest.main()
