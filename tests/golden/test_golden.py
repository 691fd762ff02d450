"""The golden views: every view and format of mlbench drawn from the stored documents of
tests/golden/store/ (results of every kind, sweeps, the history they make), compared byte for
byte with what tests/golden/expected/ holds. A refactoring of the readers and views must leave
them identical; a change of output on purpose is made by rewriting them (--update) and shows
in the commit's diff.

  python3 tests/golden/test_golden.py                 check (ctest: integration.golden)
  python3 tests/golden/test_golden.py --update        rewrite expected/ from this build

Environment: MLBENCH (the binary; default build/mlbench), GOLDEN_DEMO (the demo views' driver,
tests/golden/golden_demo.c; its views are skipped with a note when it is not set)."""
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
STORE = os.path.join(HERE, "store")
EXPECTED = os.path.join(HERE, "expected")
MLBENCH = os.environ.get("MLBENCH", os.path.join(HERE, "..", "..", "build", "mlbench"))
DEMO = os.environ.get("GOLDEN_DEMO")


def corpus():
    """The stored results by label, oldest first ({label: [id, ...]}), the sweeps by mode
    ({mode or label: id}), read from the corpus itself so that it can be measured again."""
    results, sweeps = {}, {}
    for name in sorted(os.listdir(os.path.join(STORE, "runs"))):
        with open(os.path.join(STORE, "runs", name)) as f:
            doc = json.load(f)
        if doc.get("sweep"):
            continue
        label = doc.get("label") or doc["id"]
        if not all(c.isalnum() or c == "-" for c in label):
            label = "hostile"
        results.setdefault(label, []).append(doc["id"])
    for name in sorted(os.listdir(os.path.join(STORE, "sweeps"))):
        with open(os.path.join(STORE, "sweeps", name)) as f:
            doc = json.load(f)
        sweeps[doc.get("label") or doc["mode"]] = doc["id"]
    return results, sweeps


def views():
    """(name, argv) of every view checked: argv for mlbench, or ("demo", ...) for the demo
    views' driver."""
    results, sweeps = corpus()
    r = {label: ids[-1] for label, ids in results.items()}
    py = results["pipeline-py"]
    single = sorted(r)
    out = []
    for label in single:
        rid = r[label]
        out.append((f"show-{label}.txt", ["show", rid]))
        out.append((f"show-v-{label}.txt", ["show", "-v", rid]))
        for fmt in ("md", "html"):
            out.append((f"report-{label}.{fmt}", ["report", "-f", fmt, rid]))
        for table in ("stages", "runs"):
            out.append((f"report-{label}-{table}.csv", ["report", "-f", "csv", "--table", table, rid]))
    # The trace and the samples table are large: the runs of a few results.
    for label in ("gpu", "ranks", "load-server", "hostile"):
        out.append((f"report-{label}-run0.trace", ["report", "-f", "trace", "--run", "0", r[label]]))
        out.append((f"report-{label}-run0-samples.csv",
                    ["report", "-f", "csv", "--table", "samples", "--run", "0", r[label]]))
    for label in ("load-ss", "load-server"):
        for table in ("load", "load-seconds"):
            out.append((f"report-{label}-{table}.csv", ["report", "-f", "csv", "--table", table, r[label]]))
    # Comparisons: two and three versions of a pipeline, two load scenarios, unlike results.
    pairs = {"py2": [py[0], py[1]], "py3": py, "load": [r["load-ss"], r["load-server"]],
             "mixed": [r["pipeline-c"], r["failing"]], "spans": [r["spans"], r["spans"]],
             "record": [r["record"], r["record"]], "ranks": [r["ranks"], r["ranks"]],
             "gpu": [r["gpu"], r["gpu"]]}
    for name, ids in pairs.items():
        out.append((f"compare-{name}.txt", ["compare", *ids]))
        out.append((f"compare-v-{name}.txt", ["compare", "-v", *ids]))
        out.append((f"compare-{name}.json", ["compare", "--json", *ids]))
        for fmt in ("md", "html"):
            out.append((f"compare-{name}.{fmt}", ["compare", "--format", fmt, *ids]))
        out.append((f"report-compare-{name}.csv",
                    ["report", "-f", "csv", "--table", "comparison", *ids]))
    out.append(("compare-py2-gate.txt", ["compare", "--fail-if-slower", "1", "--stage", "train",
                                         "--max-accuracy-drop", "0.1", py[0], py[1]]))
    # Sweeps.
    for name, sid in sorted(sweeps.items()):
        path = os.path.join(STORE, "sweeps", sid + ".json")
        out.append((f"show-sweep-{name}.txt", ["show", "sweep:" + sid]))
        out.append((f"compare-sweep-{name}.txt", ["compare", "sweep:" + sid]))
        for fmt in ("md", "html", "csv"):
            out.append((f"report-sweep-{name}.{fmt}", ["report", "-f", fmt, path]))
    # History.
    out.append(("history.txt", ["history"]))
    out.append(("history-detect.txt", ["history", "--detect"]))
    out.append(("history-pipeline-py.txt", ["history", "-l", "pipeline-py", "-s", "train"]))
    out.append(("history.json", ["history", "--json"]))
    out.append(("history.csv", ["history", "-f", "csv"]))
    for fmt in ("md", "html"):
        out.append((f"history.{fmt}", ["history", "-f", fmt,
                                       "--commit-url", "https://example.org/c/{}"]))
    # The demo's views of its documents (cmd_demo.c prints them between its steps).
    out.append(("demo-bottleneck.txt", ["demo", "bottleneck",
                                        os.path.join(STORE, "runs", r["pipeline-py"] + ".json")]))
    out.append(("demo-batch.txt", ["demo", "batch",
                                   os.path.join(STORE, "sweeps", sweeps["find-max"] + ".json")]))
    out.append(("demo-final.txt", ["demo", "final", os.path.join(STORE, "runs", py[0] + ".json"),
                                   os.path.join(STORE, "runs", py[1] + ".json")]))
    return out


def draw(argv, store):
    """What the view prints: stdout, then the exit status and stderr when they say anything."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLBENCH", "COLUMNS"))}
    env.update(MLBENCH_STORE=store, NO_COLOR="1", LC_ALL="C.UTF-8", TZ="UTC")
    cmd = [DEMO, *argv[1:]] if argv[0] == "demo" else [MLBENCH, *argv]
    p = subprocess.run(cmd, capture_output=True, env=env, timeout=120)
    text = p.stdout
    if p.returncode or p.stderr:
        text += b"\n--- exit status %d, stderr:\n" % p.returncode + p.stderr
    # Where the test runs: the store's copy, and this folder (the demo views name their files).
    return text.replace(store.encode(), b"$STORE").replace(HERE.encode(), b"$GOLDEN")


def scratch():
    """A new folder for the store's copy, its path without '_' (Markdown would escape it, and
    the path would no longer be found to be replaced)."""
    while True:
        path = tempfile.mkdtemp(prefix="mlbench-golden-")
        if "_" not in path:
            return path
        os.rmdir(path)


class GoldenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = scratch()
        cls.store = os.path.join(cls.tmp, "store")
        shutil.copytree(STORE, cls.store)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_views(self):
        """Every view as the corpus's expected/ file holds it."""
        names = set()
        for name, argv in views():
            names.add(name)
            with self.subTest(view=name):
                if argv[0] == "demo" and not DEMO:
                    self.skipTest("GOLDEN_DEMO not set (run through ctest): no demo views")
                got = draw(argv, self.store)
                path = os.path.join(EXPECTED, name)
                self.assertTrue(os.path.exists(path), f"{path} missing: run with --update")
                with open(path, "rb") as f:
                    want = f.read()
                if got != want:
                    diff = difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                                got.decode(errors="replace").splitlines(),
                                                "expected/" + name, "now", lineterm="", n=2)
                    self.fail("mlbench " + " ".join(argv) + "\n" + "\n".join(list(diff)[:60]))
        stale = set(os.listdir(EXPECTED)) - names
        self.assertFalse(stale, f"expected/ holds views no longer drawn: {sorted(stale)}")


def update():
    tmp = scratch()
    try:
        store = os.path.join(tmp, "store")
        shutil.copytree(STORE, store)
        shutil.rmtree(EXPECTED, ignore_errors=True)
        os.makedirs(EXPECTED)
        for name, argv in views():
            if argv[0] == "demo" and not DEMO:
                sys.exit("set GOLDEN_DEMO to the demo views' driver (build/tests/golden/golden_demo)")
            with open(os.path.join(EXPECTED, name), "wb") as f:
                f.write(draw(argv, store))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        unittest.main()
