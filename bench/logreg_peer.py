#!/usr/bin/python3
"""The scikit-learn peer of `mlbench-workload logreg`: LogisticRegression(solver="lbfgs",
max_iter=500) trained on the .npy files the workload wrote with --save-data PREFIX, on the same
number of threads. Prints "key value" lines (sklearn_train_s, sklearn_iterations,
sklearn_test_accuracy, ...) for bench/logreg-vs-sklearn.sh.

Threads: scikit-learn 1.2's lbfgs solver spends its time in NumPy's X @ w and X.T @ r (BLAS
gemv, multithreaded by OpenBLAS), a single-threaded Cython loss and scipy's single-threaded
L-BFGS-B. threadpoolctl limits the BLAS and OpenMP pools to --threads; the environment
variables OPENBLAS_NUM_THREADS and OMP_NUM_THREADS are set too, before NumPy loads, for a
BLAS that threadpoolctl does not see.

Data type: the workload saves X as float32; the lbfgs solver converts X to float64 inside fit
(check_array). The conversion is done here before the timer starts, as in the reference peer
(make_classification returns float64), so only the training is timed.

Usage: logreg_peer.py PREFIX [--threads N] [--max-iter N] [--tol X]
(needs a Python with scikit-learn, e.g. Debian's /usr/bin/python3)
"""
import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("prefix", help="--save-data PREFIX of mlbench-workload logreg")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--max-iter", type=int, default=500)
    ap.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    if args.threads < 1:
        ap.error(f"--threads {args.threads} must be 1 or more")

    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    try:
        import numpy as np
        from sklearn.linear_model import LogisticRegression
        from threadpoolctl import threadpool_info, threadpool_limits
    except ImportError as e:
        sys.exit(f"logreg_peer.py: {e}: run it with a Python that has scikit-learn "
                 "(Debian: /usr/bin/python3, package python3-sklearn)")
    import sklearn

    try:
        X_train = np.load(args.prefix + ".X_train.npy").astype(np.float64)
        y_train = np.load(args.prefix + ".y_train.npy")
        X_test = np.load(args.prefix + ".X_test.npy").astype(np.float64)
        y_test = np.load(args.prefix + ".y_test.npy")
    except OSError as e:
        sys.exit(f"logreg_peer.py: {e}: write the data first "
                 f"(mlbench-workload logreg --save-data {args.prefix})")

    with threadpool_limits(limits=args.threads):
        pools = ",".join(f"{p['internal_api']}:{p['num_threads']}" for p in threadpool_info())
        model = LogisticRegression(solver="lbfgs", max_iter=args.max_iter, tol=args.tol)
        t = time.perf_counter()
        model.fit(X_train, y_train)
        t = time.perf_counter() - t
        test_acc = model.score(X_test, y_test)
        train_acc = model.score(X_train, y_train)

    # scikit-learn's objective at the solution: sum of log-losses + 0.5 / C * ||w||^2.
    w, b = model.coef_[0], model.intercept_[0]
    z = X_train @ w + b
    loss = float(np.sum(np.logaddexp(0.0, z) - y_train * z) + 0.5 / model.C * (w @ w))

    print(f"sklearn_version {sklearn.__version__}")
    print(f"sklearn_threads {args.threads}")
    print(f"sklearn_pools {pools or 'none-found'}")
    print(f"sklearn_train_s {t:.6f}")
    print(f"sklearn_iterations {int(model.n_iter_[0])}")
    print(f"sklearn_loss {loss:.6f}")
    print(f"sklearn_test_accuracy {test_acc:.6f}")
    print(f"sklearn_train_accuracy {train_acc:.6f}")


if __name__ == "__main__":
    main()
