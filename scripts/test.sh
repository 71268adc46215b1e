#!/usr/bin/env bash
# Sets stagio up (scripts/setup.sh), then runs every test with CTest: on MPICH (build/) the
# unit and fuzz tests and the tests that run MPI programs; on Open MPI (build-ompi/) the tests
# that run MPI programs again.
#
#   bash scripts/test.sh                  # from any directory; both MPIs
#   bash scripts/test.sh --mpi openmpi    # Open MPI only (and its unit tests)
#   bash scripts/test.sh --mpi mpich      # MPICH only
#   bash scripts/test.sh -R conformance   # other arguments go to ctest
#
# -j1: the MPI tests start several ranks each and already oversubscribe a 2-core machine.
# Both MPIs are tested even when the first has failures; the exit status is 0 only when every
# ctest run passed.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

mpis=both
if [[ ${1:-} == --mpi ]]; then
  mpis=${2:-}
  shift 2 || true
fi
case $mpis in
  both) trees=(build build-ompi) ;;
  mpich) trees=(build) ;;
  openmpi) trees=(build-ompi) ;;
  *) echo "usage: bash scripts/test.sh [--mpi mpich|openmpi|both] [ctest arguments]" >&2
     exit 64 ;;
esac

bash scripts/setup.sh --mpi "$mpis"

status=0
for tree in "${trees[@]}"; do
  echo "stagio test: running ctest in $tree"
  ctest --test-dir "$tree" --output-on-failure -j1 "$@" || status=$?
done
exit "$status"
