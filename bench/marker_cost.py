"""marker_cost.py: what one marker event costs a Python workload (bench/marker-cost.sh runs it).

With MLBENCH_MARKER_SOCKET set (under `mlbench run`), times 100 000 begin()/end() pairs and
prints `py_enabled_ns_per_event N`, then 100 000 `with stage("step"):` blocks and prints
`py_stage_ns_per_event N`, over whichever transport the environment offers (`py_transport ring`
or `py_transport datagram`). With the variable unset, times 10^6 begin() calls and prints
`py_disabled_ns_per_call N`.

With --self-receive (no mlbench needed), the benchmark plays mlbench's part: it binds its own
socket and drains it in a forked process, which also maps the rings handed over with
SCM_RIGHTS, reads their records and advances their tails, as mlbench does. It times a fresh
interpreter twice, with rings offered (MLBENCH_MARKER_RING=1) and without, and prints
py_enabled_ns_per_event and py_stage_ns_per_event of the first (what a workload gets when
mlbench offers rings), then the figures per transport: py_ring_ns_per_event and
py_ring_stage_ns_per_event (only when the client did write rings: x86-64),
py_datagram_ns_per_event and py_datagram_stage_ns_per_event. The receiver checks that it got
every B and E event: a record dropped for a full ring fails the run.

Usage: python3 bench/marker_cost.py [--self-receive] [--pairs N] [--calls N]
"""

import argparse
import array
import mmap
import os
import select
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import mlbench_marker as m  # noqa: E402

WARMUP_PAIRS = 1000
RING_ENV = "MLBENCH_MARKER_RING"
# include/mlbench/marker_ring.h
HEADER_BYTES, RECORD_BYTES = 256, 32
HEAD, DROPPED, TAIL = 64 // 8, 80 // 8, 128 // 8
KIND_OFFSET = 20  # of a record: after t_ns, value and the name id
DONE = b"DONE"  # the parent to the receiver: the measured process has ended


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 10 ** 9:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer from 1 "
                                         "to 1000000000")
    return value


class Ring:
    """A ring received from a writer thread, read as mlbench does: records [tail, head), then
    tail = head."""

    def __init__(self, fd):
        size = os.fstat(fd).st_size
        self.mm = mmap.mmap(fd, size)  # shared, read/write: the reader stores tail
        self.q = memoryview(self.mm).cast("Q")
        self.cap = (size - HEADER_BYTES) // RECORD_BYTES

    def drain(self):
        """Returns the kind bytes of the records published since the last call."""
        head, tail = self.q[HEAD], self.q[TAIL]
        kinds = b""
        while tail < head:
            slot = tail % self.cap
            count = min(head - tail, self.cap - slot)
            start = HEADER_BYTES + slot * RECORD_BYTES
            kinds += self.mm[start + KIND_OFFSET:start + count * RECORD_BYTES:RECORD_BYTES]
            tail += count
        self.q[TAIL] = tail
        return kinds


def recv_fds(sock, bufsize, maxfds, flags):
    """socket.recv_fds, whose flags Python 3.11 ignores (a MSG_DONTWAIT call would block)."""
    fds = array.array("i")
    data, ancdata, _, _ = sock.recvmsg(bufsize, socket.CMSG_SPACE(maxfds * fds.itemsize), flags)
    for level, kind, cdata in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
    return data, list(fds)


def receive(rx, expected):
    """The receiver process: counts B and E events (datagrams or ring records) until the
    parent says the measured process has ended (DONE); returns the exit status, 0 when it
    counted `expected` and none was lost."""
    rings = []
    count = 0
    done = False
    while True:
        readable, _, _ = select.select([rx], [], [], 0.001)
        while readable:
            try:
                data, fds = recv_fds(rx, 8192, 4, socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            for fd in fds:
                if b" mlbench.ring " in data:
                    rings.append(Ring(fd))
                os.close(fd)
            if data[:2] in (b"B ", b"E "):  # M: rank, facts, rings, names
                count += 1
            elif data == DONE:
                done = True
        for ring in rings:  # after DONE: a last time, once the writer has ended
            kinds = ring.drain()
            count += kinds.count(b"B") + kinds.count(b"E")
        if done:
            break
    dropped = sum(ring.q[DROPPED] for ring in rings)
    if count != expected or dropped:
        print(f"marker_cost.py: the receiver counted {count} events of {expected}, "
              f"{dropped} dropped in {len(rings)} rings", file=sys.stderr)
        return 1
    return 0


def start_receiver(expected):
    """Binds a socket and forks a process that drains it until DONE; returns (pid, folder,
    path). The child exits 0 when it counted `expected`."""
    folder = tempfile.mkdtemp(prefix="mlbench-marker-cost-")
    path = os.path.join(folder, "marker.sock")
    rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    rx.bind(path)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            status = receive(rx, expected)
        finally:
            os._exit(status)
    rx.close()
    return pid, folder, path


def self_receive(args):
    """Times a fresh interpreter with rings offered and without, each with its own receiver;
    returns the exit status."""
    figures = {}
    for offer in ("ring", "datagram"):
        pid, folder, path = start_receiver(2 * (2 * args.pairs + 2 * WARMUP_PAIRS))
        env = dict(os.environ, MLBENCH_MARKER_SOCKET=path)
        env.pop(RING_ENV, None)
        if offer == "ring":
            env[RING_ENV] = "1"
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--pairs",
                               str(args.pairs)], env=env, stdout=subprocess.PIPE, text=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as tx:
            tx.sendto(DONE, path)
        _, status = os.waitpid(pid, 0)
        os.unlink(path)
        os.rmdir(folder)
        if proc.returncode != 0 or status != 0:
            print(f"marker_cost.py: the measurement with {offer}s offered failed",
                  file=sys.stderr)
            return 1
        figures[offer] = dict(line.split(None, 1) for line in proc.stdout.splitlines()
                              if line.strip())
    offered = figures["ring"]
    print(f"py_enabled_ns_per_event {offered['py_enabled_ns_per_event']}")
    print(f"py_stage_ns_per_event {offered['py_stage_ns_per_event']}")
    print(f"py_transport {offered['py_transport']}")
    for offer in ("ring", "datagram"):
        if figures[offer]["py_transport"] != offer:
            continue  # rings offered but not used (not x86-64): the datagram figure stands
        print(f"py_{offer}_ns_per_event {figures[offer]['py_enabled_ns_per_event']}")
        print(f"py_{offer}_stage_ns_per_event {figures[offer]['py_stage_ns_per_event']}")
    return 0


def main():
    parser = argparse.ArgumentParser(description="Cost of one mlbench marker event (Python).")
    parser.add_argument("--self-receive", action="store_true",
                        help="act as mlbench: bind a socket and drain it (and the rings it "
                             "receives) in a forked process; time rings and datagrams")
    parser.add_argument("--pairs", type=positive, default=100000)
    parser.add_argument("--calls", type=positive, default=1000000)
    args = parser.parse_args()

    if args.self_receive:
        return self_receive(args)

    begin, end, stage = m.begin, m.end, m.stage
    if not m.enabled():
        if os.environ.get("MLBENCH_MARKER_SOCKET"):
            return 1  # set but unreachable: the client said why
        t0 = time.perf_counter_ns()
        for _ in range(args.calls):
            begin("step")
        t1 = time.perf_counter_ns()
        print(f"py_disabled_ns_per_call {(t1 - t0) / args.calls:.1f}")
        return 0

    for _ in range(WARMUP_PAIRS):  # connects, opens the ring, announces the names
        begin("step")
        end("step")
        with stage("step"):
            pass
    t0 = time.perf_counter_ns()
    for _ in range(args.pairs):
        begin("step")
        end("step")
    t1 = time.perf_counter_ns()
    for _ in range(args.pairs):
        with stage("step"):
            pass
    t2 = time.perf_counter_ns()
    ring = getattr(getattr(m, "_tls", None), "ring", None)  # (no _tls: a client without rings)
    transport = "datagram" if ring is None else "ring"
    print(f"py_enabled_ns_per_event {(t1 - t0) / (2 * args.pairs):.0f}")
    print(f"py_stage_ns_per_event {(t2 - t1) / (2 * args.pairs):.0f}")
    print(f"py_transport {transport}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
