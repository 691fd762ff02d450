"""Shared helpers of the Python package's tests (test_package, test_timer, test_pytest_plugin):
where the source is, which interpreter has pytest, the mlbench binary under test, and a clean
environment for child processes."""

import functools
import glob
import os
import re
import shutil
import subprocess
import sys

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(TESTS_DIR, "..", ".."))
PYTHON_DIR = os.path.join(REPO, "python")  # the package's source: pyproject.toml, packages

# The variables that would make a child find the source tree, a marker socket, a config file
# or the network instead of what a test sets up.
_CHILD_UNSET = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH",
                "MLBENCH_MARKER_SOCKET", "MLBENCH_MARKER_RING", "MLBENCH_MARKER_RING_BYTES",
                "MLBENCH_STORE", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS",
                "PIP_NO_BUILD_ISOLATION", "PIP_USER", "PIP_REQUIRE_VIRTUALENV", "VIRTUAL_ENV",
                "PYTEST_ADDOPTS", "PYTEST_PLUGINS")


def child_env(**extra):
    """os.environ without the variables above, pip silenced and kept offline, plus extra
    (a value None removes the variable)."""
    env = {k: v for k, v in os.environ.items() if k not in _CHILD_UNSET}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def run(argv, timeout=240, check=True, **kwargs):
    """Runs argv (text output captured); returns the CompletedProcess. With check, a non-zero
    exit status raises AssertionError showing its output."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@functools.lru_cache(maxsize=None)
def pytest_python():
    """An interpreter that can import pytest: this one, else Debian's /usr/bin/python3, else
    None (the tests that need it are skipped, saying so)."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        if candidate and os.path.isfile(candidate):
            proc = subprocess.run([candidate, "-c", "import pytest"], capture_output=True,
                                  env=child_env(), timeout=60)
            if proc.returncode == 0:
                return candidate
    return None


NO_PYTEST = "no interpreter with pytest (neither this one nor /usr/bin/python3)"


@functools.lru_cache(maxsize=None)
def mlbench_binary():
    """(path, why-not) of the mlbench binary under test: $MLBENCH, which python/CMakeLists.txt
    sets to the build's; path None when it is unset or has no `record` command."""
    path = os.environ.get("MLBENCH")
    if not path:
        return None, "MLBENCH is not set (ctest sets it to the build's mlbench)"
    if not os.access(path, os.X_OK):
        return None, f"MLBENCH={path} is not an executable"
    proc = subprocess.run([path, "record", "--help"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        return None, f"{path} has no `record` command (an older build?)"
    return path, None


@functools.lru_cache(maxsize=None)
def older_python():
    """A Python 3.9 or 3.10 interpreter, to build the package where tomllib is missing; None
    when this machine has none (PATH, then pyenv's versions)."""
    candidates = [shutil.which(name) for name in ("python3.9", "python3.10")]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for pattern in ("3.9.*", "3.10.*"):
        candidates += sorted(glob.glob(os.path.join(root, "versions", pattern, "bin",
                                                    "python3")))
    for candidate in candidates:
        if not candidate:
            continue
        proc = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                              capture_output=True, text=True, env=child_env(), timeout=60)
        if proc.returncode == 0 and proc.stdout.strip() in ("(3, 9)", "(3, 10)"):
            return candidate
    return None


def cmake_version():
    """The C project's version: project(mlbench VERSION x.y.z) in CMakeLists.txt."""
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(\s*mlbench\s+VERSION\s+([0-9][0-9.]*)", f.read())
    assert match, "project(mlbench VERSION ...) not found in CMakeLists.txt"
    return match.group(1)
