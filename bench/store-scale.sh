#!/bin/sh
# store-scale.sh: the result store at 10 000 results, SQLite beside PostgreSQL in one run:
# history and compare latest~1 latest latency, writes per second with 8 concurrent writers.
# Needs Debian's postgresql (scripts/install-deps.sh installs it). Results: bench/RESULTS.md.
# Usage: bench/store-scale.sh [N] [REPS]   (after a build in build/)
set -eu
cd "$(dirname "$0")/.."
exec python3 bench/store_scale.py "$PWD/build/mlbench" "${1:-10000}" "${2:-5}"
