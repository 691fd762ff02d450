"""Test workload of test_ranks.py: a fake multi-rank job without MPI, or one rank of a real one.

  rank_prog.py job N SLOW   starts N copies of itself as ranks (RANK, WORLD_SIZE, as torchrun
                            sets them) and waits for them; rank SLOW computes 3x as long
  rank_prog.py rank SLOW    one rank: 4 steps of compute (20 ms, 60 ms on rank SLOW) then
                            sync, which waits until the slowest rank's compute would be done
                            (as a collective waits for the last rank); a forked worker of each
                            rank marks load (its rank is inherited)
  rank_prog.py crash R      under mpirun: rank R marks train and kills itself with SIGSEGV,
                            the others mark train and sleep until they are stopped
"""
import multiprocessing
import os
import signal
import subprocess
import sys
import time

from mlbench_marker import instant, stage

STEPS = 4
FAST_S, SLOW_S = 0.02, 0.06


def loader(_):
    with stage("load"):
        time.sleep(0.01)
    return 0


def rank(slow):
    me = int(os.environ.get("RANK") or os.environ["OMPI_COMM_WORLD_RANK"])
    instant("ready")  # the thread's ring is made now, not inside the first timed step
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pool.map(loader, [0])
    for _ in range(STEPS):
        start = time.monotonic()
        with stage("compute"):
            time.sleep(SLOW_S if me == slow else FAST_S)
        with stage("sync"):  # all ranks leave together, when the slow one is done
            time.sleep(max(0.0, SLOW_S - (time.monotonic() - start)) + 0.002)


def job(n, slow):
    env = dict(os.environ, WORLD_SIZE=str(n))
    procs = [subprocess.Popen([sys.executable, __file__, "rank", str(slow)],
                              env=dict(env, RANK=str(r))) for r in range(n)]
    return max(p.wait() for p in procs)


def crash(victim):
    me = int(os.environ["OMPI_COMM_WORLD_RANK"])
    with stage("train"):
        if me == victim:
            time.sleep(0.2)
            os.kill(os.getpid(), signal.SIGSEGV)
        time.sleep(30)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "job":
        sys.exit(job(int(sys.argv[2]), int(sys.argv[3])))
    if mode == "rank":
        rank(int(sys.argv[2]))
    elif mode == "crash":
        crash(int(sys.argv[2]))
