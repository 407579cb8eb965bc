#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs, if any are missing. Needs root or sudo.
# Extra packages may be named as arguments (python3-matplotlib for apps/tools/results.py --plot).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3
  libtbb-dev libhwloc-dev
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd   # OpenCL: the ICD loader, PoCL's CPU device
  libgtest-dev libbenchmark-dev
  libstarpu-dev                 # side-by-side benchmarks
  libopenmpi-dev openmpi-bin    # MPI + tasks (nanort-mpi/, apps/nbody-mpi, tests/mpi)
  clang-19 libclang-19-dev llvm-19-dev   # the pragma plugin (pragma-plugin/)
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
