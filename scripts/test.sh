#!/usr/bin/env bash
# Sets stagio up (scripts/setup.sh), then runs every test: the unit tests and the MPI
# integration tests, all registered with CTest.
#
#   bash scripts/test.sh              # from any directory
#   bash scripts/test.sh -R unit      # extra arguments go to ctest
#
# -j1: the MPI tests start several ranks each and already oversubscribe a 2-core machine.
# The exit status is ctest's.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh

echo "stagio test: running ctest"
exec ctest --test-dir build --output-on-failure -j1 "$@"
