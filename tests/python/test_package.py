"""Tests of python/ as a package: pyproject.toml, the in-tree build backend
(python/_build_backend/mlbench_build.py) and what pip installs from it.

Each installing test makes a virtual environment in a temporary folder and runs
`pip install --no-index` there: offline, with pip's default build isolation, so a backend that
had to be downloaded would fail here. The installed package is then used by the venv's own
interpreter only, from a folder outside the source tree and without PYTHONPATH: imports,
versions, the pytest11 entry point, and a marker round trip through the real mlbench binary
($MLBENCH, set by python/CMakeLists.txt; skipped without it).
Run: MLBENCH=build/mlbench python3 -m unittest -v test_package (in tests/python)
"""

import base64
import csv
import hashlib
import io
import json
import os
import sys
import tarfile
import tempfile
import textwrap
import unittest
import zipfile

import support

sys.path.insert(0, os.path.join(support.PYTHON_DIR, "_build_backend"))
sys.path.insert(0, support.PYTHON_DIR)
import mlbench_build  # noqa: E402
import mlbench_marker  # noqa: E402
import mlbench  # noqa: E402

VENV = None  # the module's venv with the package installed (setUpModule)
_TMP = None


def make_venv(path, python=sys.executable, system_site=False):
    """Creates a venv at path with pip; returns its interpreter."""
    argv = [python, "-m", "venv"] + (["--system-site-packages"] if system_site else []) + [path]
    support.run(argv, env=support.child_env())
    return os.path.join(path, "bin", "python")


def pip(python, *args, cwd=None):
    """Runs the venv's pip (install and wheel offline: --no-index); returns the
    CompletedProcess."""
    offline = ["--no-index"] if args[0] in ("install", "wheel") else []
    return support.run([python, "-m", "pip", *args, *offline], env=support.child_env(),
                       cwd=cwd or _TMP.name)


def venv_run(python, code, cwd=None, **env):
    """Runs code with the venv's interpreter, outside the source tree, without PYTHONPATH;
    returns its stdout parsed as JSON."""
    proc = support.run([python, "-c", textwrap.dedent(code)], env=support.child_env(**env),
                       cwd=cwd or _TMP.name)
    return json.loads(proc.stdout)


def setUpModule():
    global VENV, _TMP
    _TMP = tempfile.TemporaryDirectory(prefix="mlbench-package-test-")
    VENV = make_venv(os.path.join(_TMP.name, "venv"))
    pip(VENV, "install", support.PYTHON_DIR)


def tearDownModule():
    _TMP.cleanup()


def pyproject():
    with open(os.path.join(support.PYTHON_DIR, "pyproject.toml"), encoding="utf-8") as f:
        return mlbench_build.load_toml(f.read())


class VersionTest(unittest.TestCase):
    def test_versions_agree(self):
        version = support.cmake_version()
        self.assertEqual(pyproject()["project"]["version"], version,
                         "python/pyproject.toml's version differs from CMakeLists.txt's")
        self.assertEqual(mlbench_marker.__version__, version)
        self.assertEqual(mlbench.__version__, version)

    def test_pyproject(self):
        data = pyproject()
        self.assertEqual(data["build-system"]["requires"], [])
        self.assertEqual(data["project"]["name"], "mlbench")
        self.assertEqual(data["project"]["requires-python"], ">=3.9")
        self.assertEqual(data["project"].get("dependencies", []), [])
        self.assertEqual(data["project"]["entry-points"]["pytest11"],
                         {"mlbench": "mlbench_marker.pytest_plugin"})

    def test_mlbench_reexports(self):
        """mlbench is the same API, not a copy."""
        for name in mlbench_marker.__all__:
            self.assertIs(getattr(mlbench, name), getattr(mlbench_marker, name), name)


class TomlReaderTest(unittest.TestCase):
    """The reader the backend uses on Python < 3.11 reads what tomllib reads."""

    SAMPLE = textwrap.dedent(r'''
        # comment
        top = "a \"quoted\" \u00e9 \\ \t x"  # trailing comment
        lit = 'C:\path'
        n = -12_000
        yes = true
        "quoted key" = 'v'
        [project]
        name = "x"
        list = [
            "a",  # one
            'b',
        ]
        empty = []
        people = [{name = "A", email = "a@x"}, {name = "B"}]
        dotted.key = "d"
        [project.entry-points.pytest11]
        x = "y.z"
        [tool.a-b]
        nested = [["a"], []]
        ''')

    def test_same_as_tomllib(self):
        try:
            import tomllib
        except ImportError:
            self.skipTest("tomllib needs Python 3.11+")
        with open(os.path.join(support.PYTHON_DIR, "pyproject.toml"), encoding="utf-8") as f:
            ours = f.read()
        for text in (self.SAMPLE, ours):
            self.assertEqual(mlbench_build._TomlReader(text).document(), tomllib.loads(text))

    def test_refuses_what_it_does_not_read(self):
        for text, what in (("x = 1.5\n", "unsupported value"),
                           ("x = 1979-05-27\n", "unsupported value"),
                           ('x = """a\nb"""\n', "multi-line"),
                           ("[[a]]\nx = 1\n", "arrays of tables"),
                           ("x = 1\nx = 2\n", "defined twice"),
                           ("[a]\n[a]\n", "defined twice"),
                           ('x = "open\n', "unterminated"),
                           ("x = [1, 2\n", "expected"),
                           ("x = 1 y\n", "after a value")):
            with self.subTest(text=text):
                with self.assertRaises(ValueError) as cm:
                    mlbench_build._TomlReader(text).document()
                self.assertIn(what, str(cm.exception))
                self.assertIn("line ", str(cm.exception))


class InstalledTest(unittest.TestCase):
    """What `pip install --no-index ./python` put in the venv."""

    def test_imports_versions_entry_point(self):
        info = venv_run(VENV, """
            import json, sys
            import importlib.metadata as md
            import mlbench, mlbench_marker
            eps = md.entry_points()
            group = eps.select(group="pytest11") if hasattr(eps, "select") else eps["pytest11"]
            print(json.dumps({
                "marker_file": mlbench_marker.__file__, "mlbench_file": mlbench.__file__,
                "versions": [mlbench_marker.__version__, mlbench.__version__,
                             md.version("mlbench")],
                "pytest11": {ep.name: ep.value for ep in group},
                "same": mlbench.bench is mlbench_marker.bench and mlbench.Timer is
                        mlbench_marker.Timer,
                "requires_python": md.metadata("mlbench")["Requires-Python"],
                "prefix": sys.prefix}))
        """)
        version = support.cmake_version()
        self.assertEqual(info["versions"], [version] * 3)
        self.assertEqual(info["pytest11"], {"mlbench": "mlbench_marker.pytest_plugin"})
        self.assertTrue(info["same"])
        self.assertEqual(info["requires_python"], ">=3.9")
        for key in ("marker_file", "mlbench_file"):
            self.assertTrue(info[key].startswith(info["prefix"]), info[key])
            self.assertFalse(info[key].startswith(support.REPO + os.sep), info[key])

    def test_marker_round_trip(self):
        """mlbench run measures the installed client's stages and the Timer's stage."""
        binary = os.environ.get("MLBENCH")
        if not binary:
            self.skipTest("MLBENCH is not set (ctest sets it to the build's mlbench)")
        out = os.path.join(_TMP.name, "round_trip.json")
        code = textwrap.dedent("""
            import mlbench, mlbench_marker
            with mlbench_marker.stage("pkg_stage"):
                sum(range(10000))
            mlbench.bench(sum, range(1000), name="pkg_bench", min_run_time=0.02)
        """)
        support.run([binary, "run", "-r", "1", "-q", "-o", out, "--store",
                     os.path.join(_TMP.name, "store"), "--", VENV, "-c", code],
                    env=support.child_env(), cwd=_TMP.name)
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
        stages = {s["name"] for s in result["summary"]["stages"]}
        self.assertLessEqual({"pkg_stage", "pkg_bench", "pkg_bench.warmup"}, stages)
        calls = [c for c in result["summary"]["counters"] if c["name"] == "pkg_bench.calls"]
        self.assertEqual(len(calls), 1, result["summary"]["counters"])
        self.assertEqual(calls[0]["stage"], "pkg_bench")
        self.assertGreater(calls[0]["stage_rate_per_s_median"], 0)


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(
        b"=").decode("ascii")


class WheelTest(unittest.TestCase):
    def build(self):
        out = tempfile.mkdtemp(dir=_TMP.name)
        pip(VENV, "wheel", "--no-deps", "-w", out, support.PYTHON_DIR)
        names = os.listdir(out)
        self.assertEqual(len(names), 1, names)
        return os.path.join(out, names[0])

    def test_wheel(self):
        path = self.build()
        version = support.cmake_version()
        self.assertEqual(os.path.basename(path), f"mlbench-{version}-py3-none-any.whl")
        dist_info = f"mlbench-{version}.dist-info"
        with zipfile.ZipFile(path) as whl:
            files = {name: whl.read(name) for name in whl.namelist()}
        record = list(csv.reader(io.StringIO(files[f"{dist_info}/RECORD"].decode("utf-8"))))
        listed = {row[0]: row for row in record}
        self.assertEqual(set(listed), set(files), "RECORD lists exactly the wheel's files")
        for name, data in files.items():
            _, digest, size = listed[name]
            if name == f"{dist_info}/RECORD":
                self.assertEqual((digest, size), ("", ""))
            else:
                self.assertEqual(digest, record_hash(data), name)
                self.assertEqual(int(size), len(data), name)
        tops = {name.split("/")[0] for name in files}
        self.assertEqual(tops, {"mlbench", "mlbench_marker", dist_info})
        self.assertIn("mlbench_marker/timer.py", files)
        self.assertIn("mlbench_marker/pytest_plugin.py", files)
        self.assertFalse([n for n in files if "__pycache__" in n or n.endswith(".pyc")])
        metadata = files[f"{dist_info}/METADATA"].decode("utf-8")
        for line in ("Metadata-Version: 2.1", "Name: mlbench", f"Version: {version}",
                     "Requires-Python: >=3.9", "Description-Content-Type: text/markdown"):
            self.assertIn(line + "\n", metadata)
        self.assertNotIn("Requires-Dist", metadata)
        wheel = files[f"{dist_info}/WHEEL"].decode("utf-8")
        self.assertIn("Root-Is-Purelib: true\n", wheel)
        self.assertIn("Tag: py3-none-any\n", wheel)
        self.assertEqual(files[f"{dist_info}/entry_points.txt"].decode("utf-8"),
                         "[pytest11]\nmlbench = mlbench_marker.pytest_plugin\n\n")
        with open(os.path.join(support.PYTHON_DIR, "mlbench_marker", "timer.py"), "rb") as f:
            self.assertEqual(files["mlbench_marker/timer.py"], f.read())

    def test_reproducible(self):
        """The backend called twice, as a frontend does (cwd: the source), gives the same
        bytes."""
        builds = []
        for _ in range(2):
            out = tempfile.mkdtemp(dir=_TMP.name)
            support.run([sys.executable, "-c", "import sys, mlbench_build; "
                         "print(mlbench_build.build_wheel(sys.argv[1]))", out],
                        cwd=support.PYTHON_DIR,
                        env=support.child_env(PYTHONPATH=os.path.join(support.PYTHON_DIR,
                                                                      "_build_backend")))
            [name] = os.listdir(out)
            with open(os.path.join(out, name), "rb") as f:
                builds.append(f.read())
        self.assertEqual(builds[0], builds[1])


class SdistTest(unittest.TestCase):
    def test_sdist_builds_and_installs(self):
        out = os.path.join(_TMP.name, "sdist")
        os.mkdir(out)
        proc = support.run([sys.executable, "-c", "import sys, mlbench_build; "
                            "print(mlbench_build.build_sdist(sys.argv[1]))", out],
                           cwd=support.PYTHON_DIR,
                           env=support.child_env(PYTHONPATH=os.path.join(support.PYTHON_DIR,
                                                                         "_build_backend")))
        version = support.cmake_version()
        name = proc.stdout.strip()
        self.assertEqual(name, f"mlbench-{version}.tar.gz")
        with tarfile.open(os.path.join(out, name)) as tar:
            members = set(tar.getnames())
        base = f"mlbench-{version}/"
        for member in ("PKG-INFO", "pyproject.toml", "README.md",
                       "_build_backend/mlbench_build.py", "mlbench/__init__.py",
                       "mlbench_marker/__init__.py", "mlbench_marker/timer.py"):
            self.assertIn(base + member, members)
        self.assertFalse([m for m in members if "__pycache__" in m or not m.startswith(base)])

        python = make_venv(os.path.join(_TMP.name, "venv-sdist"))
        pip(python, "install", os.path.join(out, name))  # builds the wheel from the sdist
        info = venv_run(python, """
            import json, mlbench, mlbench_marker
            print(json.dumps([mlbench.__version__, mlbench_marker.__file__]))
        """)
        self.assertEqual(info[0], version)
        self.assertIn("venv-sdist", info[1])
        pip(python, "uninstall", "-y", "mlbench")  # RECORD names what to remove
        site = os.path.dirname(os.path.dirname(info[1]))
        self.assertFalse(os.path.exists(os.path.join(site, "mlbench_marker")))
        self.assertFalse(os.path.exists(os.path.join(site, "mlbench")))


class EditableTest(unittest.TestCase):
    def test_editable_install_uses_the_source(self):
        python = make_venv(os.path.join(_TMP.name, "venv-editable"))
        pip(python, "install", "-e", support.PYTHON_DIR)
        info = venv_run(python, """
            import json, importlib.metadata as md, mlbench, mlbench_marker
            print(json.dumps([mlbench_marker.__file__, mlbench.__file__, md.version("mlbench")]))
        """)
        self.assertEqual(info[0], os.path.join(support.PYTHON_DIR, "mlbench_marker",
                                               "__init__.py"))
        self.assertEqual(info[1], os.path.join(support.PYTHON_DIR, "mlbench", "__init__.py"))
        self.assertEqual(info[2], support.cmake_version())


class OlderPythonTest(unittest.TestCase):
    def test_builds_and_runs_without_tomllib(self):
        """Python 3.9/3.10 have no tomllib: the backend's own reader reads pyproject.toml."""
        older = support.older_python()
        if older is None:
            self.skipTest("no Python 3.9 or 3.10 on this machine")
        python = make_venv(os.path.join(_TMP.name, "venv-older"), python=older)
        pip(python, "install", support.PYTHON_DIR)
        info = venv_run(python, """
            import json, sys, mlbench
            m = mlbench.Timer(sum, range(100)).blocked_autorange(min_run_time=0.01)
            print(json.dumps([sys.version_info[:2], mlbench.__version__, m.blocks >= 6]))
        """)
        self.assertIn(tuple(info[0]), ((3, 9), (3, 10)))
        self.assertEqual(info[1:], [support.cmake_version(), True])


class PluginEntryPointTest(unittest.TestCase):
    def test_pytest_loads_the_plugin_by_its_entry_point(self):
        """Installed, the plugin needs no -p: pytest finds it by the pytest11 entry point."""
        base = support.pytest_python()
        if base is None:
            self.skipTest(support.NO_PYTEST)
        python = make_venv(os.path.join(_TMP.name, "venv-pytest"), python=base,
                           system_site=True)
        if support.run([python, "-c", "import pytest"], check=False,
                       env=support.child_env()).returncode != 0:
            self.skipTest(f"a venv of {base} does not see its pytest")
        pip(python, "install", support.PYTHON_DIR)
        folder = tempfile.mkdtemp(dir=_TMP.name)
        with open(os.path.join(folder, "test_ep.py"), "w", encoding="utf-8") as f:
            f.write("def test_sum(mlbench):\n    assert mlbench(sum, range(10)) == 45\n")
        proc = support.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "--mlbench-no-store", "--mlbench-min-time", "0.01", "test_ep.py"],
                           cwd=folder, env=support.child_env(), check=False)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("mlbench: time per call", proc.stdout)
        self.assertIn("test_ep.py::test_sum", proc.stdout)


if __name__ == "__main__":
    unittest.main()
