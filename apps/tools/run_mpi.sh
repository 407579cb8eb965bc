#!/usr/bin/env bash
# The NBody MPI benchmark: apps/nbody-mpi's native and annotated versions side by side in one
# run, on 1 and 2 ranks with one GPU each (CUDA versions), and on 4 ranks on the CPU (OpenCL
# versions on PoCL's CPU device: only PoCL's ICD is shown to them, the CPU workers split among
# the ranks; with --paper's bodies a step takes seconds on a CPU, so these runs take a quarter
# of them, 65536, in one block per rank as the native version's one kernel, and in blocks of
# 4096). Writes OUT/results.txt (RESULT lines, with the machine, date and command) and each
# run's output in OUT/logs/.
#
#   apps/tools/run_mpi.sh BUILD OUT [--small] [--reps R] [--gpu-ranks "1 2 4"]
#
# --gpu-ranks: the rank counts of the CUDA runs, one GPU each (default "1 2").
set -uo pipefail
. "$(dirname "$0")/record_run.sh"
if [ $# -lt 2 ]; then sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
build=$1 out=$2
shift 2
size=--paper cpu_sizes="--n=65536,--bs=16384 --n=65536,--bs=4096" reps=3 gpu_ranks="1 2"
while [ $# -gt 0 ]; do
  case $1 in
    --small) size="" cpu_sizes="--n=1024" ;;
    --reps) reps=$2; shift ;;
    --gpu-ranks) gpu_ranks=$2; shift ;;
    *) echo "run_mpi.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
dir=$build/apps/nbody-mpi
mkdir -p "$out/logs" "$out/pocl-only"
results=$out/results.txt
{
  echo "# machine: $(hostname)"
  echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# command: apps/tools/run_mpi.sh BUILD OUT ${size:---small} --reps $reps --gpu-ranks \"$gpu_ranks\" (CPU runs: $cpu_sizes)"
  nvidia-smi -L 2>/dev/null | sed 's/^/# gpu: /'
  echo "# cpus: $(nproc); $(mpirun --version 2>/dev/null | head -n 1)"
} >"$results"
# Not bound (Open MPI binds each of one or two ranks to a single core): every rank may use the
# node's cores, and the runtime takes its share of them (docs/mpi.md, "Running").
launcher=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH)
export NANORT_PERF_MODEL=off
failures=0
run() {  # label, ranks, program, size options, environment...
  local label=$1 ranks=$2 exe=$3 sizes=$4
  shift 4
  local log=$out/logs/$label.np$ranks.log
  local env_args=()
  for e in "$@"; do env_args+=(-x "$e"); done
  if [ ! -x "$exe" ]; then echo "# not built: $exe" >>"$results"; return; fi
  env "$@" timeout 300 "${launcher[@]}" "${env_args[@]}" -np "$ranks" "$exe" $sizes \
    --reps="$reps" >"$log" 2>&1
  record_run "$log" $? "$label on $ranks rank(s)" "ranks=$ranks"
}
cores=$(nproc)
for ranks in $gpu_ranks; do  # one GPU per rank (the runtime's share by local rank; one visible for one rank)
  visible=$(seq -s, 0 $((ranks - 1)))
  for v in native_cuda annotated_cuda; do
    run "$v" "$ranks" "$dir/nbody-mpi_$v" "$size" CUDA_VISIBLE_DEVICES="$visible" \
        NANORT_OPENCL_DEVICES=none
  done
done
# 4 ranks on the CPU: PoCL alone.
# The loaders differ: ocl-icd reads the ICD files of OCL_ICD_VENDORS, the Khronos loader (CUDA's
# libOpenCL) also loads every library OCL_ICD_FILENAMES names, so both name PoCL alone: its ICD
# file, or else the PoCL entry of the OCL_ICD_FILENAMES this machine sets.
pocl_lib=
for f in /etc/OpenCL/vendors/*pocl*.icd; do
  [ -e "$f" ] && cp "$f" "$out/pocl-only/" && pocl_lib=$(head -n 1 "$f" | tr -d '\r')
done
if [ -z "$pocl_lib" ]; then
  pocl_lib=$(echo "${OCL_ICD_FILENAMES:-}" | tr ':' '\n' | grep -m 1 pocl)
  [ -n "$pocl_lib" ] && echo "$pocl_lib" >"$out/pocl-only/pocl.icd"
fi
per_rank=$((cores / 4 > 0 ? cores / 4 : 1))
[ -n "$pocl_lib" ] || { echo "# SKIP: the 4 CPU ranks: no PoCL ICD found" >>"$results"; cpu_sizes=""; }
for sizes in $cpu_sizes; do
  for v in native_opencl annotated_opencl; do
    run "$v.${sizes##*=}" 4 "$dir/nbody-mpi_$v" "${sizes//,/ }" OCL_ICD_VENDORS="$out/pocl-only/" OCL_ICD_FILENAMES="$pocl_lib" \
        NANORT_CUDA_DEVICES=none NANORT_CPU_WORKERS=$per_rank POCL_MAX_PTHREAD_COUNT=$per_rank
  done
done
echo "run_mpi.sh: $failures failed run(s); results in $results"
[ $failures -eq 0 ]
