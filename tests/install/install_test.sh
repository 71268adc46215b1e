#!/usr/bin/env bash
# `cmake --install` to a temporary prefix, and programs built and run against the installed
# files only.
#
#   install_test.sh BUILD_DIR MPICC MPIEXEC VERSION DEMO
#
# 1. Installs BUILD_DIR into a fresh prefix and checks the layout: library, header, daemon,
#    the `stagio` command, pkg-config and CMake package files; each command answers --help.
# 2. Builds uses_stagio.c twice, with `pkg-config stagio` and with a CMake project calling
#    find_package(stagio), nothing from the source or build tree on their paths, and runs
#    both on 2 ranks: linked ahead of MPI, stagio must be active and the bytes right.
# 3. The installed `stagio run` (no --build) runs the demo, a plain MPI program, preloaded and
#    with one installed daemon; the installed `stagio report` reads its stats.
set -euo pipefail

build=$1 mpicc=$2 mpiexec=$3 version=$4 demo=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/stagio-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log" >&2; exit 1; }
for file in lib/libstagio.so "lib/libstagio.so.$version" include/stagio/stagio.h \
    bin/stagio-iond bin/stagio lib/pkgconfig/stagio.pc lib/cmake/stagio/stagioConfig.cmake \
    lib/cmake/stagio/stagioTargets.cmake lib/stagio/stagio_tools/installed.json; do
  [[ -e $prefix/$file ]] || { echo "install_test: $file not installed" >&2; exit 1; }
done
for command in stagio stagio-iond; do
  "$prefix/bin/$command" --help >"$work/help.txt" ||
    { echo "install_test: $command --help failed" >&2; exit 1; }
  grep -qi "usage" "$work/help.txt" || { echo "install_test: $command --help: no usage" >&2; exit 1; }
done

run() {  # run NAME PROGRAM: the program on 2 ranks, in a directory of its own
  mkdir -p "$work/$1"
  timeout 120 "$mpiexec" -n 2 "$2" "$work/$1/data" "$version" >"$work/$1/out" 2>&1 ||
    { echo "install_test: $1 failed" >&2; cat "$work/$1/out" >&2; exit 1; }
  grep -q "^uses_stagio: ok" "$work/$1/out" || { cat "$work/$1/out" >&2; exit 1; }
  echo "install_test: $1: $(cat "$work/$1/out")"
}

# With pkg-config. The rpath only says where the library is at run time.
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs stagio)
"$mpicc" -o "$work/uses_stagio_pc" "$here/uses_stagio.c" $flags -Wl,-rpath,"$prefix/lib"
run pkg-config "$work/uses_stagio_pc"

# With the CMake package.
cmake -S "$here/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPI_C_COMPILER="$mpicc" -DCMAKE_BUILD_RPATH="$prefix/lib" >"$work/consumer.log" 2>&1 &&
  cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log" >&2; exit 1; }
run cmake-package "$work/consumer/uses_stagio"

# The installed command, without a build directory.
mkdir -p "$work/demo"
(cd "$work/demo" && STAGIO_STATS=$work/demo/stats.json timeout 120 "$prefix/bin/stagio" run \
  --iond 1 --iond-arg=--stats="$work/demo/iond.json" -- \
  "$mpiexec" -n 2 "$demo" "$work/demo/demo.dat" 4 256 0 >"$work/demo/out" 2>&1) ||
  { echo "install_test: stagio run failed" >&2; cat "$work/demo/out" >&2; exit 1; }
"$prefix/bin/stagio" report --no-page "$work/demo/stats.json" >"$work/demo/report.txt" ||
  { echo "install_test: stagio report failed" >&2; exit 1; }
grep -q "^  verdict: " "$work/demo/report.txt" || { cat "$work/demo/report.txt" >&2; exit 1; }
# The installed daemon served the demo's file.
python3 - "$work/demo/iond.json" <<'PYTHON'
import json, sys
served = json.load(open(sys.argv[1]))
moved = served["bytes_read"] + served["bytes_written"]
if not moved:
    sys.exit(f"install_test: the installed stagio-iond served nothing: {served}")
print(f"install_test: stagio run with the installed daemon: {moved} bytes through it")
PYTHON
echo "install_test: ok"
