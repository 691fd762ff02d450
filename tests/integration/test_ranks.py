"""End-to-end tests of multi-rank runs (docs/ranks.md): ranks announced by the C and Python
clients from the launcher's variables, stages per rank, the critical path and the straggler,
`mlbench run --ranks` and `mlbench rank-exec`, and `mlbench-workload imgclf --ranks` on Open MPI
(data-parallel: the ranks' weights equal, accuracy that of one process).

The MPI cases skip, saying why, when this build has no MPI or mpirun is not installed.
Environment (set by ctest): MLBENCH, WORKLOAD, STAGE_PROG, MLBENCH_SOURCE, MLBENCH_HAVE_MPI."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import test_workloads as tw

MLBENCH = os.environ["MLBENCH"]
WORKLOAD = os.environ["WORKLOAD"]
STAGE_PROG = os.environ["STAGE_PROG"]
SOURCE = os.environ["MLBENCH_SOURCE"]
HERE = os.path.dirname(os.path.abspath(__file__))
RANK_PROG = os.path.join(HERE, "rank_prog.py")
MPIRUN = shutil.which("mpirun")
HAVE_MPI = os.environ.get("MLBENCH_HAVE_MPI") == "ON"
NO_MPI = ("this build has no MPI (install libopenmpi-dev and rebuild)" if not HAVE_MPI else
          "mpirun is not installed (apt-get install openmpi-bin)" if not MPIRUN else None)

# The module's small synthetic dataset (test_workloads' tw.DATA), for the imgclf cases.
setUpModule = tw.setUpModule
tearDownModule = tw.tearDownModule

RANK_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
             "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "SLURM_NTASKS")


def mpirun(n, *argv):
    """mpirun -n N argv: as root it must be allowed, and a small machine oversubscribed."""
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return [MPIRUN, *root, "--oversubscribe", "-n", str(n), *argv]


class RankTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mlbench-ranks-test-")
        self.store = os.path.join(self.tmp.name, "store")

    def tearDown(self):
        self.tmp.cleanup()

    def env(self, more=None):
        e = {k: v for k, v in os.environ.items() if k not in RANK_VARS}
        e["PYTHONPATH"] = os.path.join(SOURCE, "python")
        e["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"  # containers forbid CMA
        e.update(more or {})
        return e

    def measure(self, *argv, runs=1, env=None, status=0, timeout=300, run_opts=()):
        """`mlbench run -r RUNS` of argv; returns (result document, stdout, stderr)."""
        out = os.path.join(self.tmp.name, "r.json")
        if os.path.exists(out):
            os.unlink(out)
        p = subprocess.run([MLBENCH, "run", "-r", str(runs), "--store", self.store, "-o", out,
                            *run_opts, "--", *argv], capture_output=True, text=True,
                           env=self.env(env), timeout=timeout)
        self.assertEqual(p.returncode, status, p.stdout + p.stderr)
        with open(out) as f:
            return json.load(f), p.stdout, p.stderr

    @staticmethod
    def rank_stage(ranks, name):
        for st in ranks["stages"]:
            if st["name"] == name:
                return st
        raise AssertionError(f"stage {name!r} not in the ranks' summary")

    @staticmethod
    def per_rank(st):
        return {p["rank"]: p for p in st["per_rank"]}


class RankMarkersTest(RankTest):
    def test_fake_job_straggler(self):
        """Three ranks as torchrun numbers them, rank 1 three times slower in compute: the
        critical path is rank 1's, its score is the lowest, it waits least in sync, and the
        analysis names it; each rank's forked worker counts for that rank."""
        doc, out, _ = self.measure(sys.executable, RANK_PROG, "job", "3", "1", runs=3)
        ranks = doc["summary"]["ranks"]
        self.assertEqual(ranks["ranks"], [0, 1, 2])
        self.assertEqual(ranks["world_size"], 3)
        compute = self.rank_stage(ranks, "compute")
        per = self.per_rank(compute)
        self.assertEqual(compute["ranks"], 3)
        self.assertEqual(compute["slowest_rank"], 1)
        self.assertIn(compute["fastest_rank"], (0, 2))
        self.assertGreaterEqual(per[1]["active_ns_median"], 4 * 0.06e9)
        self.assertLess(per[0]["active_ns_median"], 4 * 0.045e9)
        self.assertEqual(compute["critical_path_ns"], per[1]["active_ns_median"])
        self.assertGreater(compute["skew"], 2.0)
        self.assertLess(per[1]["score"], 0.6)
        self.assertGreater(per[1]["vs_median"], 1.0)
        for r in (0, 2):
            self.assertGreater(per[r]["score"], 0.8)
        self.assertEqual(self.rank_stage(ranks, "sync")["fastest_rank"], 1)
        self.assertEqual(self.rank_stage(ranks, "load")["ranks"], 3)  # the workers' stage
        run = doc["runs"][0]
        self.assertEqual([r["rank"] for r in run["ranks"]], [0, 1, 2])
        for r in run["ranks"]:
            names = {s["name"]: s for s in r["stages"]}
            self.assertEqual(names["compute"]["count"], 4)
            self.assertEqual(names["load"]["count"], 1)
        findings = [f for f in doc["analysis"]["findings"] if f["rule"] == "straggler"]
        self.assertEqual([f["stage"] for f in findings], ["compute"], doc["analysis"])
        self.assertIn("rank 1 spends", findings[0]["evidence"])
        self.assertGreater(findings[0]["saving_ns"], 0)
        self.assertIn("across 3 ranks", out)
        self.assertRegex(out, r"compute .* 1 \(\+\d+ % on the median\)")
        self.assertNotIn("mlbench.rank", json.dumps(doc["summary"]["metadata"]))

    def ranks_of(self, argv, env):
        doc, _, _ = self.measure(*argv, env=env)
        return doc["summary"]["ranks"]

    def test_rank_variables(self):
        """The launchers' variables in their documented order, read alike by the C and the
        Python client; RANK counts only beside WORLD_SIZE."""
        cases = [
            ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}, [3], 4),
            ({"RANK": "2", "WORLD_SIZE": "4", "OMPI_COMM_WORLD_RANK": "7"}, [2], 4),
            ({"RANK": "5"}, None, None),
            ({"RANK": "5", "PMI_RANK": "1", "PMI_SIZE": "2"}, [1], 2),
            ({"PMIX_RANK": "6"}, [6], None),
            ({"SLURM_PROCID": "9", "SLURM_NTASKS": "12"}, [9], 12),
            ({"OMPI_COMM_WORLD_RANK": "x1"}, None, None),
        ]
        py = [sys.executable, "-c", "from mlbench_marker import stage\n"
              "with stage('work'): pass"]
        for env, want, world in cases:
            for argv in ([STAGE_PROG, "seq"], py):
                with self.subTest(env=env, client=os.path.basename(argv[0])):
                    ranks = self.ranks_of(argv, env)
                    if want is None:
                        self.assertIsNone(ranks)
                        continue
                    self.assertEqual(ranks["ranks"], want)
                    self.assertEqual(ranks["world_size"], world)

    def test_c_children_inherit_rank(self):
        """Processes the C client's process forks are that rank's: every span is rank 3's."""
        doc, _, _ = self.measure(STAGE_PROG, "children", env={"OMPI_COMM_WORLD_RANK": "3"})
        run = doc["runs"][0]
        self.assertEqual([r["rank"] for r in run["ranks"]], [3])
        counts = {s["name"]: s["count"] for s in run["ranks"][0]["stages"]}
        self.assertEqual(counts, {"parent": 1, "child": 2})
        self.assertEqual(len({s["pid"] for s in run["spans"]}), 3)

    def test_plain_run_has_no_ranks(self):
        doc, out, _ = self.measure(STAGE_PROG, "seq")
        self.assertIsNone(doc["summary"]["ranks"])
        self.assertIsNone(doc["runs"][0]["ranks"])
        self.assertFalse(doc["config"]["ranks"])
        self.assertNotRegex(out, r"\nacross [0-9]+ ranks")

    def test_bad_input(self):
        cases = [
            ([MLBENCH, "run", "--ranks", "--", sys.executable, "-c", "1"],
             "'%s' is not a launcher of ranks" % sys.executable),
            ([MLBENCH, "run", "--ranks"], "--ranks needs a COMMAND"),
            ([MLBENCH, "rank-exec"], "no COMMAND given"),
            ([MLBENCH, "rank-exec", "--bogus", "x"], "unknown option"),
        ]
        for argv, message in cases:
            with self.subTest(argv=argv[1:]):
                p = subprocess.run(argv, capture_output=True, text=True, env=self.env(),
                                   cwd=self.tmp.name, timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.tmp.name, ".mlbench", "runs")))

    def test_rank_exec_outside_a_launcher(self):
        """rank-exec runs its command and passes its status on, with a warning that no rank
        is set; 127 for a command not found."""
        p = subprocess.run([MLBENCH, "rank-exec", "--", "sh", "-c", "exit 5"],
                           capture_output=True, text=True, env=self.env(), timeout=30)
        self.assertEqual(p.returncode, 5)
        self.assertIn("no rank in the environment", p.stderr)
        p = subprocess.run([MLBENCH, "rank-exec", "--", "no-such-program-x"],
                           capture_output=True, text=True, env=self.env({"RANK": "0",
                                                                         "WORLD_SIZE": "1"}),
                           timeout=30)
        self.assertEqual(p.returncode, 127)
        self.assertIn("command not found", p.stderr)


@unittest.skipIf(NO_MPI, NO_MPI)
class MpiTest(RankTest):
    ARGS = ["imgclf", *tw.SMALL, "--batch", "50", "--epochs", "2", "--threads", "1"]

    def single_accuracy(self):
        p = subprocess.run([WORKLOAD, *self.ARGS, "--data-dir", tw.DATA], capture_output=True,
                           text=True, env=self.env(), timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return float(re.search(r"val accuracy ([0-9.]+)", p.stdout).group(1))

    def test_imgclf_two_ranks(self):
        """imgclf --ranks over 2 MPI ranks: the stages of a data-parallel step on each rank,
        the global figures counted once, identical weights after every step, and the accuracy
        of one process training the same global batch."""
        doc, out, _ = self.measure(
            *mpirun(2, WORKLOAD, *self.ARGS, "--data-dir", tw.DATA, "--ranks",
                    "--check-replicas"), run_opts=("--ranks",))
        run = doc["runs"][0]
        self.assertEqual(run["status"], "ok")
        self.assertEqual([r["rank"] for r in run["ranks"]], [0, 1])
        for r in run["ranks"]:
            counts = {s["name"]: s["count"] for s in r["stages"]}
            for name in ("train", "barrier", "allreduce", "update"):
                self.assertEqual(counts[name], 24, (r["rank"], counts))  # 2 x 600 / 50
            self.assertEqual(counts["evaluate"], 2)
        counters = {c["name"]: c for c in run["counters"]}
        self.assertEqual(counters["images"]["sum"], 1200)  # global, counted once
        self.assertEqual(counters["ranks"]["last"], 2)
        self.assertGreater(counters["allreduce_busbw_GBps"]["last"], 0)
        self.assertAlmostEqual(counters["allreduce_busbw_GBps"]["last"],
                               counters["allreduce_algbw_GBps"]["last"], places=6)  # n = 2
        self.assertTrue(0 < counters["allreduce_share"]["last"] < 1)
        self.assertEqual(doc["summary"]["ranks"]["world_size"], 2)
        self.assertEqual(run["metadata"]["batch_per_rank"], "25")
        self.assertEqual(run["metadata"]["batch_size"], "50")
        acc = counters["accuracy"]["last"]
        self.assertAlmostEqual(acc, self.single_accuracy(), delta=0.005)
        self.assertNotIn("no_ranks", [w["code"] for w in doc["warnings"]])

    def test_imgclf_bad_batch(self):
        """A batch the ranks cannot share evenly: exit 2 from every rank, said once."""
        p = subprocess.run(mpirun(2, WORKLOAD, "imgclf", *tw.SMALL, "--data-dir", tw.DATA,
                                  "--batch", "51", "--ranks"),
                           capture_output=True, text=True, env=self.env(), timeout=120)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertEqual(p.stderr.count("--batch 51 cannot be shared evenly by 2 ranks"), 1,
                         p.stderr)
        p = subprocess.run([WORKLOAD, "imgclf", *tw.SMALL, "--data-dir", tw.DATA,
                            "--check-replicas"], capture_output=True, text=True,
                           env=self.env(), timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("--check-replicas compares the ranks' weights: it needs --ranks", p.stderr)

    def test_collector_refuses_strangers(self):
        """A connection to the collector without its token (here with a wrong one) is closed
        and said at the end; the run itself is measured as usual."""
        stranger = ("import os, socket\n"
                    "addr = os.environ['MLBENCH_RANK_COLLECTOR'].split('#')[0]\n"
                    "host, port = addr.rsplit(':', 1)\n"
                    "s = socket.create_connection((host, int(port)))\n"
                    "s.sendall(b'H 1 ' + b'0' * 32 + b' intruder\\n')\n"
                    "assert s.recv(16) == b''\n")
        doc, out, err = self.measure(*mpirun(1, sys.executable, "-c", stranger),
                                     run_opts=("--ranks-listen", "127.0.0.1:0"))
        self.assertEqual(doc["runs"][0]["status"], "ok")
        self.assertIn("1 connection(s) to the rank collector were refused", err)

    def test_crashing_rank(self):
        """Rank 1 dies of SIGSEGV: the run fails, the result says which rank and how, the
        other rank is stopped by the launcher long before its 30 s, nothing is lost."""
        start = time.monotonic()
        doc, out, _ = self.measure(*mpirun(2, MLBENCH, "rank-exec", "--", sys.executable,
                                           RANK_PROG, "crash", "1"),
                                   run_opts=("--ranks",), status=1)
        self.assertLess(time.monotonic() - start, 25)
        run = doc["runs"][0]
        self.assertEqual(run["status"], "failed")
        exits = {r["rank"]: r.get("exit") for r in run["ranks"]}
        self.assertEqual(exits[1], {"signal": 11, "signal_name": "SIGSEGV"})
        self.assertNotEqual(exits[0], {"code": 0})
        warning = [w for w in doc["warnings"] if w["code"] == "rank_failed"]
        self.assertEqual(len(warning), 1, doc["warnings"])
        self.assertIn("rank 1 (pid", warning[0]["message"])
        self.assertIn("killed by SIGSEGV", warning[0]["message"])
        self.assertIn("rank 1 (pid", out)
        self.assertEqual(len(os.listdir(os.path.join(self.store, "runs"))), 1)


def netns_hosts():
    """Two test hosts on this machine (network namespaces joined by a veth pair, loopback-range
    addresses only): returns (names of the namespaces, None), or (None, why not)."""
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("unshare"):
        return None, "two test hosts need root, ip (iproute2) and unshare (util-linux)"
    tag = str(os.getpid())
    ns = (f"mlbA{tag}", f"mlbB{tag}")
    veth = (f"mlb{tag}a", f"mlb{tag}b")
    addr = ("127.20.0.1", "127.20.0.2")
    steps = [["ip", "netns", "add", ns[0]], ["ip", "netns", "add", ns[1]],
             ["ip", "link", "add", veth[0], "type", "veth", "peer", "name", veth[1]]]
    for i in (0, 1):
        x = ["ip", "netns", "exec", ns[i]]
        steps += [["ip", "link", "set", veth[i], "netns", ns[i]],
                  x + ["ip", "link", "set", "lo", "up"],
                  # 127/8 is the loopback's: let it cross the veth, and route the other end
                  x + ["sysctl", "-qw", f"net.ipv4.conf.{veth[i]}.route_localnet=1",
                       "net.ipv4.conf.all.route_localnet=1"],
                  x + ["ip", "addr", "add", addr[i] + "/32", "dev", veth[i]],
                  x + ["ip", "link", "set", veth[i], "up"],
                  x + ["ip", "route", "add", addr[1 - i] + "/32", "dev", veth[i], "table",
                       "local"],
                  x + ["ip", "route", "add", addr[1 - i] + "/32", "dev", veth[i]]]
    for step in steps:
        p = subprocess.run(step, capture_output=True, text=True)
        if p.returncode != 0:
            netns_remove(ns)
            return None, f"this machine does not allow test hosts: {' '.join(step)}: {p.stderr}"
    return ns, None


def netns_remove(ns):
    for name in ns:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


# What Open MPI's mpirun runs in place of ssh to start its daemon on host B (plm_rsh_agent):
# "AGENT HOST COMMAND..." runs COMMAND as ssh would there: in B's network namespace, with B's
# host name, its own files where the run's marker socket lives (a tmpfs over TMPDIR), a
# CLOCK_MONOTONIC 5000 s ahead (a time namespace) and a fresh environment (what is not passed
# on with mpirun -x does not arrive).
AGENT = """#!/bin/sh
host=$1; shift
[ "$host" = 127.20.0.2 ] || { echo "agent: no test host $host" >&2; exit 1; }
export AGENT_CMD="$*"
exec ip netns exec %s unshare --uts --mount --time --monotonic 5000 --fork \\
    sh -c 'hostname mlbench-host-b && mount -t tmpfs none "$TMPDIR" &&
           exec env -i PATH="$PATH" HOME="$HOME" sh -c "$AGENT_CMD"'
"""


class AcrossHostsTest(RankTest):
    """A job across two hosts started by one `mpirun -H A:2,B:2`: two network namespaces on this
    machine joined by a veth pair (loopback-range addresses), mlbench and mpirun on host A, and
    Open MPI's daemon started on host B through a stand-in for ssh (AGENT) that gives B its own
    network, host name, files, clock and environment. Only the ssh hop is simulated."""

    @classmethod
    def setUpClass(cls):
        if NO_MPI:
            raise unittest.SkipTest(NO_MPI)
        cls.ns, why = netns_hosts()
        if why:
            raise unittest.SkipTest(why)

    @classmethod
    def tearDownClass(cls):
        netns_remove(cls.ns)

    def job(self, collector=("-x", "MLBENCH_RANK_COLLECTOR"), runs=2, status=0):
        agent = os.path.join(self.tmp.name, "agent.sh")
        with open(agent, "w") as f:
            f.write(AGENT % self.ns[1])
        os.chmod(agent, 0o755)
        tmp = os.path.join(self.tmp.name, "t")
        os.makedirs(tmp, exist_ok=True)
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        launch = [MPIRUN, *root, "--oversubscribe", "--mca", "plm_rsh_agent", agent,
                  "--mca", "oob_tcp_if_include", "127.20.0.0/16",
                  "-H", "127.20.0.1:2,127.20.0.2:2", "-n", "4", *collector, "-x", "PYTHONPATH",
                  MLBENCH, "rank-exec", "--", sys.executable, RANK_PROG, "rank", "3"]
        out = os.path.join(self.tmp.name, "r.json")
        p = subprocess.run(["ip", "netns", "exec", self.ns[0], MLBENCH, "run", "-r", str(runs),
                            "--store", self.store, "-o", out, "--ranks-listen", "127.20.0.1:0",
                            "--show-output", "--", *launch],
                           capture_output=True, text=True, timeout=300,
                           env=self.env({"TMPDIR": tmp}))
        self.assertEqual(p.returncode, status, p.stdout + p.stderr)
        with open(out) as f:
            return json.load(f), p.stdout, p.stderr

    def test_two_hosts(self):
        """Every rank's events reach one result: ranks 2 and 3 through the collector over the
        veth, their pids kept apart from host A's, their clock moved onto the run's; each rank
        knows its host; the straggler on host B is named with it."""
        doc, out, err = self.job()
        here = os.uname().nodename
        for run in doc["runs"]:
            self.assertEqual(run["status"], "ok")
            ranks = {r["rank"]: r for r in run["ranks"]}
            self.assertEqual(sorted(ranks), [0, 1, 2, 3])
            for r, info in ranks.items():
                self.assertEqual(info["host"], "mlbench-host-b" if r >= 2 else here)
                self.assertEqual(info.get("exit"), {"code": 0})
                stages = {s["name"]: s for s in info["stages"]}
                self.assertEqual(stages["compute"]["count"], 4, (r, stages))
                # 4 x 20 ms, 4 x 60 ms on rank 3: a clock 5000 s off would not give this
                self.assertGreater(stages["compute"]["active_ns"], 4 * (55e6 if r == 3 else 18e6))
                self.assertLess(stages["compute"]["active_ns"], 4 * 0.5e9)
            for st in run["stages"]:  # every span within the run, host B's too
                self.assertGreaterEqual(st["first_begin_ns"], 0, st["name"])
                self.assertLessEqual(st["last_end_ns"], run["wall_ns"], st["name"])
            self.assertEqual(run["markers"]["malformed"], 0, run["markers"])
            # host B's samples, taken there by one of its rank-execs, on the run's clock
            self.assertEqual([h["host"] for h in run["hosts"]], ["mlbench-host-b"])
            host = run["hosts"][0]
            self.assertEqual(host["ranks"], [2, 3])
            times = host["samples"]["t_ns"]
            self.assertGreater(len(times), 3)
            self.assertTrue(all(-1e9 < t < run["wall_ns"] + 1e9 for t in times), times)
            res = {m["metric"]: m for m in host["resources"] if not m["labels"]}
            self.assertGreater(res["process_cpu_seconds_total"]["mean"], 0)
            self.assertGreater(res["process_resident_bytes"]["peak"], 1 << 20)
            self.assertIn("system_cpu_busy_ratio", res)
            self.assertEqual([s["name"] for s in host["stages"]],
                             [s["name"] for s in run["stages"]])
        summary = doc["summary"]["ranks"]
        self.assertEqual(summary["hosts"], {here: [0, 1], "mlbench-host-b": [2, 3]})
        self.assertEqual(self.rank_stage(summary, "compute")["slowest_rank"], 3)
        straggler = [f for f in doc["analysis"]["findings"] if f["rule"] == "straggler"]
        self.assertTrue(straggler, doc["analysis"]["findings"])
        self.assertIn("rank 3 runs on mlbench-host-b", straggler[0]["evidence"])
        self.assertIn(f"hosts: {here} (ranks 0 1); mlbench-host-b (ranks 2 3)", out)
        self.assertRegex(out, r"\n  mlbench-host-b \(ranks 2 3\): its ranks [0-9.]+ cores busy, "
                              r"the host [0-9.]+ of [0-9]+ cores, peak RSS")
        # the report has them too: the stages across ranks, the hosts, host B's resources
        p = subprocess.run([MLBENCH, "report", "-f", "markdown", "--store", self.store,
                            doc["id"]], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("## Ranks", p.stdout)
        self.assertRegex(p.stdout, r"\| compute \| [0-9.]+ ms \| [0-9.]+ ms \| [0-9.]+ ms \| "
                                   r"[0-9.]+ \| 3 \(\+[0-9]+ % on the median\) \|")
        self.assertIn("- mlbench-host-b: ranks 2, 3", p.stdout)
        self.assertRegex(p.stdout, r"\| mlbench-host-b \| 2 3 \| [0-9.]+ \| [0-9.]+ of [0-9]+ \| ")
        self.assertNotIn("unmeasured", err)

    def test_collector_unreachable(self):
        """Host B without the collector's address (not passed on with -x), or with a port
        where nothing listens: its ranks run unmeasured with a warning saying what to do, host
        A's are measured, the job succeeds and the result says ranks are missing."""
        # without the variable, rank-exec on B cannot know it is measured: the result says it
        cases = ((), None), (("-x", "MLBENCH_RANK_COLLECTOR=127.20.0.1:1#" + "0" * 32),
                             "cannot reach the collector at 127.20.0.1:1: Connection refused: "
                             "running rank 2 unmeasured")
        for collector, message in cases:
            with self.subTest(collector=collector):
                doc, out, err = self.job(collector=collector, runs=1)
                self.assertEqual([r["rank"] for r in doc["runs"][0]["ranks"]], [0, 1])
                if message:
                    self.assertIn(message, err)
                self.assertEqual(doc["runs"][0]["status"], "ok")
                missing = [w for w in doc["warnings"] if w["code"] == "ranks_missing"]
                self.assertEqual(len(missing), 1, doc["warnings"])
                self.assertIn("the job has 4 ranks (WORLD_SIZE) but only 2 reported",
                              missing[0]["message"])
                self.assertIn("mpirun -x MLBENCH_RANK_COLLECTOR", missing[0]["message"])
                self.assertNotIn("hosts", doc["runs"][0])

    def test_bad_listen_address(self):
        for value, message in (("nocolon", "bad listen address 'nocolon'"),
                               ("127.0.0.1:99999", "port '99999' is not a number from 0"),
                               ("", "empty listen address")):
            with self.subTest(value=value):
                p = subprocess.run([MLBENCH, "run", "--store", self.store, "--ranks-listen",
                                    value, "--", "mpirun", "true"], capture_output=True,
                                   text=True, env=self.env(), timeout=60)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.store, "runs")))
        # --ranks-listen is a multi-rank job: the command must be a launcher
        p = subprocess.run([MLBENCH, "run", "--store", self.store, "--ranks-listen",
                            "127.0.0.1:0", "--", "true"], capture_output=True, text=True,
                           env=self.env(), timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not a launcher of ranks", p.stderr)


if __name__ == "__main__":
    unittest.main()
