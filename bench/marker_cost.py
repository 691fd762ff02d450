"""marker_cost.py: what one marker event costs a Python workload (bench/marker-cost.sh runs it).

With MLBENCH_MARKER_SOCKET set (under `mlbench run`), times 100 000 begin()/end() pairs and
prints `py_enabled_ns_per_event N`. With --self-receive, binds its own socket first and drains
it in a forked process (no mlbench needed). With the variable unset, times 10^6 begin() calls
and prints `py_disabled_ns_per_call N`.

Usage: python3 bench/marker_cost.py [--self-receive] [--pairs N] [--calls N]
"""

import argparse
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mlbench_marker as m  # noqa: E402

WARMUP_PAIRS = 1000


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 10 ** 9:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer from 1 "
                                         "to 1000000000")
    return value


def start_receiver(expected):
    """Binds a socket, exports its path and forks a process that drains it until the final
    instant event; returns (pid, folder). The child exits 0 when it counted `expected`."""
    folder = tempfile.mkdtemp(prefix="mlbench-marker-cost-")
    path = os.path.join(folder, "marker.sock")
    rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    rx.bind(path)
    pid = os.fork()
    if pid == 0:
        count = 0
        while True:
            data = rx.recv(8192)
            if data.startswith(b"I "):
                os._exit(0 if count == expected else 1)
            count += 1
    rx.close()
    os.environ["MLBENCH_MARKER_SOCKET"] = path
    return pid, folder


def main():
    parser = argparse.ArgumentParser(description="Cost of one mlbench marker event (Python).")
    parser.add_argument("--self-receive", action="store_true",
                        help="bind a socket and drain it in a forked process")
    parser.add_argument("--pairs", type=positive, default=100000)
    parser.add_argument("--calls", type=positive, default=1000000)
    args = parser.parse_args()

    receiver = None
    if args.self_receive:
        receiver = start_receiver(2 * (args.pairs + WARMUP_PAIRS))

    begin, end = m.begin, m.end
    if not m.enabled():
        if os.environ.get("MLBENCH_MARKER_SOCKET"):
            return 1  # set but unreachable: the client said why
        t0 = time.perf_counter_ns()
        for _ in range(args.calls):
            begin("step")
        t1 = time.perf_counter_ns()
        print(f"py_disabled_ns_per_call {(t1 - t0) / args.calls:.1f}")
        return 0

    for _ in range(WARMUP_PAIRS):
        begin("warmup")
        end("warmup")
    t0 = time.perf_counter_ns()
    for _ in range(args.pairs):
        begin("step")
        end("step")
    t1 = time.perf_counter_ns()
    print(f"py_enabled_ns_per_event {(t1 - t0) / (2 * args.pairs):.0f}", flush=True)

    if receiver is not None:
        m.instant("marker_cost_done")
        pid, folder = receiver
        _, status = os.waitpid(pid, 0)
        os.unlink(os.path.join(folder, "marker.sock"))
        os.rmdir(folder)
        if status != 0:
            print("marker_cost.py: the receiver did not count every event", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
