#!/usr/bin/env bash
# Builds tests/mpi/annotated_allgather.c with MPI's and nanort's compiler wrappers together,
# one way or the other, then runs it with mpiexec.
#   annotated_mpi.sh nanocc-over-mpicc|mpicc-over-nanocc NANOCC MPICC MPIEXEC RANKS LIBDIR SOURCE OUT
set -euo pipefail
mode=$1 nanocc=$2 mpicc=$3 mpiexec=$4 ranks=$5 libdir=$6 source=$7 out=$8
mkdir -p "$(dirname "$out")"
link=(-L"$libdir" -lnanort-mpi -Wl,-rpath,"$libdir")
case $mode in
  nanocc-over-mpicc) NANORT_CC=$mpicc "$nanocc" -Wall "$source" -o "$out" "${link[@]}" ;;
  mpicc-over-nanocc) OMPI_CC=$nanocc MPICH_CC=$nanocc "$mpicc" -Wall "$source" -o "$out" "${link[@]}" ;;
  *) echo "annotated_mpi.sh: unknown mode $mode" >&2; exit 2 ;;
esac
exec "$mpiexec" -n "$ranks" "$out"
