"""End-to-end tests of `mlbench report`: measure the test workload with `mlbench run`, then
render the result in every format and check what a reader would: the Markdown report has every
section, the HTML page parses, holds SVG charts and loads nothing (and, when Chromium is
installed, renders without a console message), the trace loads as JSON with every stage span as
a complete event of the right duration, the CSV tables parse; comparisons; errors.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree)."""
import csv
import glob
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
SOURCE = os.environ.get("MLBENCH_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))

# the answer first, how it was measured after (issue 13)
SECTIONS = ["Summary", "Results", "Analysis", "Resource use per stage", "Warnings",
            "Workload and configuration", "Methodology", "Environment", "Runs", "Reproduce"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(test, page, shot, tmpdir, height=1000):
    """Renders page in headless Chromium 1280 pixels wide: a screenshot into shot and the DOM
    after layout (returned). Fails test when anything reached the console; skips it, saying
    why, when there is no Chromium."""
    browser = chromium()
    if not browser:
        test.skipTest("chromium is not installed (apt-get install chromium)")
    profile = tempfile.mkdtemp(dir=tmpdir)
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--hide-scrollbars",
             f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
             f"--window-size=1280,{height}"]
    url = "file://" + os.path.abspath(page)
    p = subprocess.run([*flags, f"--screenshot={shot}", url],
                       capture_output=True, text=True, timeout=120)
    test.assertEqual(p.returncode, 0, p.stderr)
    with open(shot, "rb") as f:
        test.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    test.assertGreater(os.path.getsize(shot), 10000)
    d = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True,
                       timeout=120)
    test.assertEqual(d.returncode, 0, d.stderr)
    # a page without script has nothing to say on the console: any line is a fault (an
    # error, or a load that the Content-Security-Policy refused)
    for line in p.stderr.splitlines() + d.stderr.splitlines():
        test.assertNotIn(":CONSOLE", line)
        test.assertNotIn("Uncaught", line)
        test.assertNotIn("Content Security Policy", line)
    return d.stdout


class Page(html.parser.HTMLParser):
    """Collects what the checks need: tags, attributes, text, and nesting errors."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "rect", "line", "polyline", "circle",
            "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.attrs, self.text, self.errors = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mlbench-report-")
        cls.store = os.path.join(cls.tmp.name, "store")
        cls.seq = os.path.join(cls.tmp.name, "seq.json")
        cls.threads = os.path.join(cls.tmp.name, "threads.json")
        for out, mode, extra in ((cls.seq, "seq", ["-w", "1"]),
                                 (cls.threads, "threads", ["-l", "threads"])):
            p = subprocess.run([MLBENCH, "run", "-q", "--store", cls.store, "-r", "3", *extra,
                                "--interval", "20ms", "-o", out, "--", STAGE_PROG, mode],
                               capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise RuntimeError(f"mlbench run {mode} failed: {p.stderr}")
        with open(cls.seq) as f:
            cls.result = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_absurd_medians(self):
        """issue 12: medians of 1e308 made the HTML time axis loop for ever, writing -nan lines
        until the disk filled, and left the temporary file behind."""
        r = json.loads(json.dumps(self.result))
        r["summary"]["wall_ns"]["median"] = 1e308
        for s in r["summary"]["stages"]:
            s["active_ns"]["median"] = 1e308
        huge = os.path.join(self.tmp.name, "huge.json")
        with open(huge, "w") as f:
            json.dump(r, f)
        out = os.path.join(self.tmp.name, "huge.html")
        for args in ([huge], [huge, self.seq]):
            with self.subTest(results=len(args)):
                self.report(*args, "--format", "html", "-o", out)  # the timeout is the test
                with open(out) as f:
                    page = f.read()
                self.assertNotIn("nan", page.lower())
                self.assertLess(len(page), 2 << 20)
        self.assertFalse([n for n in os.listdir(self.tmp.name) if n.startswith(".huge.html.")])

    def test_terminal_output_is_cleaned(self):
        """issue 12: a report printed to a terminal passed a result's escape sequences through;
        to a pipe the bytes stay as the format writes them."""
        import pty
        r = json.loads(json.dumps(self.result))
        r["label"] = "evil\x1b]0;owned\x07 \u202etxt"
        hostile = os.path.join(self.tmp.name, "hostile.json")
        with open(hostile, "w") as f:
            json.dump(r, f)
        master, slave = pty.openpty()
        p = subprocess.Popen([MLBENCH, "report", "--store", self.store, hostile, "--format", "md"],
                             stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        chunks = []
        while True:
            try:
                b = os.read(master, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not b:
                break
            chunks.append(b)
        os.close(master)
        self.assertEqual(p.wait(timeout=60), 0, p.stderr.read())
        p.stderr.close()
        screen = b"".join(chunks).decode("utf-8")
        self.assertIn("evil?]0;owned? ?txt", screen)
        for ch in ("\x1b", "\x07", "\u202e"):
            self.assertNotIn(ch, screen)
        # the Markdown itself is clean too (a .md file is read with cat)
        _, piped, _ = self.report(hostile, "--format", "md")
        self.assertIn("evil?\\]0;owned? ?txt", piped)
        for ch in ("\x1b", "\x07", "\u202e"):
            self.assertNotIn(ch, piped)

    def test_hostile_names_in_files(self):
        """issue 12: Markdown and CSV wrote a result's control characters raw, and a stage
        depth from the file bounded the Markdown indentation loop (2e9: gigabytes)."""
        r = json.loads(json.dumps(self.result))
        st = r["summary"]["stages"][0]
        st["name"] = "load\x1b[2J\u009b31m\u202e|`x`"
        st["depth"] = 2_000_000_000
        r["summary"]["stages"][1]["depth"] = -5
        hostile = os.path.join(self.tmp.name, "hostile-names.json")
        with open(hostile, "w") as f:
            json.dump(r, f)
        for fmt in ("md", "csv", "html"):
            with self.subTest(format=fmt):
                _, out, _ = self.report(hostile, "--format", fmt)
                self.assertLess(len(out), 2 << 20)
                for ch in ("\x1b", "\u009b", "\u202e"):
                    self.assertNotIn(ch, out)
                self.assertIn("load?\\[2J?31m?" if fmt == "md" else "load?[2J?31m?", out)
        _, md, _ = self.report(hostile, "--format", "md")
        self.assertIn("\\|\\`x\\`", md)  # table and code characters escaped

    def test_too_many_names(self):
        """issue 12: every consumer matches names across runs and results; a file with more
        names than mlbench writes (1000 of each kind) is refused, not matched quadratically."""
        r = json.loads(json.dumps(self.result))
        st = r["summary"]["stages"][0]
        r["summary"]["stages"] = [dict(st, name=f"s{i}") for i in range(1001)]
        many = os.path.join(self.tmp.name, "many.json")
        with open(many, "w") as f:
            json.dump(r, f)
        rc, _, err = self.report(many, ok=False)
        self.assertEqual(rc, 2, err)
        self.assertIn("summary.stages holds more than 1000 names", err)
        r["summary"]["stages"] = r["summary"]["stages"][:1000]
        r["runs"][1]["metadata"] = {f"k{i}": "v" for i in range(1001)}
        with open(many, "w") as f:
            json.dump(r, f)
        rc, _, err = self.report(many, ok=False)
        self.assertEqual(rc, 2, err)
        self.assertIn("runs[].metadata", err)

    def report(self, *args, ok=True):
        """Runs mlbench report; returns (exit status, stdout, stderr). Output is decoded as
        UTF-8 with line ends kept as written."""
        p = subprocess.run([MLBENCH, "report", "--store", self.store, *args],
                           capture_output=True, timeout=60)
        out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")
        if ok:
            self.assertEqual(p.returncode, 0, err)
            self.assertEqual(err, "")
        return p.returncode, out, err

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    # ---- Markdown ----

    def test_markdown_sections(self):
        _, md, _ = self.report(self.seq)
        self.assertTrue(md.startswith("# mlbench report: " + self.result["id"]))
        at = 0
        for s in SECTIONS:
            i = md.find(f"\n## {s}\n", at)
            self.assertGreater(i, 0, f"section {s} missing or out of order")
            at = i
        for stage in ("load", "train", "step", "total"):
            self.assertRegex(md, rf"\n\| (&nbsp;)*{stage} \| \d")
        self.assertIn("(75 %)", md)  # 3 runs: the interval's real coverage is said
        self.assertIn("| hostname | " + self.result["environment"]["hostname"] + " |", md)
        self.assertIn("| images | 32 | 64 |", md)
        self.assertIn(f"```sh\nmlbench run -r 3 -w 1 --interval 20ms -- {STAGE_PROG} seq\n```", md)
        for w in self.result["warnings"]:
            self.assertIn(w["code"], md)

    def test_markdown_to_file(self):
        out = self.path("r.md")
        _, stdout, _ = self.report(self.seq, "-o", out)
        self.assertEqual(stdout, "")
        _, md, _ = self.report(self.seq)
        with open(out) as f:
            self.assertEqual(f.read(), md)
        self.assertEqual(glob.glob(self.path(".r.md.*")), [], "temporary file left behind")

    # ---- HTML ----

    def html(self, *refs):
        out = self.path("r.html")
        self.report(*refs, "-o", out)  # format from the extension
        with open(out) as f:
            text = f.read()
        page = Page()
        page.feed(text)
        page.close()
        return out, text, page

    def test_html(self):
        out, text, page = self.html(self.seq)
        self.assertEqual(page.errors, [])
        self.assertEqual(page.stack, [])
        self.assertTrue(text.startswith("<!DOCTYPE html>"))
        # the breakdown and the memory timeline at least (a sleeping workload's CPU is zero:
        # that chart is then a line of text)
        self.assertGreaterEqual(page.tags.count("svg"), 2)
        self.assertEqual(text.count("<svg"), text.count("</svg>"))
        self.assertNotIn("script", page.tags)
        self.assertNotIn("link", page.tags)
        for name, value in page.attrs:
            self.assertNotIn(name, ("src", "href"), "a self-contained page loads nothing")
            if value and name != "xmlns":
                self.assertNotIn("http", value)
        body = "".join(page.text)
        for s in SECTIONS:
            self.assertIn(s, body)
        self.assertIn("Stage breakdown", body)
        self.assertIn("Memory of the process tree", body)
        self.assertIn("the run with the median wall time", body)

    def test_html_escapes_label(self):
        label = "<b>x & 'y'</b>"
        out = self.path("esc.json")
        p = subprocess.run([MLBENCH, "run", "-q", "--store", self.store, "-r", "1", "-l", label,
                            "-o", out, "--", STAGE_PROG, "seq"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        _, text, page = self.html(out)
        self.assertNotIn("<b>", text)
        self.assertIn("&lt;b&gt;x &amp; &#39;y&#39;&lt;/b&gt;", text)
        self.assertIn(label, "".join(page.text))

    def browser(self, page, name):
        """Renders page in headless Chromium at 1280x1000, the first screen of a laptop (the
        screenshot kept in the test's temporary directory, to look at); returns the DOM."""
        return render(self, page, self.path(name + ".png"), self.tmp.name)

    def assert_answer_first(self, dom, chart_in_answer):
        """issue 13: the verdict and the stage chart open the page, before anything tall."""
        answer = dom.find('id="answer"')
        chart = dom.find('id="stage-chart"')
        self.assertGreater(answer, 0, "no answer block")
        self.assertGreater(chart, answer, "the stage chart does not follow the verdict")
        chart_end = dom.find("</figure>", chart)
        if chart_in_answer:
            self.assertLess(chart_end, dom.find("</section>", answer))
        main = dom.find("<main")
        head = Page()
        head.feed(dom[main:chart_end])
        # up to the end of the chart: headings, the verdict, a few lines, the chart itself; no
        # table, no folded section, no command
        for tall in ("table", "details", "pre"):
            self.assertNotIn(tall, head.tags, f"a <{tall}> comes before the stage chart")
        # and before the chart not half a screen of text (about 100 characters a line)
        before = Page()
        before.feed(dom[main:chart])
        words = " ".join("".join(before.text).split())
        self.assertIn("Verdict", words)
        self.assertLess(len(words), 900, words)
        # the environment is below, folded (closed), and still complete
        env = dom.find('<details class="folded"')
        self.assertGreater(env, chart_end)
        self.assertNotIn(" open", dom[env:dom.find(">", env)])
        self.assertIn("hostname", dom[env:dom.find("</details>", env)])
        runs = dom.find(">Runs</h")
        self.assertGreater(runs, env)

    def test_cpu_timeline_bounded(self):
        """issue 13: /proc counts CPU time in 10 ms ticks, so rates over 10 ms intervals (the
        adaptive sampling's start) are 0, 1, 2, 3 cores: a 2-CPU machine's chart went above
        its CPUs, its axis to 2.5. The line is drawn over ~100 ms windows, never above the
        series' max_rate, and the axis ends there."""
        r = json.loads(json.dumps(self.result))
        run = r["runs"][0]
        n = 41
        t = [i * 10_000_000 for i in range(n)]
        cpu = [0.03 * ((i + 1) // 2) for i in range(n)]  # 3 ticks, 0 ticks: 1.5 cores
        run["samples"] = {"t_ns": t, "series": [
            {"metric": "process_cpu_seconds_total", "labels": "", "kind": "counter",
             "source": "proc", "max_rate": 2.0, "values": cpu}]}
        run["wall_ns"] = t[-1]
        for i, x in enumerate(r["runs"]):
            if x is not run:
                x["samples"] = {"t_ns": [], "series": []}
        path = os.path.join(self.tmp.name, "ticks.json")
        with open(path, "w") as f:
            json.dump(r, f)
        out = os.path.join(self.tmp.name, "ticks.html")
        self.report(path, "--format", "html", "--run", "0", "-o", out)
        with open(out) as f:
            page = f.read()
        i = page.index("CPU cores busy")
        svg = page[page.index("<svg", i):page.index("</svg>", i)]
        ticks = re.findall(r'text-anchor="end">([^<]*)</text>', svg)
        self.assertEqual(ticks[-1], "2", ticks)  # not 2.5, not 3.5
        ys = [float(p.split(",")[1]) for line in re.findall(r'<polyline[^>]*points="([^"]*)"', svg)
              for p in line.split()]
        # plot from y 134 (0) to 14 (2 cores): 1.5 cores is y 44; single intervals would be 3
        self.assertTrue(ys and all(abs(y - 44) < 1 for y in ys), ys)

    def test_html_in_chromium(self):
        out, text, _ = self.html(self.seq)
        dom = self.browser(out, "single")
        self.assert_answer_first(dom, True)
        # every chart is still there once loaded: breakdown, then the timelines
        self.assertEqual(dom.count("<svg"), text.count("<svg"))
        self.assertGreaterEqual(dom.count("<svg"), 2)
        self.assertIn("<polyline", dom)

    def test_comparison_in_chromium(self):
        out = self.path("cmp.html")
        self.report(self.seq, self.threads, "-o", out)
        with open(out) as f:
            text = f.read()
        dom = self.browser(out, "comparison")
        self.assert_answer_first(dom, False)
        answer = dom[dom.find('id="answer"'):dom.find("</section>", dom.find('id="answer"'))]
        self.assertIn("threads against " + self.result["id"] + ", total: ", answer)
        self.assertLess(dom.find('id="answer"'), dom.find(">Comparison</h2>"))
        self.assertEqual(dom.count("<svg"), text.count("<svg"))
        self.assertGreaterEqual(dom.count("<svg"), 3)

    def test_counter_points_and_curves(self):
        """issue 13: counters over time are recorded (runs[].counters[].points) and drawn as
        training curves, a count as its rate, a loss as its value, one line per measured run;
        a counter with fewer than 3 points is not drawn."""
        for run in self.result["runs"]:
            images = next(c for c in run["counters"] if c["name"] == "images")
            self.assertEqual([p[1:] for p in images["points"]], [[32, 32], [32, 64]])
            self.assertLess(images["points"][0][0], images["points"][1][0])
            self.assertLessEqual(images["points"][1][0], run["wall_ns"])
            self.assertNotIn("points_stride", images)
        script = ("import mlbench_marker as m, time\n"
                  "for i in range(30):\n"
                  "    time.sleep(0.002)\n"
                  "    m.counter('images', 8)\n"
                  "    m.counter('loss', 1.0 / (i + 1))\n"
                  "m.counter('accuracy', 0.5)\n")
        out = self.path("curves.json")
        env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"))
        p = subprocess.run([MLBENCH, "run", "-q", "--store", self.store, "-r", "2", "-w", "1",
                            "-o", out, "--", "python3", "-c", script],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            r = json.load(f)
        loss = next(c for c in r["runs"][1]["counters"] if c["name"] == "loss")
        self.assertEqual(len(loss["points"]), 30)
        self.assertAlmostEqual(loss["points"][-1][2], sum(1.0 / (i + 1) for i in range(30)))
        _, text, page = self.html(out)
        self.assertEqual(page.errors, [])
        body = "".join(page.text)
        self.assertIn("images: rate per interval between samples (/s)", body)
        self.assertIn("loss: value as sent", body)
        self.assertNotIn("accuracy: value", body)
        fig = text[text.find("images: rate per interval"):]
        fig = fig[:fig.find("</figure>")]
        self.assertEqual(fig.count("<polyline"), 2)  # the two measured runs, not the warm-up

    # ---- trace ----

    def test_trace(self):
        _, text, _ = self.report(self.seq, "--format", "trace")
        doc = json.loads(text)
        events = doc["traceEvents"]
        stages = [e for e in events if e["ph"] == "X" and e["cat"] == "stage"]
        runs = [e for e in events if e["ph"] == "X" and e["cat"] == "run"]
        spans = [sp for run in self.result["runs"] for sp in run["spans"]]
        self.assertEqual(len(runs), len(self.result["runs"]))
        self.assertEqual(len(stages), len(spans))
        # in order of runs and of begin: each span is a complete event of its duration in us
        for ev, sp in zip(stages, spans):
            self.assertEqual(ev["name"], sp["name"])
            self.assertAlmostEqual(ev["dur"], (sp["end_ns"] - sp["start_ns"]) / 1000, places=3)
        # runs never overlap, and each run's spans lie within it
        runs.sort(key=lambda e: e["ts"])
        for a, b in zip(runs, runs[1:]):
            self.assertLess(a["ts"] + a["dur"], b["ts"])
        for run_ev, run in zip(runs, self.result["runs"]):
            self.assertAlmostEqual(run_ev["dur"], run["wall_ns"] / 1000, places=3)
            mine = [e for e in stages if run_ev["ts"] <= e["ts"] <= run_ev["ts"] + run_ev["dur"]]
            self.assertEqual(len(mine), len(run["spans"]))
            for e, sp in zip(mine, run["spans"]):
                self.assertAlmostEqual(e["ts"] - run_ev["ts"], sp["start_ns"] / 1000, places=3)
        # processes and threads named; counters and instants present
        pids = {e["pid"] for e in events if e["ph"] != "M"}
        named = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        self.assertEqual(pids, named)
        self.assertTrue(any(e["ph"] == "C" for e in events))
        self.assertEqual(sum(e["ph"] == "i" for e in events), len(self.result["runs"]))

    def test_trace_one_run(self):
        _, text, _ = self.report(self.seq, "--format", "trace", "--run", "2")
        events = json.loads(text)["traceEvents"]
        stages = [e for e in events if e["ph"] == "X" and e["cat"] == "stage"]
        self.assertEqual(len(stages), len(self.result["runs"][2]["spans"]))

    # ---- CSV ----

    def test_csv(self):
        _, text, _ = self.report(self.seq, "--format", "csv")
        self.assertIn("\r\n", text)  # RFC 4180 line ends
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        self.assertEqual([r["stage"] for r in rows], ["load", "train", "step", "total"])
        by_name = {s["name"]: s for s in self.result["summary"]["stages"]}
        for r in rows[:3]:
            self.assertEqual(float(r["median_ns"]), by_name[r["stage"]]["active_ns"]["median"])
            self.assertEqual(r["scope"], "stage")
        self.assertEqual(rows[3]["scope"], "run")
        self.assertEqual(float(rows[3]["median_ns"]), self.result["summary"]["wall_ns"]["median"])

        _, text, _ = self.report(self.seq, "--format", "csv", "--table", "samples")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        expect = sum(len(r["samples"]["t_ns"]) * len(r["samples"]["series"])
                     for r in self.result["runs"])
        self.assertEqual(len(rows), expect)
        self.assertEqual(set(rows[0]), {"result", "run", "t_ns", "metric", "labels", "value"})

        _, text, _ = self.report(self.seq, "--format", "csv", "--table", "runs")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        self.assertEqual([r["warmup"] for r in rows], ["true", "false", "false", "false"])

    # ---- comparison, store ----

    def test_comparison(self):
        _, md, _ = self.report(self.seq, self.threads)
        self.assertIn("\n## Comparison\n", md)
        self.assertIn("\n### threads against " + self.result["id"] + "\n", md)
        self.assertIn("\n## Baseline: " + self.result["id"] + "\n", md)
        self.assertIn("\n## Candidate: threads\n", md)
        self.assertIn("missing in candidate", md)
        _, text, page = self.html(self.seq, self.threads)
        self.assertEqual(page.errors, [])
        self.assertIn("threads against", "".join(page.text))
        _, text, _ = self.report(self.seq, self.threads, "--format", "csv", "--table",
                                 "comparison")
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
        self.assertIn("total", [r["stage"] for r in rows])

    def test_store_references(self):
        _, md, _ = self.report("threads")  # a label in the store: its newest result
        self.assertIn("# mlbench report: threads", md)
        _, md, _ = self.report(self.result["id"])
        self.assertIn("# mlbench report: " + self.result["id"], md)

    # ---- errors ----

    def test_errors(self):
        cases = [
            (["--format", "pdf", self.seq], "'pdf' is not a format"),
            (["--bogus", self.seq], "unknown option '--bogus'"),
            ([], "report needs a result"),
            ([self.path("missing.json")], "missing.json"),
            (["--table", "runs", self.seq], "--table applies to --format csv"),
            (["--format", "trace", "--run", "99", self.seq], "--run 99"),
            (["--format", "csv", "--table", "nope", self.seq], "'nope'"),
            (["-o", self.path("no/such/dir/r.md"), self.seq], "cannot write"),
            (["no-such-label"], "no-such-label"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                rc, out, err = self.report(*args, ok=False)
                self.assertEqual(rc, 2, err)
                self.assertIn(message, err)
                self.assertEqual(out, "")

    def test_corrupt_result(self):
        bad = self.path("bad.json")
        with open(self.seq) as f, open(bad, "w") as g:
            g.write(f.read()[:300])
        rc, out, err = self.report(bad, ok=False)
        self.assertEqual(rc, 2)
        self.assertRegex(err, r"bad\.json: line \d+, column \d+")
        self.assertEqual(out, "")


if __name__ == "__main__":
    unittest.main()
