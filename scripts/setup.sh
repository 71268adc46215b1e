#!/usr/bin/env bash
# Installs what stagio needs (Debian 12 packages) and builds it: into ./build against MPICH,
# with every test, and into ./build-ompi against Open MPI, with the tests that run MPI programs
# (the others do not depend on the MPI and run once, from ./build).
#
#   bash scripts/setup.sh                  # from any directory; both MPIs
#   bash scripts/setup.sh --mpi openmpi    # Open MPI only (build-ompi, with every test)
#   bash scripts/setup.sh --mpi mpich      # MPICH only (build)
#
# Safe to run again: packages are installed (and `apt-get update` run) only when some are
# missing, and the build recompiles only what changed. As root it installs directly, otherwise
# through sudo; without either it names the packages to install and stops.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

mpis=both
if [[ $# -eq 2 && $1 == --mpi && $2 =~ ^(mpich|openmpi|both)$ ]]; then
  mpis=$2
elif [[ $# -ne 0 ]]; then
  echo "usage: bash scripts/setup.sh [--mpi mpich|openmpi|both]" >&2
  exit 64
fi

# What the build and the tests need, by Debian package name:
#   build-essential     C/C++ compilers, make, binutils (nm, used by the symbol check test)
#   cmake, ninja-build  configure and build
#   mpich, libmpich-dev the MPI stagio is built and tested against first (mpicc.mpich,
#                       mpiexec.mpich), and the one the demo and benchmarks use
#   openmpi-bin, libopenmpi-dev   the second MPI every MPI test runs on (mpicc.openmpi,
#                       mpirun.openmpi)
#   libgtest-dev        unit tests
#   nlohmann-json3-dev  the stats JSON
#   libcli11-dev        the command line of the storage emulator (stagio-emu)
#   libfftw3-dev, pkg-config   FFTW for the tile-convolution example (examples/preexec), found
#                       through pkg-config
#   python3, python3-matplotlib   the benchmark harness (tools/stagio bench) and its plots
#   zlib1g-dev          CRC-32 checksums of the daemon's segment store
#   clang-15            libFuzzer (its runtime comes with clang-15's libclang-common-15-dev),
#                       for the fuzz tests of the daemon's wire protocol (tests/fuzz)
#   llvm-15-dev, libclang-15-dev, libclang-cpp15-dev   Clang's LibTooling, which stagio-slice
#                       (tools/slice) is built on: about 60 MB to fetch, 550 MB installed
packages=(build-essential cmake ninja-build libgtest-dev nlohmann-json3-dev
          libcli11-dev libfftw3-dev pkg-config zlib1g-dev python3 python3-matplotlib clang-15
          llvm-15-dev libclang-15-dev libclang-cpp15-dev)
[[ $mpis == openmpi ]] || packages+=(mpich libmpich-dev)
[[ $mpis == mpich ]] || packages+=(openmpi-bin libopenmpi-dev)

install_hint() {
  echo "stagio setup: as root, run:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends $*" >&2
}

if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$package")
  done
  if ((${#missing[@]} > 0)); then
    if [[ $(id -u) -eq 0 ]]; then
      as_root=()
    elif command -v sudo >/dev/null 2>&1; then
      as_root=(sudo)
    else
      echo "stagio setup: not root and no sudo; cannot install ${missing[*]}" >&2
      install_hint "${missing[@]}"
      exit 1
    fi
    echo "stagio setup: installing packages: ${missing[*]}"
    if ! "${as_root[@]}" apt-get update -q ||
       ! "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y -q --no-install-recommends "${missing[@]}"; then
      echo "stagio setup: package installation failed" >&2
      install_hint "${missing[@]}"
      exit 1
    fi
  fi
else
  echo "stagio setup: no dpkg here, so packages are not checked; this script knows Debian 12." >&2
  echo "stagio setup: needed (Debian names): ${packages[*]}" >&2
fi

# build DIR MPI [CMAKE OPTION...]: configures (again: cheap, and it picks up new source files and
# changed options) and builds stagio in DIR against MPI. The MPI is named explicitly: Debian's
# `mpicc` follows whichever MPI was installed last.
build() {
  local dir=$1 mpi=$2
  shift 2
  # A build tree made by another generator cannot be reconfigured for Ninja; say so instead of
  # deleting a directory someone may be using.
  if [[ -f $dir/CMakeCache.txt ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$dir/CMakeCache.txt"; then
    echo "stagio setup: $dir/ was configured with another CMake generator;" \
         "remove it (rm -rf $dir) and run this again" >&2
    exit 1
  fi
  echo "stagio setup: building into $PWD/$dir ($mpi)"
  cmake --log-level=WARNING -S . -B "$dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGIO_MPI="$mpi" "$@" | { grep -v '^-- ' || true; }
  cmake --build "$dir"
}

case $mpis in
  both)
    build build mpich -DSTAGIO_UNIT_TESTS=ON
    build build-ompi openmpi -DSTAGIO_UNIT_TESTS=OFF -DSTAGIO_SLICER=OFF ;;
  mpich) build build mpich -DSTAGIO_UNIT_TESTS=ON ;;
  openmpi) build build-ompi openmpi -DSTAGIO_UNIT_TESTS=ON ;;
esac
echo "stagio setup: done (libraries: $(ls -d build*/libstagio.so 2>/dev/null | tr '\n' ' '))"
