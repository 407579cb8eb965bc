#!/usr/bin/env bash
# Builds team.c into a library with gcc -fopenmp (it needs libgomp), then main.c with nanocc
# linking that library (libgomp comes after libnanort-omp), and runs the program.
#   run.sh <nanocc> <gcc> <scratch folder> <folder of check.h>
set -euo pipefail
nanocc=$1 gcc=$2 scratch=$3 programs=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
"$gcc" -fopenmp -fPIC -shared "$here/team.c" -o "$scratch/libteam.so"
"$nanocc" -Wall -I"$programs" "$here/main.c" -L"$scratch" -lteam -Wl,-rpath,"$scratch" \
          -o "$scratch/omp_libgomp"
exec "$scratch/omp_libgomp"
