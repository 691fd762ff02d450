#!/bin/sh
# Installs the Debian packages mlbench needs to build and test (idempotent).
# Usage: scripts/install-deps.sh [--bench] [--browser]
#   --bench    adds the peers the benchmarks compare with (hyperfine, bc, wrk, PyTorch,
#              scikit-learn, Pillow, NumPy)
#   --browser  adds Chromium, for the test that renders an HTML report headless
# Uses sudo only when not run as root; installs nothing that is already there.
set -eu

# clang and libclang-rt-14-dev (libFuzzer, the sanitizers' runtimes): make fuzz, tests/fuzz/.
# python3-torch: the PyTorch workload of tests/integration/test_torch.py (framework-aware advice).
# python3-numpy: test_serve.py checks the reference server's answers against a forward pass in numpy.
# libpq-dev: the shared result store (PostgreSQL); postgresql: the server test_shared_store.py starts.
# libopenmpi-dev, openmpi-bin: the multi-rank reference workload (imgclf --ranks) and its tests.
# help2man: the man pages (packaging/gen-man.sh); dpkg-dev: make deb (dpkg-shlibdeps); zsh, fish:
# the tests of the completion scripts; python3-venv, python3-pytest: the Python package's tests
# (pip install into a venv, the pytest plugin).
packages="gcc clang libclang-rt-14-dev make cmake pkg-config libjansson-dev libcmocka-dev libsqlite3-dev libpq-dev postgresql libopenmpi-dev openmpi-bin libyaml-dev libmicrohttpd-dev libhttp-parser-dev prometheus python3
    libopenblas-dev libturbojpeg0-dev zlib1g-dev dataset-fashion-mnist python3-torch python3-numpy
    help2man dpkg-dev zsh fish python3-venv python3-pytest"
for opt in "$@"; do
    case "$opt" in
    --bench) packages="$packages hyperfine bc wrk python3-torch python3-sklearn python3-pil python3-numpy" ;;
    --browser) packages="$packages chromium" ;;
    *)
        echo "install-deps.sh: unknown option '$opt' (known: --bench, --browser)" >&2
        exit 2
        ;;
    esac
done

missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages present ($packages)"
    exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
        echo "install-deps: need root or sudo to install:$missing" >&2
        exit 1
    }
    sudo="sudo"
fi

echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086 # word splitting of the package list is intended
$sudo apt-get install -y -qq --no-install-recommends $missing
