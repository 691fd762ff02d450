"""End-to-end tests of `mlbench history --format md|csv|html|json` (docs/store.md): a store of
real results made in a temporary git repository (so each result records the commit it was
measured at) with several labels, an unlabelled command, two hosts and a deliberate step
change (a command that sleeps 20 ms for six results, then 40 ms for six), rendered in each
format: the CSV parses and has a row per result and stage with the change on the right row, the
Markdown tables name the commits and link them, the HTML dashboard marks the change at the right
commit with the --commit-url link, loads nothing, renders in headless Chromium without a console
line; hostile names are escaped; an empty store and a filter matching nothing say so; bad
options exit 2 naming the value; -o is written atomically.

Environment (set by ctest): MLBENCH (the binary), STAGE_PROG (tests/integration/stage_prog.c
built), MLBENCH_SOURCE (the source tree). HISTORY_SHOTS: a directory to keep the screenshots in
(to look at them)."""
import csv
import datetime
import glob
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from test_report import Page, render  # the page parser and the browser of the report's tests

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")

URL = "https://github.com/o/r/commit/{}"
CSV_HEADER = ["id", "created", "label", "command", "host", "commit", "stage", "n", "median_ns",
              "ci_low_ns", "ci_high_ns", "step_change"]
HOSTILE = "<script>alert(1)</script> & \"q\" 'x' \x01\x1b[31mred"
LONG = "very-long-benchmark-name-" * 12  # 300 characters
FORMULA = "=HYPERLINK(\"http://evil\")"


def parse_page(text):
    page = Page()
    page.feed(text)
    page.close()
    return page


def later(created, seconds):
    """An ISO 8601 UTC time `seconds` after created, as results write it."""
    t = datetime.datetime.strptime(created, "%Y-%m-%dT%H:%M:%S.%fZ")
    t += datetime.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class HistoryDashboardTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="mlbench-history-dash-")
        cls.store = os.path.join(cls.tmp.name, "store")
        cls.runs = os.path.join(cls.store, "runs")
        repo = os.path.join(cls.tmp.name, "repo")
        os.makedirs(cls.store)
        os.makedirs(repo)
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
        env.pop("MLBENCH_STORE", None)
        cls.env = env

        def git(*args):
            return subprocess.run(["git", *args], cwd=repo, env=env, check=True,
                                  capture_output=True, text=True).stdout.strip()

        def run(*args):
            before = set(os.listdir(cls.runs)) if os.path.isdir(cls.runs) else set()
            p = subprocess.run([MLBENCH, "run", "-q", "--store", cls.store, *args], cwd=repo,
                               env=env, capture_output=True, text=True, timeout=120)
            if p.returncode != 0:
                raise RuntimeError(f"mlbench run {args} failed: {p.stderr}")
            new = set(os.listdir(cls.runs)) - before
            assert len(new) == 1, new
            return new.pop()[:-len(".json")]

        git("init", "-q")
        # the step: 20 ms for six results, then 40 ms for six, each at its own commit. The
        # figures of the results are then set to those times (within 0.5 %), as test_store's
        # test_detect_step does: on a loaded CI machine the spawn of `sleep` varies by more
        # than 10 ms, which moved the step one result now and then. What the dashboards are
        # tested on is where the change is drawn, not how noisy the machine was.
        cls.nap, cls.commits = [], []
        for i in range(12):
            git("commit", "-q", "--allow-empty", "-m", f"change {i}")
            cls.commits.append(git("rev-parse", "HEAD"))
            cls.nap.append(run("-r", "3", "-l", "nap", "--", "sleep",
                               "0.02" if i < 6 else "0.04"))
        jitter = [0.3, -0.2, 0.1, -0.4, 0.2, 0.0, -0.1, 0.4, -0.3, 0.1, 0.2, -0.2]
        for i, rid in enumerate(cls.nap):
            path = os.path.join(cls.runs, rid + ".json")
            with open(path) as f:
                r = json.load(f)
            ns = (20e6 if i < 6 else 40e6) * (1 + jitter[i] / 100)
            r["summary"]["wall_ns"].update(median=ns, ci_low=ns * 0.995, ci_high=ns * 1.005,
                                           ci_level=0.95, mad=ns * 0.002, n=3)
            with open(path, "w") as f:
                json.dump(r, f)
        # another label, measured on this host and (copies, by hand) on a second one
        cls.other = [run("-r", "3", "-l", "other", "--", "true") for _ in range(2)]
        cls.other_b = []
        for k, rid in enumerate(cls.other):
            with open(os.path.join(cls.runs, rid + ".json")) as f:
                r = json.load(f)
            r["id"] = rid[:-6] + f"b0000{k}"
            r["created"] = later(r["created"], 0.5)
            r["environment"]["hostname"] = "box-b"
            with open(os.path.join(cls.runs, r["id"] + ".json"), "w") as f:
                json.dump(r, f)
            cls.other_b.append(r["id"])
        # results without a label: a series named by its command, with stages
        cls.staged = run("-r", "2", "--", STAGE_PROG, "seq")
        with open(os.path.join(cls.runs, cls.nap[0] + ".json")) as f:
            cls.host = json.load(f)["environment"]["hostname"]

        # a second store: names that try to break the page, a formula, a very long label
        cls.hostile = os.path.join(cls.tmp.name, "hostile")
        os.makedirs(os.path.join(cls.hostile, "runs"))
        with open(os.path.join(cls.runs, cls.staged + ".json")) as f:
            template = json.load(f)
        for k, (label, host) in enumerate([(HOSTILE, "<b>host</b>\x07"), (HOSTILE, "h2"),
                                           (FORMULA, "h2"), (LONG, "h2"), (FORMULA, "h2")]):
            r = json.loads(json.dumps(template))
            r["id"] = f"{template['id'][:-6]}h0000{k}"
            # the last one's time is no time (its series is then drawn in the results' order)
            r["created"] = later(template["created"], k) if k < 4 else "<i>c</i>\x1b[2J"
            r["label"] = label
            r["environment"]["hostname"] = host
            r["command"]["argv"] = ["sh", "-c", "echo '<i>' & \x1b]0;t\x07"]
            r["summary"]["stages"][0]["name"] = "<img src=x onerror=alert(1)>\x1b[2J"
            with open(os.path.join(cls.hostile, "runs", r["id"] + ".json"), "w") as f:
                json.dump(r, f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def history(self, *args, store=None, ok=True):
        """Runs mlbench history on the store; returns (status, stdout, stderr)."""
        p = subprocess.run([MLBENCH, "history", "--store", store or self.store, *args],
                           env=self.env, capture_output=True, timeout=120)
        out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")
        if ok:
            self.assertEqual(p.returncode, 0, err)
            self.assertEqual(err, "")
        return p.returncode, out, err

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    # ---- the formats

    def test_csv(self):
        _, out, _ = self.history("--format", "csv", "--min-effect", "20")
        self.assertIn("\r\n", out)  # RFC 4180 line ends
        rows = list(csv.reader(io.StringIO(out, newline="")))
        self.assertEqual(rows[0], CSV_HEADER)
        by_id = {}
        for row in rows[1:]:
            self.assertEqual(len(row), len(CSV_HEADER), row)
            by_id.setdefault(row[0], []).append(dict(zip(CSV_HEADER, row)))
        # every result, oldest first; the staged one has total and its three stages
        ids = list(by_id)
        self.assertEqual(ids[:12], self.nap)
        self.assertEqual(set(ids), set(self.nap + self.other + self.other_b + [self.staged]))
        self.assertEqual([r["stage"] for r in by_id[self.staged]], ["total", "load", "train",
                                                                      "step"])
        nap = [by_id[i][0] for i in self.nap]
        self.assertEqual([r["commit"] for r in nap], self.commits)
        for r in nap:
            self.assertEqual((r["label"], r["command"], r["stage"], r["n"]),
                             ("nap", r["command"], "total", "3"))
            self.assertTrue(r["command"].startswith("sleep 0.0"), r)
            self.assertLessEqual(float(r["ci_low_ns"]), float(r["median_ns"]))
            self.assertLessEqual(float(r["median_ns"]), float(r["ci_high_ns"]))
        changed = [k for k, r in enumerate(nap) if r["step_change"]]
        self.assertEqual(changed, [6], nap)
        self.assertGreater(float(nap[6]["step_change"]), 95)  # 20 ms to 40 ms: +100 %
        self.assertLess(float(nap[6]["step_change"]), 105)
        self.assertEqual({by_id[i][0]["host"] for i in self.other_b}, {"box-b"})
        # filters apply
        _, out, _ = self.history("--format", "csv", "--host", "box-b")
        rows = list(csv.reader(io.StringIO(out, newline="")))
        self.assertEqual([r[0] for r in rows[1:]], self.other_b)
        _, out, _ = self.history("--format", "csv", "--label", "nap", "--last", "3")
        self.assertEqual([r[0] for r in csv.reader(io.StringIO(out, newline=""))][1:],
                         self.nap[-3:])

    def test_markdown(self):
        _, out, _ = self.history("--format", "md", "--min-effect", "20", "--commit-url", URL)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("# mlbench history: "), lines[0])
        self.assertIn("on 2 hosts", out)
        at = lines.index("## nap: total")
        header = lines[at + 2]
        self.assertEqual(header, "| date (UTC) | commit | id | host | median | interval of the "
                                 "median | change |")
        rows = lines[at + 4:at + 16]
        self.assertEqual(len(rows), 12)
        for k, row in enumerate(rows):
            cells = [c.strip() for c in row.strip("|").split(" | ")]
            self.assertEqual(cells[1], f"[{self.commits[k][:12]}]({URL.format(self.commits[k])})")
            self.assertEqual(cells[2], self.nap[k])
            self.assertEqual(cells[3], self.host)
            self.assertRegex(cells[4], r"^\d+(\.\d+)? ms$")
            self.assertIn(" .. ", cells[5])
            if k == 6:
                self.assertRegex(cells[6], r"^\*\*slower by \d+\.\d %\*\* \(")
            else:
                self.assertEqual(cells[6], "", row)
        self.assertEqual(lines[at + 16], "")
        # the change is listed first, with its commit linked
        intro = out[:out.index("## ")]
        self.assertIn("- nap (total): **slower by", intro)
        self.assertIn(f"from commit [{self.commits[6][:12]}]({URL.format(self.commits[6])}), "
                      f"result {self.nap[6]}", intro)
        self.assertIn("## other: total", lines)
        self.assertIn(f"## command {STAGE_PROG} seq: load", [l.replace("\\_", "_")
                                                             for l in lines])

    def test_json_is_json(self):
        _, a, _ = self.history("--json", "--detect")
        _, b, _ = self.history("--format", "json", "--detect")
        self.assertEqual(a, b)
        doc = json.loads(a)
        self.assertEqual(doc["schema"], "mlbench.history/1")
        self.assertEqual(len(doc["results"]), 12 + 2 + 2 + 1)
        # -o x.json: JSON, chosen by the extension; the same document
        out = self.path("h.json")
        _, stdout, _ = self.history("--detect", "-o", out)
        self.assertEqual(stdout, "")
        with open(out) as f:
            self.assertEqual(f.read(), a)
        # the text table is unchanged by --format text
        _, t1, _ = self.history()
        _, t2, _ = self.history("--format", "text")
        self.assertEqual(t1, t2)
        self.assertTrue(t1.startswith("id "), t1)

    def html(self, *args, store=None, name="h.html"):
        out = self.path(name)
        _, stdout, _ = self.history("-o", out, *args, store=store)  # the format from the name
        self.assertEqual(stdout, "")
        self.assertEqual(glob.glob(out + ".tmp.*"), [], "temporary file left behind")
        with open(out, encoding="utf-8") as f:
            text = f.read()
        page = parse_page(text)
        self.assertEqual(page.errors, [])
        self.assertEqual(page.stack, [])
        self.assertTrue(text.startswith("<!DOCTYPE html>"))
        self.assertIn("Content-Security-Policy\" content=\"default-src 'none'; "
                      "style-src 'unsafe-inline'\"", text)
        for tag in ("script", "link", "img", "iframe", "object"):
            self.assertNotIn(tag, page.tags)
        for name_, value in page.attrs:
            self.assertNotIn(name_, ("src", "srcset", "action"))
            self.assertFalse(name_.startswith("on"), name_)
            if name_ == "href":
                self.assertTrue(value.startswith("#chart-") or value.startswith(
                    "https://github.com/o/r/commit/"), value)
        return out, text, page

    def test_html_dashboard(self):
        out, text, page = self.html("--commit-url", URL)
        body = "".join(page.text)
        # a chart per label (or command) and stage
        self.assertEqual(text.count("<svg"), 1 + 1 + 4)  # nap, other, the staged command's 4
        self.assertIn("median time (ms)", text)
        self.assertIn("time measured (UTC)", text)
        # the step: marked on the nap chart at the seventh result's commit, linked
        nap = text[text.index('id="chart-1"'):text.index("</figure>", text.index('id="chart-1"'))]
        marks = re.findall(r'<g class="change">(.*?)</g>', nap, re.S)
        self.assertEqual(len(marks), 1, marks)
        self.assertIn(f'href="{URL.format(self.commits[6])}"', marks[0])
        self.assertRegex(marks[0], r"slower by \d+\.\d % from " + self.commits[6][:12])
        self.assertIn(self.nap[6], nap.split("<ul class=\"marks\">")[1])
        # the table of changes first, naming the commit before too
        changes = text[text.index("<h2>Step changes</h2>"):text.index("<h2>Charts</h2>")]
        self.assertIn(self.commits[6][:12], changes)
        self.assertIn(self.commits[5][:12], changes)
        self.assertIn(f'href="{URL.format(self.commits[6])}"', changes)
        # each point's tooltip: its result, commit and host
        self.assertIn(f"{self.nap[3]}\n", text)
        self.assertIn(f"commit {self.commits[3]}\nhost {self.host}", text)
        # the filters: a radio button per label and host, before what they filter
        self.assertEqual(len(re.findall(r'<input type="radio" class="fi" name="fl"', text)),
                         1 + 3)
        self.assertEqual(len(re.findall(r'<input type="radio" class="fi" name="fh"', text)),
                         1 + 2)
        self.assertLess(text.index('name="fh"'), text.index('class="filters"'))
        self.assertIn("box-b", body)
        other = text.index(">other <span")
        self.assertIn("class=\"s l1 h0 h1\"", text[text.rindex("<figure", 0, other):other])
        self.assertIn("#fh-1:checked~.charts .s:not(.h1)", text)
        self.assertEqual(body.count("No chart for this choice of label and host"), 1)

    def test_hostile_names(self):
        out, text, page = self.html(store=self.hostile, name="hostile.html")
        self.assertNotIn("<script>alert", text)
        self.assertNotIn("<img src", text)
        self.assertNotIn("<b>host", text)
        self.assertNotIn("<i>", text)
        for ch in ("\x01", "\x07", "\x1b"):
            self.assertNotIn(ch, text)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;q&quot; &#39;x&#39;",
                      text)
        body = "".join(page.text)
        self.assertIn("<img src=x onerror=alert(1)>?[2J", body)
        # the long label: cut with an ellipsis where shown, whole in a title
        self.assertIn("results, oldest to newest (some have no time recorded)", text)
        self.assertIn("&lt;i&gt;c&lt;/i&gt;?[2J", text)
        self.assertIn(f'title="{LONG}"', text)
        self.assertIn(LONG[:39] + "\u2026", body)
        self.assertNotIn(LONG, body)
        # Markdown: escaped, no control character
        _, md, _ = self.history("--format", "md", store=self.hostile)
        self.assertNotIn("<script>", md)
        self.assertIn("\\<script\\>", md)
        self.assertFalse([c for c in md if ord(c) < 32 and c != "\n"])
        # CSV: a formula stays text, quotes doubled, controls gone
        _, out, _ = self.history("--format", "csv", store=self.hostile)
        self.assertFalse([c for c in out if ord(c) < 32 and c not in "\r\n"])
        rows = list(csv.reader(io.StringIO(out, newline="")))
        labels = {r[2] for r in rows[1:]}
        self.assertIn("'" + FORMULA, labels)
        self.assertIn(HOSTILE.replace("\x01", "?").replace("\x1b", "?"), labels)
        self.assertIn("<img src=x onerror=alert(1)>?[2J", {r[6] for r in rows[1:]})

    def test_empty(self):
        empty = self.path("empty")
        os.makedirs(empty, exist_ok=True)
        _, out, _ = self.history("--format", "csv", store=empty)
        self.assertEqual(out, ",".join(CSV_HEADER) + "\r\n")
        _, out, _ = self.history("--format", "md", store=empty)
        self.assertIn(f"No results in the store {empty}.", out.replace("\\_", "_"))
        _, text, page = self.html(store=empty, name="empty.html")
        self.assertIn(f"No results in the store {empty}.", "".join(page.text))
        self.assertNotIn("<svg", text)
        # a filter that matches nothing
        _, text, page = self.html("--label", "nothing", "--host", "box-b", name="none.html")
        self.assertIn("No results with label 'nothing' from host 'box-b'", "".join(page.text))
        _, out, _ = self.history("--format", "md", "--label", "nothing")
        self.assertIn("No results with label 'nothing' in the store", out)
        _, out, _ = self.history("--format", "csv", "--label", "nothing")
        self.assertEqual(out, ",".join(CSV_HEADER) + "\r\n")

    # ---- errors

    def test_bad_options(self):
        for args, words in ((["--format", "xml"], ["--format 'xml'", "md, csv or html"]),
                            (["--commit-url", "https://x/commit/"],
                             ["--commit-url 'https://x/commit/'", "{}"]),
                            (["--format", "csv", "--commit-url", URL],
                             ["--commit-url applies to --format md and html, not csv"]),
                            (["--json", "--format", "md"], ["--json", "'md'"]),
                            (["-o", ""], ["-o is empty"])):
            with self.subTest(args=args):
                rc, out, err = self.history(*args, ok=False)
                self.assertEqual(rc, 2, err)
                self.assertEqual(out, "")
                for w in words:
                    self.assertIn(w, err)

    def test_output_atomic(self):
        # a store that cannot be read: exit 2, the file there before untouched, no temporary
        out = self.path("keep.html")
        with open(out, "w") as f:
            f.write("before")
        rc, _, err = self.history("-o", out, store=self.path("no-such-store"), ok=False)
        self.assertEqual(rc, 2, err)
        with open(out) as f:
            self.assertEqual(f.read(), "before")
        self.assertEqual(glob.glob(out + ".tmp.*"), [])
        # a directory that does not exist: exit 2, nothing made
        missing = self.path("no-dir/x.html")
        rc, _, err = self.history("-o", missing, ok=False)
        self.assertEqual(rc, 2, err)
        self.assertIn("no-dir/x.html", err)
        self.assertFalse(os.path.exists(os.path.dirname(missing)))
        # a file that cannot be replaced (a directory is there): the temporary file goes
        target = self.path("a-dir.csv")
        os.makedirs(os.path.join(target, "inside"), exist_ok=True)
        rc, _, err = self.history("-o", target, ok=False)
        self.assertNotEqual(rc, 0)
        self.assertIn("a-dir.csv", err)
        self.assertTrue(os.path.isdir(target))
        self.assertEqual(glob.glob(target + ".tmp.*"), [])
        # and a good write replaces the file whole
        _, _, _ = self.history("-o", out)
        with open(out) as f:
            self.assertTrue(f.read().startswith("<!DOCTYPE html>"))

    # ---- in a browser

    def browser(self, page, name, height=1000):
        """Renders page in headless Chromium (test_report.render); returns the DOM. The
        screenshot is also copied to $HISTORY_SHOTS when set, to look at."""
        shot = self.path(name + ".png")
        dom = render(self, page, shot, self.tmp.name, height)
        keep = os.environ.get("HISTORY_SHOTS")
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(shot, keep)
        return dom

    def test_in_chromium(self):
        out, text, _ = self.html("--commit-url", URL, "--min-effect", "20", name="dash.html")
        dom = self.browser(out, "dashboard", 2400)
        self.assertEqual(dom.count("<svg"), text.count("<svg"))
        self.assertIn('<g class="change">', dom)
        self.assertIn(URL.format(self.commits[6]), dom)
        # the same page with the second host chosen (what a click on its button does)
        chosen = self.path("dash-box-b.html")
        with open(chosen, "w", encoding="utf-8") as f:
            f.write(text.replace('id="fh-a" checked>', 'id="fh-a">')
                    .replace('id="fh-1">', 'id="fh-1" checked>'))
        self.browser(chosen, "dashboard-box-b", 1400)
        out, _, _ = self.html(store=self.hostile, name="hostile.html")
        self.browser(out, "hostile")


if __name__ == "__main__":
    unittest.main()
