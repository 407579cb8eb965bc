#!/usr/bin/env bash
# The tiled Cholesky with nanort and with libgomp, side by side, at several thread counts:
#   compare.sh BUILD_DIR [n] [tiles] [threads] [repeats]
#   e.g. compare.sh build/release 2048 "64 32" "4 8 16 32" 3
# Prints one line per (tile, threads): the best GFlop/s of each over the repeats, and their ratio.
set -euo pipefail
build=$1 n=${2:-2048} tiles=${3:-"64 32"} threads=${4:-"4 8 16"} repeats=${5:-3}
nanort=$build/apps/cholesky/cholesky omp=$build/apps/cholesky/cholesky_omp
[ -x "$nanort" ] && [ -x "$omp" ] || { echo "compare.sh: $nanort or $omp is not built" >&2; exit 2; }
best() {  # the best GFlop/s of 'repeats' runs of a command; a wrong result stops the script
  local top=0 line rate
  for _ in $(seq "$repeats"); do
    line=$("$@" | tail -n 1)
    case $line in *": correct") ;; *) echo "compare.sh: $* gave: $line" >&2; exit 1 ;; esac
    rate=$(sed -n 's/.*(\([0-9.]*\) GFlop\/s).*/\1/p' <<<"$line")
    top=$(awk -v a="$top" -v b="$rate" 'BEGIN { print (b > a) ? b : a }')
  done
  echo "$top"
}
printf '%-6s %-8s %-8s %-14s %-14s %s\n' n tile threads "nanort GF/s" "libgomp GF/s" "nanort/libgomp"
for tile in $tiles; do
  for t in $threads; do
    a=$(NANORT_CPU_WORKERS=$t best "$nanort" "$n" "$tile")
    b=$(OMP_NUM_THREADS=$t best "$omp" "$n" "$tile")
    printf '%-6s %-8s %-8s %-14s %-14s %.2f\n' "$n" "$tile" "$t" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
  done
done
