"""A test HTTP/1.1 server of known behaviour for `mlbench load`'s tests (test_load.py).

    python3 fake_http.py [--delay-ms D] [--capacity K] [--stall-at-s T --stall-s S]
                         [--error-every N [--error-status C]] [--close-every N]
                         [--hang-every N] [--counts FILE] [--record FILE] [--port P]

Prints its port on the first line of stdout (--port, default 0: any free one), then serves
keep-alive connections on 127.0.0.1,
one thread each, answering every request (any method, its body read and ignored) with
"200 ok" after:
  --delay-ms D      D milliseconds, every request on its own (concurrent requests overlap);
  --capacity K      a single first-come first-served server of K requests/s: each request is
                    answered at max(its arrival, the previous answer) + 1/K, so no more than
                    K requests/s come out however many arrive;
  --stall-at-s T    once, T seconds after the first request: nothing is answered for S seconds
                    (every request in flight or arriving waits for the stall's end);
  --error-every N   every Nth request is answered with status C (default 503) instead;
  --close-every N   every Nth request gets no answer: its connection is closed (a reset);
  --hang-every N    every Nth request gets no answer for 60 s (the client's timeout).
Requests are numbered from 1 in arrival order; one number takes the first rule that matches
(close, hang, error). With --counts FILE, it writes {"requests", "errors", "closes", "hangs",
"max_in_flight"} (the most requests it held at once) to FILE as JSON on SIGTERM and exits 0. With --record FILE, each request is appended to FILE as
a JSON line {"method", "path", "headers": {name: value}, "body", "body_base64"} as it arrives
("body" as text, bytes that are not UTF-8 replaced; "body_base64" every byte)."""
import argparse
import base64
import http.server
import json
import os
import signal
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--capacity", type=float, default=0)
    ap.add_argument("--stall-at-s", type=float, default=-1)
    ap.add_argument("--stall-s", type=float, default=1)
    ap.add_argument("--error-every", type=int, default=0)
    ap.add_argument("--error-status", type=int, default=503)
    ap.add_argument("--close-every", type=int, default=0)
    ap.add_argument("--hang-every", type=int, default=0)
    ap.add_argument("--counts")
    ap.add_argument("--record")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()

    lock = threading.Lock()
    record = open(a.record, "a") if a.record else None
    state = {"n": 0, "first": None, "next_free": 0.0, "requests": 0, "errors": 0,
             "closes": 0, "hangs": 0, "stall_until": None, "in_flight": 0,
             "max_in_flight": 0}

    def every(n, i):
        return n > 0 and i % n == 0

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_one(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            now = time.monotonic()
            with lock:
                if record:
                    record.write(json.dumps({
                        "method": self.command, "path": self.path,
                        "headers": dict(self.headers.items()),
                        "body": body.decode("utf-8", "replace"),
                        "body_base64": base64.b64encode(body).decode()}) + "\n")
                    record.flush()
                state["n"] += 1
                i = state["n"]
                state["requests"] += 1
                state["in_flight"] += 1
                state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
                if state["first"] is None:
                    state["first"] = now
                if (a.stall_at_s >= 0 and state["stall_until"] is None
                        and now - state["first"] >= a.stall_at_s):
                    state["stall_until"] = now + a.stall_s
                due = now + a.delay_ms / 1000
                if a.capacity > 0:
                    due = max(now, state["next_free"]) + 1 / a.capacity
                    state["next_free"] = due
                stall = state["stall_until"]
                if stall is not None and now < stall:
                    due = max(due, stall)
                    if a.capacity > 0:
                        state["next_free"] = max(state["next_free"], stall)
                kind = ("close" if every(a.close_every, i) else
                        "hang" if every(a.hang_every, i) else
                        "error" if every(a.error_every, i) else "ok")
                if kind != "ok":
                    state[kind + "s"] += 1
            try:
                self.answer(kind, due)
            finally:
                with lock:
                    state["in_flight"] -= 1

        def answer(self, kind, due):
            if kind == "close":
                self.close_connection = True
                return
            if kind == "hang":
                time.sleep(60)
                self.close_connection = True
                return
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            status, body = (a.error_status, b"busy\n") if kind == "error" else (200, b"ok\n")
            # the whole answer in one write: no delayed-ACK stall between header and body
            self.wfile.write(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body))

        do_GET = do_POST = do_PUT = handle_one

        def log_message(self, *args):
            pass

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256

    srv = Server(("127.0.0.1", a.port), Handler)

    def stop(*_):
        if a.counts:
            with lock:
                c = {k: state[k] for k in ("requests", "errors", "closes", "hangs", "max_in_flight")}
            with open(a.counts + ".tmp", "w") as f:
                json.dump(c, f)
            os.replace(a.counts + ".tmp", a.counts)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
