"""End-to-end tests of the ring transport (docs/markers.md, "Ring transport"): mlbench reads the
shared-memory rings of the workload's threads; what a ring drops is counted exactly; a ring
whose writer dies mid-record, or that a hostile writer breaks, costs malformed records, never
the run. The other marker tests run on both transports (ctest's integration.datagram.*).

Environment (set by ctest): MLBENCH, STAGE_PROG, RING_PROG (tests/integration/ring_prog.c)."""
import json
import os
import subprocess
import tempfile
import unittest

MLBENCH = os.environ.get("MLBENCH", "build/mlbench")
STAGE_PROG = os.environ.get("STAGE_PROG", "build/tests/integration/stage_prog")
RING_PROG = os.environ.get("RING_PROG", "build/tests/integration/ring_prog")


class RingTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="mlbench-rings-")
        self.store = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def run_mlbench(self, *cmd, env=None, runs=1):
        e = dict(os.environ)
        e.pop("MLBENCH_MARKER_TRANSPORT", None)  # these tests choose the transport themselves
        e.update(env or {})
        out = os.path.join(self.store, "result.json")
        p = subprocess.run([MLBENCH, "run", "-r", str(runs), "--store", self.store, "-o", out,
                            "--", *cmd], capture_output=True, text=True, env=e, timeout=120)
        result = None
        if os.path.exists(out):
            with open(out) as fh:
                result = json.load(fh)
        return p, result

    def test_flood_drops_are_counted_exactly(self):
        """Two threads send 200 000 events each into rings of 128 records: most are dropped,
        and received + dropped is exactly what was sent (the counter `sent` is one more)."""
        p, r = self.run_mlbench(RING_PROG, "flood", "2", "200000",
                                env={"MLBENCH_MARKER_RING_BYTES": "4096"})
        self.assertEqual(p.returncode, 0, p.stderr)
        m = r["runs"][0]["markers"]
        self.assertEqual(m["transport"], "ring")
        self.assertGreaterEqual(m["rings"], 2)
        self.assertGreater(m["ring_dropped"], 0)
        self.assertEqual(m["events"] + m["dropped"] + m["ring_dropped"], 400000 + 1)
        by_thread = m["ring_dropped_by_thread"]
        self.assertEqual(sum(t["events_dropped"] for t in by_thread), m["ring_dropped"])
        self.assertTrue(all(t["pid"] > 0 and t["tid"] > 0 for t in by_thread))
        sent = [c for c in r["runs"][0]["counters"] if c["name"] == "sent"]
        self.assertEqual(sent[0]["last"], 400000)
        codes = [w["code"] for w in r["warnings"]]
        self.assertIn("ring_full", codes)
        warning = [w for w in r["warnings"] if w["code"] == "ring_full"][0]["message"]
        self.assertIn("MLBENCH_MARKER_RING_BYTES", warning)
        self.assertIn(str(m["ring_dropped"]), warning)

    def test_flood_with_default_rings_loses_nothing(self):
        """The same flood, 2 x 20 000 events, in default rings: every event arrives."""
        p, r = self.run_mlbench(RING_PROG, "flood", "2", "20000")
        self.assertEqual(p.returncode, 0, p.stderr)
        m = r["runs"][0]["markers"]
        self.assertEqual((m["events"], m["ring_dropped"], m["malformed"]), (40001, 0, 0))
        tick = [s for s in r["runs"][0]["stages"] if s["name"] == "tick"][0]
        self.assertEqual(tick["count"], 20000)

    def test_torn_record_of_a_killed_writer(self):
        """A writer killed by SIGKILL in the middle of a record: the records before it are kept,
        the torn one is one malformed record."""
        p, r = self.run_mlbench(RING_PROG, "torn")
        run = r["runs"][0]
        self.assertEqual(run["status"], "signaled")
        work = [s for s in run["stages"] if s["name"] == "work"]
        self.assertEqual(len(work), 1)
        self.assertEqual(work[0]["count"], 1)
        self.assertGreater(work[0]["active_ns"], 15e6)
        self.assertEqual(run["markers"]["malformed"], 1)
        self.assertIn("torn ring record", run["markers"]["malformed_examples"][0])

    def test_hostile_rings_are_refused(self):
        """Unsealed, another thread's, bad records, counters out of range: each is malformed;
        the good record of the same ring still counts and nothing crashes."""
        p, r = self.run_mlbench(RING_PROG, "hostile")
        self.assertEqual(p.returncode, 0, p.stderr)
        m = r["runs"][0]["markers"]
        self.assertEqual(m["malformed"], 6)
        reasons = " | ".join(m["malformed_examples"])
        for why in ("not sealed against shrinking", "names another thread", "unknown name id",
                    "unknown kind", "stamped outside the run", "counters out of range"):
            self.assertIn(why, reasons)
        self.assertEqual(m["events"], 1)
        self.assertEqual([i["name"] for i in r["runs"][0]["instants"]], ["good"])

    def test_forked_children_and_ended_threads_keep_their_events(self):
        """A forked child writes its own ring, and threads that end before the run does still
        deliver everything: the stages are those of the datagram transport."""
        for mode, stages in (("children", {"parent", "child"}), ("threads", {"main", "work"})):
            for transport in ("ring", "datagram"):
                p, r = self.run_mlbench(STAGE_PROG, mode,
                                        env={"MLBENCH_MARKER_TRANSPORT": transport})
                self.assertEqual(p.returncode, 0, p.stderr)
                run = r["runs"][0]
                self.assertEqual(run["markers"]["transport"], transport)
                self.assertTrue(stages <= {s["name"] for s in run["stages"]}, run["stages"])
                self.assertEqual(run["markers"]["unbalanced"], 0)
                self.assertEqual(run["markers"]["malformed"], 0)
                if transport == "ring":
                    self.assertGreaterEqual(run["markers"]["rings"], 2)
                else:
                    self.assertEqual(run["markers"]["rings"], 0)

    def test_bad_transport_settings_exit_2(self):
        for env, text in (({"MLBENCH_MARKER_TRANSPORT": "pigeon"}, "pigeon"),
                          ({"MLBENCH_MARKER_RING_BYTES": "12k"}, "12k"),
                          ({"MLBENCH_MARKER_RING_BYTES": "100"}, "100")):
            p, r = self.run_mlbench(STAGE_PROG, "seq", env=env)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(text, p.stderr)
            self.assertIsNone(r)


if __name__ == "__main__":
    unittest.main()
