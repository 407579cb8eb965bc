#!/usr/bin/env bash
# Table II and scaling: runs every version of every application on 1, 2, ... GPUs of this
# machine, and writes what each printed (its RESULT line) to OUT/results.txt, with the
# machine, the date and the command; each run's whole output goes to OUT/logs/.
#
#   apps/tools/run_apps.sh BUILD OUT GPUS [--small] [--reps R] [--apps "matmul nbody"]
#                          [--counts "1 2"] [--rounds N]
#
# BUILD: a build tree with the applications (build/release); GPUS: the most GPUs to use; the
# counts run are 1, 2, 4, ... up to GPUS, and GPUS itself (or --counts). The paper-like sizes
# (--paper) unless --small. Every version sees the same GPUs: CUDA_VISIBLE_DEVICES=0..N-1
# (NVIDIA's OpenCL honours it too); the annotated CUDA versions run with no OpenCL device and
# the annotated OpenCL ones with no CUDA device, so each uses only its own kind; the StarPU
# versions (the peer) keep their performance models in OUT/starpu-home, calibrated by an untimed
# run before the first timed one. NBody's paper size has 4 blocks, one per GPU at most: a run whose
# counts go past 4 GPUs gives it as many blocks as its largest count (rounded up to a power of
# two) at every count, so that its speedups compare like with like. Heat is a one-GPU program: it
# runs at the count 1 only. --rounds N: the whole study N times over, so that each version's
# processes alternate with the others' (a machine's speed moves from one process to the next by
# more than the targets' margins); results.py then gives the median of the rounds and each
# round's annotated / native. results.py turns results.txt into the tables and the plot.
set -uo pipefail
. "$(dirname "$0")/record_run.sh"
if [ $# -lt 3 ]; then
  sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build=$1 out=$2 max=$3
shift 3
size=--paper reps=3 apps="saxpy matmul nbody julia krist heat" counts="" rounds=1
while [ $# -gt 0 ]; do
  case $1 in
    --small) size="" ;;
    --reps) reps=$2; shift ;;
    --apps) apps=$2; shift ;;
    --counts) counts=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) echo "run_apps.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
  echo "run_apps.sh: --rounds wants a count of 1 or more, not '$rounds'" >&2
  exit 2
fi
if [ -z "$counts" ]; then
  c=1
  while [ "$c" -lt "$max" ]; do counts="$counts $c"; c=$((c * 2)); done
  counts="$counts $max"
fi
mkdir -p "$out/logs"
results=$out/results.txt
{
  echo "# machine: $(hostname)"
  echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# command: apps/tools/run_apps.sh BUILD OUT $max ${size:---small} --reps $reps --counts \"${counts# }\" --rounds $rounds"
  nvidia-smi -L 2>/dev/null | sed 's/^/# gpu: /'
  echo "# cpus: $(nproc)"
} >"$results"
export NANORT_OPENCL_CACHE=${NANORT_OPENCL_CACHE:-$out/opencl-cache} NANORT_PERF_MODEL=off
failures=0
top=1
for count in $counts; do [ "$count" -gt "$top" ] && top=$count; done
nbody_blocks=4
while [ "$nbody_blocks" -lt "$top" ]; do nbody_blocks=$((nbody_blocks * 2)); done
for round in $(seq 1 "$rounds"); do
  for app in $apps; do
    app_size=$size
    if [ "$app" = nbody ] && [ "$size" = --paper ] && [ "$nbody_blocks" -gt 4 ]; then
      app_size="--paper --bs=$((262144 / nbody_blocks))"
    fi
    for count in $counts; do
      [ "$app" = heat ] && [ "$count" -gt 1 ] && continue
      visible=$(seq -s, 0 $((count - 1)))
      for version in native_cuda native_cuda_graph native_opencl annotated_cuda annotated_opencl \
                     annotated_mixed starpu_opencl; do
        exe=$build/apps/$app/${app}_$version
        [ -x "$exe" ] || continue
        env=(CUDA_VISIBLE_DEVICES="$visible")
        case $version in
          annotated_cuda) env+=(NANORT_OPENCL_DEVICES=none) ;;
          annotated_opencl) env+=(NANORT_CUDA_DEVICES=none) ;;
          # StarPU's performance models (dmda) in the run's folder, calibrated by an untimed run
          # first, as its users do (in the first round; the later ones keep the models). Its
          # workers unbound: on a machine whose cores it misreads it binds both OpenCL workers
          # to one core ("This will strongly degrade performance": NBody on two H200s 188.7 ms
          # bound, 91.7 unbound).
          starpu_opencl) env+=(STARPU_HOME="$out/starpu-home" STARPU_SILENT=1 STARPU_WORKERS_NOBIND=1)
                         if [ "$round" -eq 1 ]; then
                           env "${env[@]}" timeout 120 "$exe" $app_size --reps=2 \
                             >"$out/logs/$app.$version.$count.calibration.log" 2>&1 ||
                             echo "# calibration run failed (exit $?): $app $version on $count GPU(s)" >>"$results"
                         fi ;;
        esac
        log=$out/logs/$app.$version.$count.log
        [ "$rounds" -gt 1 ] && log=$out/logs/$app.$version.$count.r$round.log
        env "${env[@]}" timeout 120 "$exe" $app_size --reps="$reps" >"$log" 2>&1
        record_run "$log" $? "$app $version on $count GPU(s), round $round" \
          "gpus=$count round=$round"
      done
    done
  done
done
echo "run_apps.sh: $failures failed run(s); results in $results"
[ $failures -eq 0 ]
