"""Test workload for the integration tests: stages with known sleeps through the Python
marker client, including from two forked worker processes (like DataLoader workers)."""
import multiprocessing
import sys
import time

from mlbench_marker import counter, meta, stage


@stage("load")
def load():
    time.sleep(0.05)


def worker(_):
    with stage("decode"):
        time.sleep(0.03)
    return 1


def main():
    meta("framework", "none")
    load()
    with stage("train"):
        time.sleep(0.1)
        counter("loss", 0.5)
    if len(sys.argv) > 1 and sys.argv[1] == "workers":
        with multiprocessing.get_context("fork").Pool(2) as pool:
            pool.map(worker, range(2), chunksize=1)


if __name__ == "__main__":
    main()
