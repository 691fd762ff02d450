"""End-to-end tests of `mlbench-workload serve`, the reference inference server
(docs/workloads.md, "serve"): started on port 0, its listening line, health, metadata and
inference over the KServe v2 JSON protocol; its answers equal a forward pass of the same weights
computed here with numpy from the model file that `imgclf --save-model` wrote (Fashion-MNIST:
above chance on real test images; synthetic RGB: the NCHW-to-NHWC path); every kind of bad
request answered 4xx with a JSON error; clients that go away mid-request or mid-answer; many
clients at once, each getting its own answer out of shared batches; its markers; bad options
and bad model files (exit 2); SIGTERM (exit 0, promptly).

Environment (set by ctest): WORKLOAD (mlbench-workload). Every wait is bounded; every server
started here is killed in tearDown if still running."""
import gzip
import http.client
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest
import zlib

import numpy as np

WORKLOAD = os.environ.get("WORKLOAD", "build/mlbench-workload")
FMNIST = os.environ.get("MLBENCH_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
MEAN, STD = 0.2860, 0.3530  # imgclf's normalisation of Fashion-MNIST (preprocess.c)
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10  # SIGTERM to exit: "quickly", generous for a busy 2-core machine

_tmp = None
MODELS = {}  # name -> model file, trained once for the module


def setUpModule():
    global _tmp
    _tmp = tempfile.TemporaryDirectory(prefix="mlbench-serve-test-")


def tearDownModule():
    _tmp.cleanup()


def train_model(name, *data_args):
    """Trains imgclf briefly with --save-model; returns the model file (cached)."""
    if name in MODELS:
        return MODELS[name]
    path = os.path.join(_tmp.name, name + ".mlbcnn")
    p = subprocess.run([WORKLOAD, "imgclf", *data_args, "--epochs", "1", "--threads", "2",
                        "--quiet", "--save-model", path], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert "saved the model" in p.stdout, p.stdout
    MODELS[name] = path
    return path


def read_model(path):
    """The model file (cnn_file.h): shape (H, W, C, classes) and the fp32 parameters."""
    with open(path, "rb") as f:
        data = f.read()
    magic, version, h, w, c, k, n = struct.unpack_from("<8sI4IQ", data)
    assert magic == b"MLBCNN\x1a\n" and version == 1, (magic, version)
    assert len(data) == 40 + 4 * n
    assert struct.unpack_from("<I", data, len(data) - 4)[0] == zlib.crc32(data[:-4])
    return (h, w, c, k), np.frombuffer(data, "<f4", n, 36).astype(np.float64)


def forward(shape, params, x_nhwc):
    """The CNN's forward pass (cnn.h's layers and layout) in float64: softmax probabilities."""
    h, w, c, k = shape
    at = 0

    def take(count, *dims):
        nonlocal at
        a = params[at:at + count].reshape(dims)
        at += count
        return a

    w1, b1 = take(9 * c * 32, 3, 3, c, 32), take(32, 32)
    w2, b2 = take(9 * 32 * 64, 3, 3, 32, 64), take(64, 64)
    d = (h // 4) * (w // 4) * 64
    w3, b3 = take(d * 128, d, 128), take(128, 128)
    w4, b4 = take(128 * k, 128, k), take(k, k)
    assert at == len(params)

    def conv_relu_pool(x, wt, b):
        n, hh, ww, _ = x.shape
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        y = np.zeros((n, hh, ww, wt.shape[3]))
        for ky in range(3):
            for kx in range(3):
                y += np.tensordot(xp[:, ky:ky + hh, kx:kx + ww, :], wt[ky, kx], axes=([3], [0]))
        y = np.maximum(y + b, 0)
        return y.reshape(n, hh // 2, 2, ww // 2, 2, -1).max(axis=(2, 4))

    a = conv_relu_pool(conv_relu_pool(x_nhwc.astype(np.float64), w1, b1), w2, b2)
    hid = np.maximum(a.reshape(len(a), -1) @ w3 + b3, 0)
    z = hid @ w4 + b4
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fmnist_test(count):
    """The first count Fashion-MNIST test images, normalised as imgclf does (N, 1, 28, 28), and
    their labels."""
    with gzip.open(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz")) as f:
        raw = f.read()
    with gzip.open(os.path.join(FMNIST, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, count, 8)
    pix = np.frombuffer(raw, np.uint8, count * 784, 16).reshape(count, 1, 28, 28)
    return ((pix / 255.0 - MEAN) / STD).astype(np.float32), labels


def infer_body(x_nchw, nested=False, request_id=None):
    x = np.asarray(x_nchw, np.float32)
    body = {"inputs": [{"name": "input", "shape": list(x.shape), "datatype": "FP32",
                        "data": x.tolist() if nested else x.ravel().tolist()}]}
    if request_id is not None:
        body["id"] = request_id
    return json.dumps(body)


class Server:
    """One `mlbench-workload serve` process on port 0."""

    def __init__(self, *args, env=None):
        self.proc = subprocess.Popen([WORKLOAD, "serve", "--listen", "127.0.0.1:0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env)
        line = b""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
            if not ready:
                self.kill()
                raise AssertionError("no listening line within %d s" % START_TIMEOUT_S)
            ch = os.read(self.proc.stdout.fileno(), 1)
            if not ch:
                self.proc.wait(5)
                raise AssertionError("serve exited %s before listening: %s" % (
                    self.proc.returncode, self.proc.stderr.read().decode()))
            line += ch
        m = re.fullmatch(rb"listening on http://127\.0\.0\.1:(\d+)\n", line)
        assert m, line
        self.port = int(m.group(1))

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def request(self, method, path, body=None, headers=None, conn=None):
        """(status, parsed JSON or None, headers) of one request."""
        c = conn or self.conn()
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            return r.status, json.loads(data) if data else None, dict(r.getheaders())
        finally:
            if conn is None:
                c.close()

    def infer(self, x_nchw, **kw):
        status, doc, _ = self.request("POST", "/v2/models/cnn/infer", infer_body(x_nchw, **kw))
        assert status == 200, (status, doc)
        return doc

    def stop(self):
        """SIGTERM; (exit status, seconds it took, stdout, stderr)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=STOP_TIMEOUT_S)
        return self.proc.returncode, time.monotonic() - t0, out.decode(), err.decode()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=30)
        else:
            self.proc.communicate(timeout=30)


def probabilities(doc, n, classes=10):
    out = doc["outputs"][0]
    assert out["name"] == "probabilities" and out["datatype"] == "FP32", out
    assert out["shape"] == [n, classes], out
    return np.array(out["data"], np.float64).reshape(n, classes)


class ProtocolTest(unittest.TestCase):
    """One server with random weights for the protocol's cases."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--random-weights", "--threads", "1", "--max-batch", "8",
                            "--max-body", "200000")

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()

    def test_health_and_metadata(self):
        s = self.server
        for path in ("/v2/health/ready", "/v2/health/live", "/v2/models/cnn/ready"):
            status, _, _ = s.request("GET", path)
            self.assertEqual(status, 200, path)
        status, meta, headers = s.request("GET", "/v2/models/cnn")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/json")
        self.assertEqual(meta["name"], "cnn")
        self.assertEqual(meta["platform"], "mlbench")
        self.assertEqual(meta["inputs"], [{"name": "input", "datatype": "FP32",
                                           "shape": [-1, 1, 28, 28]}])
        self.assertEqual(meta["outputs"], [{"name": "probabilities", "datatype": "FP32",
                                            "shape": [-1, 10]}])
        status, server, _ = s.request("GET", "/v2")
        self.assertEqual(status, 200)
        self.assertIn("version", server)

    def test_infer_batch_of_three(self):
        x = np.random.default_rng(1).normal(size=(3, 1, 28, 28)).astype(np.float32)
        doc = self.server.infer(x, request_id="req-7")
        self.assertEqual(doc["model_name"], "cnn")
        self.assertEqual(doc["id"], "req-7")
        p = probabilities(doc, 3)
        self.assertTrue(np.all(p >= 0))
        np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-5)
        # Nested data is the same tensor; each image alone gets the same answer as in the batch.
        np.testing.assert_allclose(probabilities(self.server.infer(x, nested=True), 3), p,
                                   atol=1e-6)
        for i in range(3):
            np.testing.assert_allclose(probabilities(self.server.infer(x[i:i + 1]), 1)[0], p[i],
                                       atol=1e-5)
        # Different images, different answers (random weights still separate them).
        self.assertGreater(np.abs(p[0] - p[1]).max(), 1e-6)

    def binary_body(self, x_nchw, size=None, extra=None):
        """The binary tensor extension's body of x and the header saying where its JSON ends."""
        x = np.ascontiguousarray(x_nchw, "<f4")
        params = {"binary_data_size": x.nbytes if size is None else size}
        tensor = {"name": "input", "shape": list(x.shape), "datatype": "FP32",
                  "parameters": params, **(extra or {})}
        head = json.dumps({"inputs": [tensor]}).encode()
        return head + x.tobytes(), {"Inference-Header-Content-Length": str(len(head)),
                                    "Content-Type": "application/octet-stream"}

    def test_binary_tensor_data(self):
        """KServe v2's binary tensor extension (Triton's): the same images as binary FP32 after
        a JSON header get the same probabilities as in JSON; bad sizes get a 400 that says
        which size is wrong."""
        infer = "/v2/models/cnn/infer"
        x = np.random.default_rng(3).normal(size=(2, 1, 28, 28)).astype(np.float32)
        body, headers = self.binary_body(x)
        status, doc, _ = self.server.request("POST", infer, body, headers)
        self.assertEqual(status, 200, doc)
        np.testing.assert_allclose(probabilities(doc, 2), probabilities(self.server.infer(x), 2),
                                   atol=1e-6)
        _, server, _ = self.server.request("GET", "/v2")
        self.assertIn("binary_tensor_data", server["extensions"])
        small, small_headers = self.binary_body(x, size=100)
        self.bad("POST", infer, small, 400, ["binary_data_size 100", "6272 bytes"],
                 small_headers)
        self.bad("POST", infer, body[:-4], 400, ["6268 bytes after its JSON header"], headers)
        both, both_headers = self.binary_body(x, extra={"data": [0.0]})
        self.bad("POST", infer, both, 400, ["both \"data\" and binary_data_size"], both_headers)
        nan = x.copy()
        nan[1, 0, 3, 3] = np.nan  # value 784 + 3 * 28 + 3 of the flat NCHW tensor
        self.bad("POST", infer, self.binary_body(nan)[0], 400, ["binary value 871",
                                                              "not a finite"], headers)
        self.bad("POST", infer, body, 400, ["Inference-Header-Content-Length '99999999'"],
                 dict(headers, **{"Inference-Header-Content-Length": "99999999"}))
        self.bad("POST", infer, body, 400, ["Inference-Header-Content-Length '-1'"],
                 dict(headers, **{"Inference-Header-Content-Length": "-1"}))
        plain = infer_body(x).encode()
        self.bad("POST", infer, plain + b"\0\0\0\0", 400, ["4 bytes of binary data",
                                                       "no binary_data_size"],
                 {"Inference-Header-Content-Length": str(len(plain))})
        self.assertEqual(self.server.proc.poll(), None)

    def test_keep_alive(self):
        c = self.server.conn()
        try:
            x = np.zeros((1, 1, 28, 28), np.float32)
            for _ in range(3):
                status, doc, _ = self.server.request("POST", "/v2/models/cnn/infer",
                                                     infer_body(x), conn=c)
                self.assertEqual(status, 200)
            # An error answered at the end of its request keeps the connection too.
            status, _, _ = self.server.request("POST", "/v2/models/cnn/infer", "{", conn=c)
            self.assertEqual(status, 400)
            status, _, _ = self.server.request("GET", "/v2/health/ready", conn=c)
            self.assertEqual(status, 200)
        finally:
            c.close()

    def bad(self, method, path, body, status, words, headers=None):
        got, doc, hdrs = self.server.request(method, path, body, headers)
        self.assertEqual(got, status, (path, body[:200] if isinstance(body, str) else body, doc))
        self.assertIsInstance(doc, dict)
        self.assertIsInstance(doc.get("error"), str)
        for w in words:
            self.assertIn(w, doc["error"])
        return hdrs

    def test_bad_requests(self):
        infer = "/v2/models/cnn/infer"
        good = json.loads(infer_body(np.zeros((2, 1, 28, 28))))
        tensor = good["inputs"][0]

        def body(**change):
            t = dict(tensor, **change)
            return json.dumps({"inputs": [{k: v for k, v in t.items() if v is not None}]})

        self.bad("POST", infer, body(shape=[2, 1, 28, 27]), 400, ["shape [2,1,28,27]",
                                                                   "[N,1,28,28]"])
        self.bad("POST", infer, body(shape=[2, 784]), 400, ["shape"])
        self.bad("POST", infer, body(datatype="INT8"), 400, ["datatype 'INT8'", "FP32"])
        self.bad("POST", infer, body(data=tensor["data"][:-1]), 400, ["1568", "1567"])
        self.bad("POST", infer, body(shape=[9, 1, 28, 28]), 400, ["batch 9", "--max-batch"])
        self.bad("POST", infer, body(shape=[0, 1, 28, 28]), 400, ["batch 0"])
        self.bad("POST", infer, body(name="image"), 400, ["unknown input 'image'"])
        self.bad("POST", infer, body(data=["x"] * 1568), 400, ["value 0", "string"])
        self.bad("POST", infer, body(data=None), 400, ["\"data\""])
        self.bad("POST", infer, body(data=[[[[[[0.0]]]]]]), 400, ["nested"])
        self.bad("POST", infer, body(data=[1e39] * 1568), 400, ["range of FP32"])
        self.bad("POST", infer, '{"inputs": [', 400, ["malformed JSON", "line 1"])
        self.bad("POST", infer, "[1, 2]", 400, ["JSON object"])
        self.bad("POST", infer, "{}", 400, ["'inputs' is missing"])
        self.bad("POST", infer, json.dumps({"inputs": [tensor, tensor]}), 400, ["2 tensors"])
        self.bad("POST", infer, json.dumps({"inputs": [tensor], "outputs": [{"name": "x"}]}),
                 400, ["unknown output 'x'"])
        self.bad("POST", infer, json.dumps({"inputs": [tensor], "id": 5}), 400, ["'id'"])
        # Above --max-body: with a Content-Length (answered unread), and chunked.
        big = json.dumps({"inputs": [tensor], "pad": "x" * 300000})
        self.bad("POST", infer, big, 413, ["--max-body of 200000 bytes"])
        # (http.client sends an iterable body chunked, without Content-Length)
        self.bad("POST", infer, iter([big[:1000].encode(), big[1000:].encode()]), 413,
                 ["--max-body"])
        self.bad("POST", "/v2/models/resnet/infer", body(), 404, ["unknown model 'resnet'"])
        self.bad("GET", "/v2/models/resnet", None, 404, ["unknown model"])
        self.bad("POST", "/v2/models/cnn/versions/2/infer", body(), 404, ["unknown version"])
        self.bad("GET", "/metrics", None, 404, ["not found", "/v2/models/cnn/infer"])
        hdrs = self.bad("GET", infer, None, 405, ["use POST"])
        self.assertEqual(hdrs.get("Allow"), "POST")
        self.bad("POST", "/v2/health/ready", "{}", 405, ["use GET"])
        self.bad("DELETE", "/v2/models/cnn", None, 405, ["DELETE"])
        # After all that, it still serves; the versioned path too.
        x = np.zeros((1, 1, 28, 28), np.float32)
        status, doc, _ = self.server.request("POST", "/v2/models/cnn/versions/1/infer",
                                             infer_body(x))
        self.assertEqual(status, 200, doc)
        self.assertEqual(self.server.proc.poll(), None)

    def test_clients_that_go_away(self):
        s = self.server
        x = np.random.default_rng(2).normal(size=(4, 1, 28, 28)).astype(np.float32)
        body = infer_body(x).encode()
        head = ("POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Type: "
                "application/json\r\nContent-Length: %d\r\n\r\n" % len(body)).encode()
        for _ in range(5):
            # Half a body, then gone.
            with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sk:
                sk.sendall(head + body[:len(body) // 2])
            # A whole request, gone before the answer: queued, computed, its answer unwanted.
            with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sk:
                sk.sendall(head + body)
            # Headers only, then reset.
            sk = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            sk.sendall(head)
            sk.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sk.close()
        # Gone in the middle of reading a large answer: a batch of 8 read one byte.
        x8 = np.random.default_rng(3).normal(size=(8, 1, 28, 28)).astype(np.float32)
        body8 = infer_body(x8).encode()
        with socket.create_connection(("127.0.0.1", s.port), timeout=10) as sk:
            sk.sendall(("POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d"
                        "\r\n\r\n" % len(body8)).encode() + body8)
            sk.recv(1)
        p = probabilities(s.infer(x), 4)
        np.testing.assert_allclose(p.sum(axis=1), 1, atol=1e-5)
        self.assertEqual(s.proc.poll(), None)


class ModelTest(unittest.TestCase):
    """Served answers against a forward pass of the same weights, from imgclf's model file."""

    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.kill()

    def serve(self, *args, env=None):
        s = Server(*args, env=env)
        self.servers.append(s)
        return s

    def test_fashion_mnist_model(self):
        if not os.path.exists(os.path.join(FMNIST, "t10k-images-idx3-ubyte.gz")):
            self.skipTest("no Fashion-MNIST in %s (Debian's dataset-fashion-mnist)" % FMNIST)
        path = train_model("fmnist", "--data-dir", os.path.join(_tmp.name, "fmnist"),
                           "--train-images", "2000", "--batch", "32")
        shape, params = read_model(path)
        self.assertEqual(shape, (28, 28, 1, 10))
        s = self.serve("--model", path, "--threads", "2", "--max-batch", "64")
        x, labels = fmnist_test(64)
        p = probabilities(s.infer(x), 64)
        want = forward(shape, params, x.transpose(0, 2, 3, 1))
        np.testing.assert_allclose(p, want, atol=2e-5)
        acc = float(np.mean(p.argmax(axis=1) == labels))
        self.assertGreater(acc, 0.5, acc)  # 10 classes: chance is 0.1

    def test_rgb_model_nchw(self):
        """A 3-channel model: the protocol's NCHW data reaches the CNN as NHWC."""
        path = train_model("rgb", "--dataset", "synthetic", "--image-size", "16",
                           "--train-images", "400", "--val-images", "100", "--data-dir",
                           os.path.join(_tmp.name, "synthetic"))
        shape, params = read_model(path)
        self.assertEqual(shape, (16, 16, 3, shape[3]))
        s = self.serve("--model", path, "--threads", "1")
        status, meta, _ = s.request("GET", "/v2/models/cnn")
        self.assertEqual(meta["inputs"][0]["shape"], [-1, 3, 16, 16])
        x = np.random.default_rng(4).normal(size=(5, 3, 16, 16)).astype(np.float32)
        p = probabilities(s.infer(x), 5, shape[3])
        np.testing.assert_allclose(p, forward(shape, params, x.transpose(0, 2, 3, 1)),
                                   atol=2e-5)

    def test_bf16(self):
        with open("/proc/cpuinfo") as f:
            has = " avx512_bf16" in f.read()
        env = dict(os.environ, MLBENCH_CPU_DISABLE="avx512_bf16")
        p = subprocess.run([WORKLOAD, "serve", "--precision", "bf16"], capture_output=True,
                           text=True, timeout=30, env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("no AVX512_BF16", p.stderr)
        self.assertIn("--precision fp32", p.stderr)
        if not has:
            self.skipTest("this CPU has no AVX512_BF16: bf16 serving cannot run here")
        x = np.random.default_rng(5).normal(size=(4, 1, 28, 28)).astype(np.float32)
        fp32 = probabilities(self.serve("--threads", "1").infer(x), 4)
        bf16 = probabilities(self.serve("--threads", "1", "--precision", "bf16").infer(x), 4)
        np.testing.assert_allclose(bf16.sum(axis=1), 1, atol=1e-5)
        np.testing.assert_allclose(bf16, fp32, atol=0.02)  # 8 bits of mantissa


class ConcurrencyTest(unittest.TestCase):
    """Many clients at once: shared batches, each client its own answers; markers; SIGTERM."""

    def test_concurrent_clients_markers_and_sigterm(self):
        # The marker socket, as mlbench would bind it.
        path = os.path.join(_tmp.name, "markers.sock")
        rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        rx.bind(path)
        rx.settimeout(0.2)
        events = []
        done = threading.Event()

        def receive():  # read as they come: a full socket queue would block the sender
            while not done.is_set():
                try:
                    events.append(rx.recv(4096).decode().split(" "))
                except socket.timeout:
                    pass

        receiver = threading.Thread(target=receive)
        receiver.start()
        env = dict(os.environ, MLBENCH_MARKER_SOCKET=path)
        # A long delay so that requests from different clients share batches.
        s = Server("--random-weights", "--threads", "2", "--max-batch", "8",
                   "--max-queue-delay-us", "20000", env=env)
        try:
            rng = np.random.default_rng(6)
            inputs = [rng.normal(size=(1 + i % 2, 1, 28, 28)).astype(np.float32)
                      for i in range(24)]
            alone = [probabilities(s.infer(x), len(x)) for x in inputs]  # one at a time
            results = {}
            errors = []

            def client(k):
                try:
                    c = s.conn()
                    for rep in range(3):
                        for i in range(k, len(inputs), 6):
                            status, doc, _ = s.request("POST", "/v2/models/cnn/infer",
                                                       infer_body(inputs[i], request_id=str(i)),
                                                       conn=c)
                            assert status == 200, (status, doc)
                            assert doc["id"] == str(i), doc["id"]
                            results[(i, rep)] = probabilities(doc, len(inputs[i]))
                    c.close()
                except Exception as e:  # reported below, in the test's thread
                    errors.append(repr(e))

            threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            self.assertEqual(errors, [])
            self.assertEqual(len(results), 3 * len(inputs))
            for (i, _), p in results.items():
                np.testing.assert_allclose(p, alone[i], atol=1e-5, err_msg="input %d" % i)
            # A client holding a half-sent request, and an idle one, do not delay the stop.
            idle = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            half = socket.create_connection(("127.0.0.1", s.port), timeout=10)
            half.sendall(b"POST /v2/models/cnn/infer HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 1000\r\n\r\n{\"inputs\"")
            time.sleep(0.2)
            rc, took, out, err = s.stop()
            idle.close()
            half.close()
            self.assertEqual(rc, 0, err)
            self.assertLess(took, STOP_TIMEOUT_S)
            m = re.search(r"(\d+) requests, (\d+) images in (\d+) batches", out)
            self.assertTrue(m, out)
            requests, images, batches = map(int, m.groups())
            self.assertEqual(requests, len(inputs) * 4)
            self.assertEqual(images, 4 * sum(len(x) for x in inputs))
            self.assertLess(batches, requests)  # concurrent requests were batched
        finally:
            s.kill()
            done.set()
            receiver.join(10)
            rx.close()
        kinds = {}
        for e in events:
            kinds.setdefault((e[0], e[4]), []).append(e[5] if len(e) > 5 else None)
        self.assertEqual(len(kinds[("B", "batch")]), batches)
        self.assertEqual(len(kinds[("E", "batch")]), batches)
        self.assertEqual(len(kinds[("B", "compute")]), batches)
        self.assertEqual(sum(float(v) for v in kinds[("C", "batch_size")]), images)
        self.assertEqual(sum(float(v) for v in kinds[("C", "requests")]), requests)
        self.assertTrue(all(float(v) <= 8 for v in kinds[("C", "batch_size")]))
        waits = [float(v) for v in kinds[("C", "queue_wait_seconds")]]
        self.assertEqual(len(waits), batches)
        self.assertTrue(all(w >= 0 for w in waits), waits)
        self.assertEqual(kinds[("M", "max_batch")], ["8"])


class OptionsTest(unittest.TestCase):
    """Bad options and bad model files: exit 2, with a message naming what is wrong."""

    def refused(self, *args, words=()):
        p = subprocess.run([WORKLOAD, "serve", *args], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(p.returncode, 2, (args, p.stderr))
        self.assertEqual(p.stdout, "")
        for w in words:
            self.assertIn(w, p.stderr)
        return p.stderr

    def test_bad_options(self):
        self.refused("--listen", "nonsense", words=["--listen 'nonsense'", "HOST:PORT"])
        self.refused("--listen", "127.0.0.1:99999", words=["port '99999'"])
        self.refused("--max-batch", "0", words=["--max-batch"])
        self.refused("--precision", "fp16", words=["--precision"])
        self.refused("--random-weights", "--model", "x", words=["--random-weights"])
        self.refused("--model", "x", "--seed", "3", words=["--seed"])
        self.refused("--max-body", "lots", words=["--max-body"])

    def test_bad_model_files(self):
        d = tempfile.mkdtemp(dir=_tmp.name)
        self.refused("--model", os.path.join(d, "absent"), words=["absent", "No such file"])
        good = os.path.join(d, "good")
        # A valid file, made as cnn_file.h describes (random parameters of the right count).
        h, w, c, k = 8, 8, 1, 3
        n = 9 * c * 32 + 32 + 9 * 32 * 64 + 64 + (h // 4) * (w // 4) * 64 * 128 + 128 + 128 * k + k
        head = struct.pack("<8sI4IQ", b"MLBCNN\x1a\n", 1, h, w, c, k, n)
        params = np.random.default_rng(7).normal(scale=0.05, size=n).astype("<f4").tobytes()

        def write(name, data, fix_crc=True):
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(data + (struct.pack("<I", zlib.crc32(data)) if fix_crc else b""))
            return p

        write("good", head + params)
        s = Server("--model", good, "--threads", "1")
        try:
            status, meta, _ = s.request("GET", "/v2/models/cnn")
            self.assertEqual(meta["inputs"][0]["shape"], [-1, 1, 8, 8])
            x = np.random.default_rng(8).normal(size=(2, 1, 8, 8)).astype(np.float32)
            shape, par = read_model(good)
            np.testing.assert_allclose(probabilities(s.infer(x), 2, 3),
                                       forward(shape, par, x.transpose(0, 2, 3, 1)), atol=2e-5)
        finally:
            s.kill()
        self.refused("--model", write("text", b"hello, world\n" * 10, False),
                     words=["not an mlbench CNN model file"])
        self.refused("--model", write("empty", b"", False), words=["not an mlbench"])
        self.refused("--model", write("v2", struct.pack("<8sI", b"MLBCNN\x1a\n", 2) + b"\0" * 40),
                     words=["version 2", "version 1"])
        self.refused("--model", write("cut", (head + params)[:-100], False),
                     words=["truncated"])
        flipped = bytearray(head + params + struct.pack("<I", zlib.crc32(head + params)))
        flipped[100] ^= 1
        self.refused("--model", write("flip", bytes(flipped), False), words=["CRC-32"])
        bad_shape = struct.pack("<8sI4IQ", b"MLBCNN\x1a\n", 1, 30, 28, 1, 10, n)
        self.refused("--model", write("shape", bad_shape + params), words=["height is 30"])
        wrong_n = struct.pack("<8sI4IQ", b"MLBCNN\x1a\n", 1, h, w, c, k, n - 1)
        self.refused("--model", write("count", wrong_n + params[:-4]),
                     words=["%d parameters" % (n - 1), "has %d" % n])
        nan = bytearray(params)
        nan[0:4] = struct.pack("<f", float("nan"))
        self.refused("--model", write("nan", head + bytes(nan)), words=["parameter 0"])

    def test_save_model_refused_early(self):
        p = subprocess.run([WORKLOAD, "imgclf", "--save-model", "/nonexistent-dir/m.mlbcnn"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--save-model", p.stderr)
        self.assertIn("/nonexistent-dir", p.stderr)

    def test_port_in_use(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            p = subprocess.run([WORKLOAD, "serve", "--listen", "127.0.0.1:%d" % port,
                                "--threads", "1"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("in use", p.stderr)


if __name__ == "__main__":
    unittest.main()
