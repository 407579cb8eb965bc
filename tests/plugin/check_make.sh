#!/usr/bin/env bash
# Builds the OmpSs-style project in ompss_make/ with its own Makefile (CC = nanocc, found on
# PATH) in a scratch copy, then runs the three programs it builds.
#   check_make.sh <folder of nanocc> <scratch folder>
set -euo pipefail
wrappers=$1 scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
cp "$here"/ompss_make/* "$scratch"
cd "$scratch"
PATH=$wrappers:$PATH make
for p in stream-p stream-i stream-d; do
  printf '%s: ' "$p"
  "./$p"
done
