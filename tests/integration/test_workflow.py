"""End-to-end tests of workflow files (docs/workflow.md): `mlbench workflow-exec FILE` measured
by `mlbench run -- <mlbench> workflow-exec FILE`, and `mlbench run FILE` when this build's
`mlbench run` takes workflow files (its --help mentions --param). Checks the stages in order
with their times, a failing stage stopping the workflow with its exit status, a command not
found, parameters (file values and --param overrides), env and cwd reaching the stage, shell
stages, SIGTERM, the bad files (exit 2 with file:line:column), and the example workflow.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree)."""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

MLBENCH = os.path.abspath(os.environ.get("MLBENCH", "build/mlbench"))
STAGE_PROG = os.path.abspath(os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog"))
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(os.path.abspath(SOURCE), "examples", "workflow", "workflow.yaml")

MS = 1_000_000

# A stage that reports what it got: its cwd, argv and the variable X, as JSON in argv[1].
PROBE = """import json, os, sys
with open(sys.argv[1], "w") as f:
    json.dump({"cwd": os.getcwd(), "argv": sys.argv[2:], "X": os.environ.get("X")}, f)
"""


def within(value_ns, truth_ms, rel=0.10, extra_ms=0):
    """A measured span of a known sleep: never much shorter than the truth, longer only by what
    a busy machine adds (the tolerance, extra_ms and half the truth: a double count still fails)."""
    truth = truth_ms * MS
    return truth * (1 - rel) - extra_ms * MS <= value_ns <= truth * (1 + rel + 0.5) + extra_ms * MS


def run_takes_workflows():
    p = subprocess.run([MLBENCH, "run", "--help"], capture_output=True, text=True)
    return "--param" in p.stdout


class WorkflowTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-workflow-test-")
        self.dir = os.path.realpath(self.tmp.name)
        self.store = os.path.join(self.dir, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def exec_(self, path, *params, cwd=None, timeout=60):
        """Runs `mlbench workflow-exec` alone; returns (status, stdout, stderr)."""
        p = subprocess.run([MLBENCH, "workflow-exec", path, *params], capture_output=True,
                           text=True, cwd=cwd, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def run_(self, *args, timeout=120):
        """Runs mlbench run with a private store; returns (status, stdout, stderr)."""
        p = subprocess.run([MLBENCH, "run", "--store", self.store, *args], capture_output=True,
                           text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def measure(self, path, *args, params=()):
        """mlbench run ARGS -- <mlbench> workflow-exec PATH PARAMS."""
        return self.run_(*args, "--", MLBENCH, "workflow-exec", path, *params)

    def results(self):
        return sorted(glob.glob(os.path.join(self.store, "runs", "*.json")), key=os.path.getmtime)

    def result(self):
        """The latest result in the store."""
        files = self.results()
        self.assertTrue(files, "no result written")
        with open(files[-1]) as f:
            return json.load(f)

    @staticmethod
    def stage(run, name):
        for s in run["stages"]:
            if s["name"] == name:
                return s
        raise AssertionError(f"stage {name!r} missing from {[s['name'] for s in run['stages']]}")

    @staticmethod
    def spans(run, name):
        return [sp for sp in run["spans"] if sp["name"] == name]

    def test_stages_in_order(self):
        path = self.write("wf.yaml", f"""stages:
  first: sleep 0.05
  second: [{STAGE_PROG}, seq]   # marks load, train and step itself
  third: sleep 0.1
""")
        rc, out, err = self.measure(path, "-r", "2")
        self.assertEqual(rc, 0, err)
        # "second" is a whole process: 150 ms of stages plus its own start and exit, which a
        # sanitized build makes tens of ms longer (LeakSanitizer's exit scan): measured here.
        t0 = time.monotonic()
        subprocess.run([STAGE_PROG, "seq"], check=True, capture_output=True, timeout=60)
        own_ms = (time.monotonic() - t0) * 1000
        r = self.result()
        for run in r["runs"]:
            self.assertEqual(run["status"], "ok")
            top = [s["name"] for s in run["stages"] if s["depth"] == 0]
            self.assertEqual(top, ["first", "second", "third"])
            self.assertTrue(within(self.stage(run, "first")["active_ns"], 50, extra_ms=30), run)
            second_ns = self.stage(run, "second")["active_ns"]
            self.assertGreaterEqual(second_ns, 150 * MS, run)
            self.assertTrue(within(second_ns, max(150, own_ms), extra_ms=40), (own_ms, run))
            self.assertTrue(within(self.stage(run, "third")["active_ns"], 100, extra_ms=30), run)
            (first,), (second,), (third,) = (self.spans(run, n) for n in ("first", "second", "third"))
            self.assertLessEqual(first["end_ns"], second["start_ns"])
            self.assertLessEqual(second["end_ns"], third["start_ns"])
            # the stage's own markers nest under the workflow stage that ran it
            load = self.stage(run, "load")
            self.assertEqual(load["depth"], 1, run["stages"])
            self.assertTrue(within(load["active_ns"], 50))
            for sp in self.spans(run, "load") + self.spans(run, "step"):
                self.assertGreaterEqual(sp["start_ns"], second["start_ns"])
                self.assertLessEqual(sp["end_ns"], second["end_ns"])
            self.assertEqual(run["metadata"]["workflow"], path)
        names = [s["name"] for s in r["summary"]["stages"]]
        self.assertLess(names.index("first"), names.index("second"))
        self.assertLess(names.index("second"), names.index("third"))

    def test_failing_stage(self):
        path = self.write("wf.yaml", f"""stages:
  ok: "true"
  bad: [{STAGE_PROG}, fail]
  never: touch never-ran
""")
        rc, _, err = self.exec_(path)
        self.assertEqual(rc, 3, err)
        self.assertIn("workflow: stage 'bad': ", err)
        self.assertIn("exited with status 3", err)
        rc, _, err = self.measure(path, "-r", "2")
        self.assertEqual(rc, 1, err)
        r = self.result()
        self.assertEqual([x["status"] for x in r["runs"]], ["failed", "failed"])
        run = r["runs"][0]
        self.assertEqual(run["exit_code"], 3)
        self.assertIn("dataset missing", run["stderr_tail"])
        self.assertIn("stage 'bad'", run["stderr_tail"])
        names = [s["name"] for s in run["stages"]]
        self.assertIn("ok", names)
        self.assertNotIn("never", names)
        self.assertEqual(self.stage(run, "bad")["unclosed"], 0, "a failed stage is ended")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "never-ran")))

    def test_command_not_found(self):
        path = self.write("wf.yaml", "stages:\n  first: 'true'\n  x: no-such-command-mlbench --flag\n"
                          "  after: touch never-ran\n")
        rc, _, err = self.exec_(path)
        self.assertEqual(rc, 127)
        self.assertIn("workflow: stage 'x': command not found: no-such-command-mlbench", err)
        rc, _, err = self.measure(path, "-r", "1")
        self.assertEqual(rc, 1, err)
        run = self.result()["runs"][0]
        self.assertEqual(run["status"], "failed")
        self.assertEqual(run["exit_code"], 127)
        self.assertIn("command not found: no-such-command-mlbench", run["stderr_tail"])
        self.assertIn("x", [s["name"] for s in run["stages"]])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "never-ran")))

    def test_params_env_cwd(self):
        self.write("probe.py", PROBE)
        os.makedirs(os.path.join(self.dir, "wf", "sub"))
        os.makedirs(os.path.join(self.dir, "wf", "sub2"))
        path = self.write("wf/wf.yaml", f"""params:
  msg: hello world
  n: 1
  out: sub
stages:
  words:
    cmd: {sys.executable} ../../probe.py words.json "${{params.msg}}" ${{params.msg}} $X
    cwd: ${{params.out}}
    env: {{X: "x-${{params.n}}"}}
  list:
    cmd: [{sys.executable}, ../probe.py, list.json, "${{params.msg}}", $X, "n=${{params.n}}"]
    env: {{X: x}}
  shell:
    cmd: echo "$((2 + ${{params.n}}))${{X:-unset}}" > shell.txt
    shell: true
""")
        elsewhere = os.path.join(self.dir, "store")
        os.makedirs(elsewhere)

        def probe(name):
            with open(os.path.join(self.dir, "wf", name)) as f:
                return json.load(f)

        rc, _, err = self.exec_(path, cwd=elsewhere)  # cwd is relative to the file, not to us
        self.assertEqual(rc, 0, err)
        words = probe("sub/words.json")
        self.assertEqual(words["cwd"], os.path.join(self.dir, "wf", "sub"))
        # a value is one word wherever it is; $X comes from the stage's env
        self.assertEqual(words["argv"], ["hello world", "hello world", "x-1"])
        self.assertEqual(words["X"], "x-1")
        lst = probe("list.json")
        self.assertEqual(lst["cwd"], os.path.join(self.dir, "wf"))
        self.assertEqual(lst["argv"], ["hello world", "$X", "n=1"])  # a list is literal
        self.assertEqual(lst["X"], "x")
        with open(os.path.join(self.dir, "wf", "shell.txt")) as f:
            self.assertEqual(f.read(), "3unset\n")  # a stage's env does not leak into the next

        rc, _, err = self.exec_(path, "--param", "msg=a;b *", "--param=n=5", "--param", "out=sub2",
                                cwd=elsewhere)
        self.assertEqual(rc, 0, err)
        words = probe("sub2/words.json")
        self.assertEqual(words["cwd"], os.path.join(self.dir, "wf", "sub2"))
        self.assertEqual(words["argv"], ["a;b *", "a;b *", "x-5"])
        self.assertEqual(probe("list.json")["argv"], ["a;b *", "$X", "n=5"])
        with open(os.path.join(self.dir, "wf", "shell.txt")) as f:
            self.assertEqual(f.read(), "7unset\n")

        rc, _, err = self.measure(path, "-r", "1", params=["--param", "n=2"])
        self.assertEqual(rc, 0, err)
        run = self.result()["runs"][0]
        self.assertEqual([s["name"] for s in run["stages"]], ["words", "list", "shell"])
        self.assertEqual(run["metadata"]["params.n"], "2")
        self.assertEqual(run["metadata"]["params.msg"], "hello world")
        self.assertEqual(probe("list.json")["argv"], ["hello world", "$X", "n=2"])

        rc, _, err = self.exec_(path, "--param", "nope=1")
        self.assertEqual(rc, 2)
        self.assertIn("--param 'nope=1'", err)
        self.assertIn("(its parameters: msg, n, out)", err)

    def test_bad_files(self):
        marker = os.path.join(self.dir, "ran")
        cases = [
            ("syntax.yaml", "stages:\n  a: touch ran\n b: x\n", ":3:2: did not find expected key"),
            ("key.yaml", "stages:\n  load: touch ran\n  train:\n    comand: python3 train.py\n",
             ":4:5: unknown key 'comand' in stage 'train' (expected: cmd, cwd, env, shell)"),
            ("param.yaml", "params: {lr: 1}\nstages:\n  a: touch ran\n  train: python3 x.py --lr ${params.rl}\n",
             ":4:28: unknown parameter 'rl' (parameters: lr)"),
            ("dup.yaml", "stages:\n  a: touch ran\n  a: 'true'\n", ":3:3: duplicate stage 'a' in 'stages' (first at line 2)"),
            ("empty.yaml", "", ":1:1: the file is empty"),
            ("operator.yaml", "stages:\n  a: touch ran | cat\n", ":2:6: 'cmd' of stage 'a' holds a shell operator"),
            # issue 12: the operator after a pattern in one word slipped through (data loss)
            ("pattern.yaml", "stages:\n  a: touch ran\n  b: rm -f cache/*; cat keep.txt\n",
             ":3:6: 'cmd' of stage 'b' holds a pattern only a shell expands"),
        ]
        for name, text, message in cases:
            with self.subTest(file=name):
                path = self.write(name, text)
                rc, out, err = self.exec_(path)
                self.assertEqual(rc, 2, err)
                self.assertIn(path + message, err)
                self.assertEqual(out, "")
                self.assertFalse(os.path.exists(marker), "nothing runs from a bad file")
        rc, _, err = self.exec_(os.path.join(self.dir, "missing.yaml"))
        self.assertEqual(rc, 2)
        self.assertIn("cannot read workflow", err)
        p = subprocess.run([MLBENCH, "workflow-exec"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("Usage: mlbench workflow-exec FILE", p.stderr)
        # measured the long way, a bad file is a failed run with status 2 and the message
        rc, _, err = self.measure(os.path.join(self.dir, "key.yaml"), "-r", "1")
        self.assertEqual(rc, 1, err)
        run = self.result()["runs"][0]
        self.assertEqual(run["exit_code"], 2)
        self.assertIn("unknown key 'comand'", run["stderr_tail"])

    def test_sigterm(self):
        path = self.write("wf.yaml", f"stages:\n  a: [{STAGE_PROG}, hang]\n  b: touch never-ran\n")
        p = subprocess.Popen([MLBENCH, "workflow-exec", path], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        children = []
        deadline = time.monotonic() + 10
        while not children and time.monotonic() < deadline:
            time.sleep(0.05)
            with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                children = [int(x) for x in f.read().split()]
        self.assertTrue(children, "the stage did not start")
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=10)
        self.assertEqual(p.returncode, -signal.SIGTERM, "dies by the signal it got")
        # it forwarded the signal and waited for the stage, which it reaped
        self.assertFalse(os.path.exists(f"/proc/{children[0]}"), "the stage is still there")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "never-ran")))

        t0 = time.monotonic()
        rc, _, err = self.measure(path, "-r", "1", "--timeout", "300ms")
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(rc, 1, err)
        run = self.result()["runs"][0]
        self.assertEqual(run["status"], "timeout")
        self.assertEqual(self.stage(run, "a")["unclosed"], 1, "an interrupted stage stays open")
        self.assertEqual(self.stage(run, "forever")["unclosed"], 1)
        self.assertNotIn("b", [s["name"] for s in run["stages"]])

    def test_example(self):
        work = os.path.join(self.dir, "work")
        rc, out, err = self.measure(EXAMPLE, "-r", "1",
                                    params=["--param", f"workdir={work}", "--param", "epochs=2"])
        self.assertEqual(rc, 0, err)
        run = self.result()["runs"][0]
        self.assertEqual(run["status"], "ok")
        top = [s["name"] for s in run["stages"] if s["depth"] == 0]
        self.assertEqual(top, ["load", "preprocess", "train", "evaluate"])
        epoch = self.stage(run, "epoch")
        self.assertEqual((epoch["depth"], epoch["count"]), (1, 2))
        counters = {c["name"]: c for c in run["counters"]}
        self.assertGreater(counters["accuracy"]["last"], 0.5)
        with open(os.path.join(work, "metrics.json")) as f:
            self.assertEqual(json.load(f)["accuracy"], counters["accuracy"]["last"])

    @unittest.skipUnless(run_takes_workflows(), "mlbench run does not take workflow files yet "
                         "(its --help has no --param)")
    def test_run_file(self):
        work = os.path.join(self.dir, "work")
        rc, out, err = self.run_("-r", "1", "--param", f"workdir={work}", "--param", "epochs=1",
                                 EXAMPLE)
        self.assertEqual(rc, 0, err)
        run = self.result()["runs"][0]
        top = [s["name"] for s in run["stages"] if s["depth"] == 0]
        self.assertEqual(top, ["load", "preprocess", "train", "evaluate"])
        self.assertEqual(self.stage(run, "epoch")["count"], 1)
        self.assertEqual(run["metadata"]["params.epochs"], "1")
        n = len(self.results())
        # a bad file or --param: exit 2 with the message, nothing run, nothing written
        bad = self.write("bad.yaml", "stages:\n  train:\n    comand: touch ran\n")
        for args, message in (([bad], bad + ":3:5: unknown key 'comand'"),
                              (["--param", "nope=1", EXAMPLE], "--param 'nope=1'")):
            with self.subTest(args=args):
                rc, out, err = self.run_("-r", "1", *args)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertEqual(len(self.results()), n)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "ran")))
        rc, _, err = self.run_("-r", "1", "--param", "a=1", "--", "true")
        self.assertEqual(rc, 2, "--param without a workflow file")
        self.assertIn("--param", err)
        self.assertEqual(len(self.results()), n)


if __name__ == "__main__":
    unittest.main()
