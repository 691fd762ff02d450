"""Test workload for the integration tests: stages with known sleeps through the Python
marker client, including from two forked worker processes (like DataLoader workers).
Modes: (none), `workers` (workers decode after train), `pipeline` (workers decode while the
main thread is in train > data_wait, as DataLoader workers do, then step counts images)."""
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


PIPELINE_STEPS = 25


def pipeline():
    with multiprocessing.get_context("fork").Pool(2) as pool:
        with stage("train"):
            for _ in range(PIPELINE_STEPS):
                with stage("data_wait"):
                    pool.map(worker_short, range(2), chunksize=1)
                with stage("step"):
                    time.sleep(0.005)
                    counter("images", 32)


def worker_short(_):
    with stage("decode"):
        time.sleep(0.002)
    return 1


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "pipeline":
        pipeline()
        return
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
