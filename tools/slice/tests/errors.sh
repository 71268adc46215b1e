#!/usr/bin/env bash
# stagio-slice's own errors: each exits with its status, says why on stderr, and writes nothing.
# usage: errors.sh STAGIO_SLICE MPICC
set -u
slice=$1
mpicc=$2
work=$(mktemp -d)    # the inputs, which nothing may touch
logs=$(mktemp -d)    # what the tool prints
build=$(mktemp -d)   # a build directory with a compile_commands.json
trap 'rm -rf "$work" "$logs" "$build"' EXIT
flags=$("$mpicc" -show | tr ' ' '\n' | grep -E '^-I' | tr '\n' ' ')
failures=0

expect() {  # expect STATUS MESSAGE-PART -- ARGS...
  local status=$1 part=$2
  shift 3
  local before after
  before=$(ls -l --time-style=full-iso "$work")
  "$slice" "$@" > "$logs/out" 2> "$logs/err"
  local got=$?
  after=$(ls -l --time-style=full-iso "$work")
  if [[ $got -ne $status ]]; then
    echo "FAIL: $* exited $got, expected $status"; cat "$logs/err"; failures=$((failures + 1))
  elif ! grep -q -- "$part" "$logs/err"; then
    echo "FAIL: $* did not say '$part'"; cat "$logs/err"; failures=$((failures + 1))
  elif [[ "$before" != "$after" ]]; then
    echo "FAIL: $* wrote into the input's directory"; failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_File f;\n  MPI_File_open(MPI_COMM_WORLD, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, &f);\n  MPI_File_close(&f); MPI_Finalize(); return 0; }\n' > "$work/good.c"
printf 'int main(void) { return undeclared; }\n' > "$work/bad.c"
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' > "$work/nompiio.c"

expect 2 "no compile flags" -- "$work/good.c"
expect 1 "does not compile" -- "$work/bad.c" -- $flags
expect 3 "no MPI-IO call" -- "$work/nompiio.c" -- $flags
expect 0 "MPI_File_open in main -> stagio_prefetch_open" -- "$work/good.c" -- $flags
# good.c opens and closes a file and reads nothing: there is nothing to fetch, and the program
# is written unchanged, with the reason.
expect 0 "left unchanged: main's MPI-IO calls read or write nothing" -- "$work/good.c" \
  -o "$build/out" -- $flags
cmp -s "$work/good.c" "$build/out/good.c" || { echo "FAIL: -o did not copy good.c unchanged"; failures=$((failures + 1)); }
rm -rf "$build/out"
expect 2 "not both" -- "$work/good.c" -o "$build/out" --in-place -- $flags
expect 1 "does not compile" -- "$work/bad.c" -o "$build/out" -- $flags
expect 3 "no MPI-IO call" -- "$work/nompiio.c" -o "$build/out" -- $flags
[[ ! -e "$build/out" ]] || { echo "FAIL: a failed run created its -o directory"; failures=$((failures + 1)); }
printf 'not a directory\n' > "$build/file"
expect 2 "cannot write the report" -- "$work/good.c" --report "$build/file/report.json" \
  -o "$build/out" -- $flags
[[ ! -e "$build/out" ]] || { echo "FAIL: a report that cannot be written let sources be written"; failures=$((failures + 1)); }
expect 2 "cannot create" -- "$work/good.c" -o "$build/file/out" -- $flags
# The flags from a compilation database, as clang tools take them.
quoted=$(for flag in $flags; do printf '"%s", ' "$flag"; done)
printf '[{"directory": "%s", "file": "%s", "arguments": ["cc", %s"-c", "%s"]}]\n' \
  "$work" "$work/good.c" "$quoted" "$work/good.c" > "$build/compile_commands.json"
expect 0 "MPI_File_open in main -> stagio_prefetch_open" -- -p "$build" "$work/good.c"
exit $((failures > 0))
