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
#   gfortran            the Fortran tests of MPI-IO under stagio (tests/stacks)
#   cmake, ninja-build  configure and build
#   mpich, libmpich-dev the MPI stagio is built and tested against first (mpicc.mpich,
#                       mpiexec.mpich), and the one the demo and benchmarks use
#   openmpi-bin, libopenmpi-dev   the second MPI every MPI test runs on (mpicc.openmpi,
#                       mpirun.openmpi)
#   libhdf5-mpich-dev, libhdf5-openmpi-dev   parallel HDF5 for each MPI: the tests of HDF5
#                       programs under stagio (tests/stacks)
#   libgtest-dev        unit tests
#   nlohmann-json3-dev  the stats JSON
#   libcli11-dev        the command line of the storage emulator (stagio-emu)
#   libfftw3-dev, pkg-config   FFTW for the tile-convolution example (examples/preexec), found
#                       through pkg-config
#   python3, python3-matplotlib   the benchmark harness (tools/stagio bench), its plots and
#                       the plots of `stagio report`
#   python3-jinja2      the HTML page of `stagio report` (a template)
#   python3-dev, python3-venv   to build mpi4py against each MPI with pip, in a virtual
#                       environment of the build tree, for the mpi4py tests (tests/stacks)
#   chromium            a real browser, headless, to test that the report's page renders and
#                       shows the numbers of its stats file (tests/report)
#   zlib1g-dev          CRC-32 checksums of the daemon's segment store
#   clang-15            libFuzzer (its runtime comes with clang-15's libclang-common-15-dev),
#                       for the fuzz tests of the daemon's wire protocol (tests/fuzz)
#   llvm-15-dev, libclang-15-dev, libclang-cpp15-dev   Clang's LibTooling, which stagio-slice
#                       (tools/slice) is built on: about 60 MB to fetch, 550 MB installed
packages=(build-essential gfortran cmake ninja-build libgtest-dev nlohmann-json3-dev
          libcli11-dev libfftw3-dev pkg-config zlib1g-dev python3 python3-matplotlib
          python3-jinja2 python3-dev python3-venv chromium clang-15
          llvm-15-dev libclang-15-dev libclang-cpp15-dev)
[[ $mpis == openmpi ]] || packages+=(mpich libmpich-dev libhdf5-mpich-dev)
[[ $mpis == mpich ]] || packages+=(openmpi-bin libopenmpi-dev libhdf5-openmpi-dev)

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

# mpi4py_env DIR MPI: mpi4py built from source against MPI with pip, in a virtual environment
# in DIR (DIR/mpi4py-env), for the tests of Python programs under stagio (tests/stacks). Debian's
# python3-mpi4py is built against one MPI only. Made before CMake runs, which looks for it.
#
# Which mpi4py: 4.x builds every derived datatype with MPI-4's large-count constructors
# (MPI_Type_vector_c, ...) where the MPI has them, and ROMIO before MPICH 4.1 cannot decode such
# types: a file view made by mpi4py 4 fails in plain MPI-IO on Debian 12's MPICH 4.0 ("Out of
# memory in adio/common/flatten.c", pmodels/mpich#6121). So against MPICH it is mpi4py 3.1, built
# with a setuptools older than 72 (newer ones removed an argument its build passes). Open MPI 4.1
# has no large-count functions, and takes the current mpi4py.
mpi4py_env() {
  local env=$1/mpi4py-env mpi=$2 version=${mpi4py_versions[$2]}
  [[ $("$env/bin/python" -c 'import mpi4py; print(mpi4py.__version__)' 2>/dev/null) == "$version" ]] &&
    return 0
  echo "stagio setup: building mpi4py $version against $mpi into $PWD/$env"
  rm -rf "$env"
  mkdir -p "$1"
  local constraints=$env/build-constraints.txt
  if ! python3 -m venv "$env" ||
     ! echo "setuptools<72" > "$constraints" ||
     ! PIP_CONSTRAINT=$constraints MPICC=mpicc.$mpi "$env/bin/pip" install -q --no-cache-dir \
         --no-binary mpi4py "mpi4py==$version"; then
    echo "stagio setup: mpi4py could not be built against $mpi: its tests are left out" >&2
    rm -rf "$env"
  fi
}
declare -A mpi4py_versions=([mpich]=3.1.6 [openmpi]=4.1.2)

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
  mpi4py_env "$dir" "$mpi"
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
