#!/bin/sh
# Checks that libstagio.so wraps every MPI_File_* function the MPI library defines, so that no
# MPI-IO call of an application slips past stagio, plus MPI_Init, MPI_Init_thread, MPI_Finalize.
#
#   tests/mpi/check_symbols.sh path/to/libstagio.so path/to/libmpi.so
#   e.g. ... build/libstagio.so /usr/lib/x86_64-linux-gnu/libmpich.so.12
#
# Left out: the handle conversions MPI_File_c2f/f2c (and toint/fromint, where an MPI library has
# them), which carry no I/O, and Fortran entry points (lowercase or trailing-underscore names).
# Exit status 0 when every function is wrapped; 1, listing the missing ones, otherwise; 2 on
# bad usage.
set -eu

if [ $# -ne 2 ]; then
  echo "usage: $0 LIBSTAGIO MPI_LIBRARY" >&2
  exit 2
fi
stagio_lib=$1
mpi_lib=$2
for lib in "$stagio_lib" "$mpi_lib"; do
  if [ ! -r "$lib" ]; then
    echo "$0: cannot read $lib" >&2
    exit 2
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Function symbols (T = text, W = weak, i = indirect) a library defines, one name a line.
defined_functions() {
  if ! nm -D --defined-only "$1" >"$tmp/nm"; then
    echo "$0: cannot list the dynamic symbols of $1" >&2
    exit 2
  fi
  awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' "$tmp/nm" | sort -u
}

defined_functions "$mpi_lib" >"$tmp/mpi_functions"
grep -E '^MPI_File_[a-z0-9_]+$' "$tmp/mpi_functions" |
  grep -v -E '^MPI_File_(c2f|f2c|toint|fromint)$' |
  grep -v -E '_$' >"$tmp/wanted" || true
if [ ! -s "$tmp/wanted" ]; then
  echo "$0: $mpi_lib defines no MPI_File_* function; is it the MPI library?" >&2
  exit 2
fi
file_functions=$(wc -l <"$tmp/wanted" | tr -d " ")
printf '%s\n' MPI_Init MPI_Init_thread MPI_Finalize >>"$tmp/wanted"
sort -o "$tmp/wanted" "$tmp/wanted"

defined_functions "$stagio_lib" >"$tmp/have"
comm -23 "$tmp/wanted" "$tmp/have" >"$tmp/missing"

if [ -s "$tmp/missing" ]; then
  missing=$(wc -l <"$tmp/missing" | tr -d " ")
  echo "$stagio_lib does not define $missing function(s) that $mpi_lib defines:"
  sed 's/^/  /' "$tmp/missing"
  exit 1
fi
echo "stagio wraps all $file_functions MPI_File_* functions of $mpi_lib" \
  "(and MPI_Init, MPI_Init_thread, MPI_Finalize)"
