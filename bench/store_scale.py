"""store_scale.py: the result store at 10 000 results, on both backends, side by side in one run.
Times `mlbench history` and `mlbench compare latest~1 latest` (median of REPS calls each) over
a directory store (SQLite index) and a shared PostgreSQL store (a private server from Debian's
postgresql, Unix socket, started here like the tests do), and writes per second with 8
concurrent writers (`mlbench store push`, one transaction per result). Prints one line per
figure; bench/store-scale.sh runs it. Usage: python3 bench/store_scale.py MLBENCH [N] [REPS]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from pg_server import PgServer  # noqa: E402

MLBENCH = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
REPS = int(sys.argv[3]) if len(sys.argv) > 3 else 5
WRITERS = 8


def mlbench(*args, cwd):
    t = time.monotonic()
    p = subprocess.run([MLBENCH] + list(args), capture_output=True, text=True, cwd=cwd)
    if p.returncode not in (0, 1):
        sys.exit(f"mlbench {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return time.monotonic() - t


def results(tmp, template, n, name, first=0):
    """A directory store of n results made from template (ids and times in order)."""
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "runs"))
    for i in range(first, first + n):
        doc = dict(template)
        s = 1000000 + i  # seconds after a start: ids sort as time
        doc["id"] = "2030%02d%02dT%02d%02d%02d-%06x" % (1 + s // 2592000 % 12, 1 + s // 86400 % 28,
                                                       s // 3600 % 24, s // 60 % 60, s % 60, i)
        doc["created"] = "2030-%s-%sT%s:%s:%s.000Z" % (doc["id"][4:6], doc["id"][6:8],
                                                      doc["id"][9:11], doc["id"][11:13],
                                                      doc["id"][13:15])
        doc["label"] = "series-%d" % (i % 20)
        with open(os.path.join(d, "runs", doc["id"] + ".json"), "w") as f:
            json.dump(doc, f)
    return d


def timed(label, args, cwd):
    ts = [mlbench(*args, cwd=cwd) for _ in range(REPS)]
    print(f"{label}: median {statistics.median(ts) * 1000:.1f} ms "
          f"(min {min(ts) * 1000:.1f}, max {max(ts) * 1000:.1f}, {REPS} calls)")
    return statistics.median(ts)


def writers(target, dirs, cwd):
    t = time.monotonic()
    procs = [subprocess.Popen([MLBENCH, "store", "push", target, "--from", d], cwd=cwd,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for d in dirs]
    for p in procs:
        _, err = p.communicate()
        if p.returncode:
            sys.exit("store push: " + err)
    return time.monotonic() - t


def main():
    server = PgServer()
    why = server.missing()
    if why:
        sys.exit("store_scale: " + why)
    with tempfile.TemporaryDirectory(prefix="mlbench-store-scale-") as tmp:
        scratch = os.path.join(tmp, "scratch")
        os.mkdir(scratch)
        p = subprocess.run([MLBENCH, "run", "-q", "--json", "-r", "3", "--store", scratch, "--",
                            "sleep", "0.001"], capture_output=True, text=True)
        rid = json.loads(p.stdout)["id"]
        with open(os.path.join(scratch, "runs", rid + ".json")) as f:
            template = json.load(f)
        big = results(tmp, template, N, "dir")
        server.start()
        try:
            pg = server.uri("mlbench")
            print(f"{N} results; {WRITERS} writers; {os.cpu_count()} CPUs; "
                  f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}")
            mlbench("history", "--store", big, cwd=tmp)  # builds the index once
            t = time.monotonic()
            mlbench("store", "push", pg, "--from", big, cwd=tmp)
            print(f"push {N} results into PostgreSQL: {time.monotonic() - t:.1f} s "
                  f"({N / (time.monotonic() - t):.0f} results/s, one process)")
            h_sq = timed("history, SQLite", ["history", "--store", big], tmp)
            h_pg = timed("history, PostgreSQL", ["history", "--store", pg], tmp)
            c_sq = timed("compare latest~1 latest, SQLite",
                         ["compare", "--store", big, "latest~1", "latest"], tmp)
            c_pg = timed("compare latest~1 latest, PostgreSQL",
                         ["compare", "--store", pg, "latest~1", "latest"], tmp)
            print(f"ratio PostgreSQL / SQLite: history {h_pg / h_sq:.2f}, compare {c_pg / c_sq:.2f}")
            per = 250
            dirs = [results(tmp, template, per, "w%d" % k, first=N + k * per)
                    for k in range(WRITERS)]
            server.createdb("writers")
            t_pg = writers(server.uri("writers"), dirs, tmp)
            os.mkdir(os.path.join(tmp, "sq"))
            t_sq = writers(os.path.join(tmp, "sq"), dirs, tmp)
            total = per * WRITERS
            print(f"{WRITERS} concurrent writers x {per} results: PostgreSQL {total / t_pg:.0f} "
                  f"results/s, SQLite {total / t_sq:.0f} results/s (ratio {t_sq / t_pg:.2f})")
        finally:
            server.cleanup()


main()
