#!/usr/bin/env bash
# The nanocc / nanocxx wrappers' own options, each case checked on its exit status, its stdout
# and its stderr, with the exact expected texts (tests/plugin/wrappers.cmake).
#   check_wrappers.sh CASE
# Set by the test (cmake -E env): WRAPPERS (the folder of nanocc and nanocxx), VERSION,
# CLANG_C, CLANG_CXX, HOST_CC (a host compiler other than clang 19), PLUGIN, INCLUDE, LIBDIR,
# NVCC (the wrappers' default nvcc), PROGRAMS (tests/plugin/programs), SCRATCH, RUN (1: also
# run what --show printed and the program it builds), HOST_CC_OTHER (HOST_CC when it is not
# clang, else empty).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../support/check_streams.sh"
case_name=$1
unset NANORT_CC NANORT_CXX NANORT_NVCC NANORT_CUDA_ARCH
W=$WRAPPERS
S=$SCRATCH/$case_name
rm -rf "$S"
mkdir -p "$S"
export NANORT_OPENCL_CACHE=$S/opencl-program-cache NANORT_CPU_WORKERS=2

# The help of wrapper $1 for language $2, host compiler variable $3, host compiler $4.
expected_help() {
  cat <<EOF
Usage: $1 [options] files...

Compiles and links $2 programs that use nanort's task pragmas, as mpicc does for MPI:
it adds the pragma plugin, nanort's headers, the program's kernels and the runtime library
to the host compiler's command. Options not listed here go to the host compiler.

$1's options:
  --help, -help, -h        print this text (-h only as the sole argument: gcc takes -h NAME)
  --version                print nanort's version, then the host compiler's
  --show, -show, --showme  print the commands that would run, as a shell script, and run
                           nothing; temporary files are "\$tmp"/NAME, in a folder that the
                           script's first line makes and its last line removes
  --showme:compile         print the options that make clang 19 lower the pragmas
  --showme:link            print the options that link the runtime
  --cc=COMPILER            the host compiler (also $3); default clang 19, which lowers
                           the pragmas in the same compile. Any other compiler (gcc, g++,
                           mpicc) compiles the lowered source that clang 19 writes
  -k, --keep               keep the lowered sources (NAME.nanort.EXT in the current folder)
  --verbose                print each command on stderr as it runs
  --opencl-build-opts=O    build options of the embedded OpenCL program
  --cuda-arch=LIST         GPU architectures of the fatbin (also NANORT_CUDA_ARCH), e.g.
                           80,90: code for each, and PTX for the last. Default 80,90
  --nvcc=NVCC              the nvcc that compiles .cu files (also NANORT_NVCC); default
                           $NVCC
  --nvcc-opts=OPTS         more nvcc options (the command's -I, -D and -U are passed too)

OmpSs's mcc options, as Makefiles written for mcc use them:
  --ompss, --ompss-2       lower the pragmas (always on); define _OMPSS=1 (_OMPSS_2=1)
  --openmp, --opencl       accepted (always on)
  --cuda                   host code gets CUDA's vector types (float4, make_float4 ...) from
                           the CUDA toolkit of nvcc (as it does with .cu or .fatbin files)
  --no-openmp              compile the sources as they are, their pragmas not lowered (as mcc
                           does unless --ompss or --ompss-2 is given too)
  --no-copy-deps           device tasks move the data of their copy clauses only, unless
                           their target says copy_deps (--copy-deps: the default)
  --Wn,O,... --Wp,O,... --Wl,O,...
                           options O for the compile (n, p) or for the link (l, r, L)
  --Xcompiler O            as --Wn,O
  --cxx=COMPILER           as --cc
  -K, --keep-files, --keep-all-files
                           as -k; --output-dir=DIR keeps the lowered sources in DIR
  -y                       check the syntax only (-fsyntax-only)
  --output=FILE            as -o FILE
  --debug                  as -g
  --v                      as --verbose
  --instrument and Mercurium's own options (--variable=N:V, --profile=P, ...) are ignored,
  with a line on stderr that says why

Defaults that follow mcc's gcc: in C, implicit function declarations and implicit int are
warnings; nanocxx with a clang host compiler passes -fno-strict-return (a non-void function
that runs off its end returns an unspecified value, as g++ -O0 does, instead of trapping;
give -fstrict-return to have the trap).

Input files besides sources and objects (kernels are embedded when linking):
  FILE.cl                  OpenCL C kernels: the .cl files given make one OpenCL program
  FILE.cu                  CUDA kernels: nvcc compiles the .cu files given, as one unit, into
                           one fatbin
  FILE.fatbin              a fatbin made by nvcc -fatbin, embedded as it is (instead of .cu)
  FILE.o                   objects made by nvcc -c are linked as they are: with no .cu or
                           .fatbin given, the kernels of cuda tasks are found in them

Environment variables:
  NANORT_CC                nanocc's host compiler (as --cc)
  NANORT_CXX               nanocxx's host compiler (as --cc)
  NANORT_CUDA_ARCH         the fatbin's GPU architectures (as --cuda-arch)
  NANORT_NVCC              the nvcc to use (as --nvcc)

Steps that --show prints, which write the C source holding the kernels:
  $1 --embed-opencl=OUT.c [--opencl-build-opts=O] FILE.cl...
  $1 --embed-fatbin=OUT.c FILE.fatbin [SOURCE.cu...]
  $1 --embed-cuda-objects=OUT.c

The host compiler's own options: $4 --help
EOF
}

# Runs the script that --show printed (the last command's stdout) with a scratch folder of its
# own, then the program it built: the printed commands are complete, and leave nothing behind.
run_shown() {
  local program=$1
  if [ "$RUN" != 1 ]; then return; fi
  cp "$check_dir/stdout" "$S/build.sh"
  mkdir -p "$S/tmp"
  run_command 0 env TMPDIR="$S/tmp" bash -e "$S/build.sh"
  expect_stderr ""
  if [ -n "$(ls -A "$S/tmp")" ]; then check_fail "the script left files in its scratch folder"; fi
  run_command 0 "$program"
  expect_stdout_line "all results correct"
}

link_flags="-L$LIBDIR -lnanort-omp -lnanort -Wl,-rpath,$LIBDIR -lm"
# What every compile of a source gets: nanort's headers and the omp.h of libnanort-omp; a
# lowered source, mcc's declarations of the runtime's routines; C, implicit declarations
# kept warnings (nanocc.in).
inc="-I$INCLUDE -I$INCLUDE/nanort/omp"
legacy_c="-Wno-error=implicit-function-declaration -Wno-error=implicit-int"
inc_c="$inc -include nanort/ompss_compat.h $legacy_c"  # nanocc, lowered
inc_cxx="$inc -include nanort/ompss_compat.h -fno-strict-return" # nanocxx (clang), lowered
plain_c="$inc $legacy_c"                               # nanocc --no-openmp
# With CUDA kernels (--cuda, .cu, .fatbin): CUDA's vector types from the toolkit next to nvcc,
# or a line saying they are missing.
cuda_host="" cuda_note=""
cuda_include=""
if nvcc_path=$(command -v "$NVCC"); then
  for d in "$(dirname "$nvcc_path")" "$(dirname "$(readlink -f "$nvcc_path")")"; do
    if [ -e "$d/../include/vector_types.h" ]; then cuda_include=$(cd "$d/../include" && pwd); break; fi
  done
fi
if [ -n "$cuda_include" ]; then
  if [ "$cuda_include" != /usr/include ]; then cuda_host=" -isystem $cuda_include"; fi
  cuda_host+=" -include nanort/cuda_vector_types.h"
else
  cuda_note="nanocc: host code gets no CUDA vector types (float4, make_float4 ...): the CUDA toolkit's vector_types.h is not found next to nvcc ('$NVCC')"
fi
case "$case_name" in
  help) # --help, -help and -h alone: nanocc's own options on stdout, the compiler named last
    for form in --help -help -h; do
      run_command 0 "$W/nanocc" "$form"
      expect_stdout "$(expected_help nanocc C NANORT_CC "$CLANG_C")"
      expect_stderr ""
    done
    run_command 0 "$W/nanocxx" --help
    expect_stdout "$(expected_help nanocxx C++ NANORT_CXX "$CLANG_CXX")"
    expect_stderr ""
    # The host compiler in use, however chosen, is the one named.
    run_command 0 "$W/nanocc" --cc="$HOST_CC" --help
    expect_stdout "$(expected_help nanocc C NANORT_CC "$HOST_CC")"
    run_command 0 env NANORT_CXX="$HOST_CC" "$W/nanocxx" -help
    expect_stdout "$(expected_help nanocxx C++ NANORT_CXX "$HOST_CC")"
    ;;
  version) # nanort's version, then the host compiler's
    run_command 0 "$W/nanocc" --version
    expect_stdout_of eval 'echo "nanocc (nanort $VERSION)"; "$CLANG_C" --version'
    expect_stderr ""
    run_command 0 "$W/nanocxx" --version
    expect_stdout_of eval 'echo "nanocxx (nanort $VERSION)"; "$CLANG_CXX" --version'
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --version
    expect_stdout_of eval 'echo "nanocc (nanort $VERSION)"; "$HOST_CC" --version'
    expect_stderr ""
    ;;
  show_clang) # every step, kernels embedded, as a script that builds the program
    cd "$PROGRAMS"
    run_command 0 "$W/nanocc" --show opencl_saxpy.c saxpy.cl --opencl-build-opts=-DSCALE=2.0f \
                -o "$S/saxpy"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$W/nanocc --embed-opencl=\"\$tmp\"/opencl_kernels.c --opencl-build-opts=-DSCALE=2.0f saxpy.cl
$CLANG_C -x c -c \"\$tmp\"/opencl_kernels.c -I$INCLUDE -o \"\$tmp\"/opencl_kernels.o
$CLANG_C -fplugin=$PLUGIN $inc_c opencl_saxpy.c -o $S/saxpy \"\$tmp\"/opencl_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    if [ -e "$S/saxpy" ]; then check_fail "--show built $S/saxpy"; fi
    run_shown "$S/saxpy"
    # The spellings of mpicc and Open MPI, one command without kernels.
    for form in -show --showme; do
      run_command 0 "$W/nanocxx" "$form" -std=c++17 tasks.cpp -o "$S/tasks"
      expect_stdout "$CLANG_CXX -fplugin=$PLUGIN $inc_cxx -std=c++17 tasks.cpp -o $S/tasks $link_flags"
    done
    ;;
  show_host_compiler) # another host compiler: clang 19 lowers, that compiler compiles
    cd "$PROGRAMS"
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --show opencl_saxpy.c saxpy.cl \
                --opencl-build-opts=-DSCALE=2.0f -o "$S/saxpy"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$W/nanocc --embed-opencl=\"\$tmp\"/opencl_kernels.c --opencl-build-opts=-DSCALE=2.0f saxpy.cl
$HOST_CC -x c -c \"\$tmp\"/opencl_kernels.c -I$INCLUDE -o \"\$tmp\"/opencl_kernels.o
$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=\"\$tmp\"/opencl_saxpy.nanort.c -fplugin-arg-nanort-lower-only $inc_c opencl_saxpy.c
$HOST_CC $inc_c -iquote . \"\$tmp\"/opencl_saxpy.nanort.c -o $S/saxpy -Wno-unknown-pragmas \"\$tmp\"/opencl_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    if [ -e "$S/saxpy" ]; then check_fail "--show built $S/saxpy"; fi
    run_shown "$S/saxpy"
    # -c without -o; -k keeps the lowered source in the current folder (no scratch folder).
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --show -c function_tasks.c
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=\"\$tmp\"/function_tasks.nanort.c -fplugin-arg-nanort-lower-only $inc_c function_tasks.c
$HOST_CC $inc_c -c -Wno-unknown-pragmas -iquote . \"\$tmp\"/function_tasks.nanort.c -o function_tasks.o
rm -rf \"\$tmp\""
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --show -k -c function_tasks.c
    expect_stdout "$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=./function_tasks.nanort.c -fplugin-arg-nanort-lower-only $inc_c function_tasks.c
$HOST_CC $inc_c -c -Wno-unknown-pragmas -iquote . ./function_tasks.nanort.c -o function_tasks.o"
    ;;
  show_cuda) # nvcc's fatbin, embedded; the program runs its smp versions where there is no GPU
    cd "$PROGRAMS"
    run_command 0 "$W/nanocc" --show --cuda-arch=75 cuda_multi_device.c kernels/cuda_kernels.cu \
                -o "$S/cuda_multi_device"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
printf '#include \"%s\"\n' $PROGRAMS/kernels/cuda_kernels.cu > \"\$tmp\"/cuda_kernels.cu
$NVCC -fatbin -gencode arch=compute_75,code=sm_75 -gencode arch=compute_75,code=compute_75 -o \"\$tmp\"/cuda_kernels.fatbin \"\$tmp\"/cuda_kernels.cu
$W/nanocc --embed-fatbin=\"\$tmp\"/cuda_kernels.c \"\$tmp\"/cuda_kernels.fatbin kernels/cuda_kernels.cu
$CLANG_C -x c -c \"\$tmp\"/cuda_kernels.c -I$INCLUDE -o \"\$tmp\"/cuda_kernels.o
$CLANG_C -fplugin=$PLUGIN $inc_c$cuda_host cuda_multi_device.c -o $S/cuda_multi_device \"\$tmp\"/cuda_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr "$cuda_note"
    run_shown "$S/cuda_multi_device"
    ;;
  show_fatbin_objects) # a fatbin given as it is; objects made by nvcc -c (a .nv_fatbin section)
    cd "$PROGRAMS"
    : > "$S/kernels.fatbin"
    printf 'a .nv_fatbin section' > "$S/kernels.o"
    run_command 0 "$W/nanocc" --show function_tasks.c "$S/kernels.fatbin" -o "$S/p"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$W/nanocc --embed-fatbin=\"\$tmp\"/cuda_kernels.c $S/kernels.fatbin
$CLANG_C -x c -c \"\$tmp\"/cuda_kernels.c -I$INCLUDE -o \"\$tmp\"/cuda_kernels.o
$CLANG_C -fplugin=$PLUGIN $inc_c$cuda_host function_tasks.c -o $S/p \"\$tmp\"/cuda_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr "$cuda_note"
    run_command 0 "$W/nanocc" --show function_tasks.c "$S/kernels.o" -o "$S/p"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$W/nanocc --embed-cuda-objects=\"\$tmp\"/cuda_objects.c
$CLANG_C -x c -c \"\$tmp\"/cuda_objects.c -I$INCLUDE -o \"\$tmp\"/cuda_objects.o
$CLANG_C -fplugin=$PLUGIN $inc_c function_tasks.c $S/kernels.o -o $S/p \"\$tmp\"/cuda_objects.o $LIBDIR/libnanort_cuda_objects.a -lstdc++ $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    if [ -e "$S/p" ]; then check_fail "--show built $S/p"; fi
    ;;
  mcc_flags) # OmpSs's mcc options: mcc's meaning, or accepted with a line that says why not
    cd "$PROGRAMS"
    c="$CLANG_C -fplugin=$PLUGIN"
    # --ompss and --ompss-2 define _OMPSS and _OMPSS_2; --openmp, --opencl, --no-opencl,
    # --no-cuda are accepted; --cuda gives host code CUDA's vector types.
    run_command 0 "$W/nanocc" --show --ompss --openmp --opencl --no-opencl --no-cuda -c function_tasks.c
    expect_stdout "$c $inc_c -D_OMPSS=1 -c function_tasks.c"
    expect_stderr ""
    run_command 0 "$W/nanocc" --show --ompss-2 -c function_tasks.c
    expect_stdout "$c $inc_c -D_OMPSS_2=1 -c function_tasks.c"
    run_command 0 "$W/nanocc" --show --ompss --cuda -c function_tasks.c
    expect_stdout "$c $inc_c$cuda_host -D_OMPSS=1 -c function_tasks.c"
    expect_stderr "$cuda_note"
    run_command 0 "$W/nanocxx" --show --cuda -c tasks.cpp
    expect_stdout "$CLANG_CXX -fplugin=$PLUGIN $inc_cxx$cuda_host -c tasks.cpp"
    # --no-openmp: the sources as they are, without the plugin (and without _OMPSS); with
    # --ompss or --ompss-2 the pragmas are lowered, as mcc does; of --openmp and --no-openmp
    # the last counts.
    run_command 0 "$W/nanocc" --show --no-openmp -Wall -c function_tasks.c
    expect_stdout "$CLANG_C $plain_c -Wall -c function_tasks.c"
    expect_stderr ""
    run_command 0 "$W/nanocc" --show --no-openmp function_tasks.c -o "$S/p"
    expect_stdout "$CLANG_C $plain_c function_tasks.c -o $S/p $link_flags"
    run_command 0 "$W/nanocc" --show --do-not-process-file --ompss -c function_tasks.c
    expect_stdout "$CLANG_C $plain_c -c function_tasks.c"
    run_command 0 "$W/nanocc" --show --ompss --no-openmp -c function_tasks.c
    expect_stdout "$c $inc_c -D_OMPSS=1 -c function_tasks.c"
    run_command 0 "$W/nanocc" --show --no-openmp --ompss-2 -c function_tasks.c
    expect_stdout "$c $inc_c -D_OMPSS_2=1 -c function_tasks.c"
    run_command 0 "$W/nanocc" --show --no-openmp --openmp -c function_tasks.c
    expect_stdout "$c $inc_c -c function_tasks.c"
    run_command 0 "$W/nanocc" --show --openmp --no-openmp -c function_tasks.c
    expect_stdout "$CLANG_C $plain_c -c function_tasks.c"
    if [ -n "$HOST_CC_OTHER" ]; then
      run_command 0 env NANORT_CC="$HOST_CC_OTHER" "$W/nanocc" --show --no-openmp -c function_tasks.c
      expect_stdout "$HOST_CC_OTHER $plain_c -c function_tasks.c"
    fi
    # The file compiles: its pragmas are ignored, not lowered.
    printf '#include <omp.h>\nint main(void) {\n  int s = 0;\n#pragma omp parallel for reduction(+ : s)\n  for (int i = 0; i < 4; ++i) s += i;\n  return s == 6 && omp_get_wtick() > 0 ? 0 : 1;\n}\n' > "$S/plain.c"
    if [ "$RUN" = 1 ]; then
      run_command 0 "$W/nanocc" --no-openmp -Wall "$S/plain.c" -o "$S/plain"
      expect_stderr ""
      run_command 0 "$S/plain"
    fi
    run_command 1 "$W/nanocc" -c "$S/plain.c" -o "$S/plain.o"
    expect_stderr "$S/plain.c:4:13: error: OpenMP directive '#pragma omp parallel' is not supported by nanort (supported: task, taskwait, taskgroup, taskloop, taskiter, taskgraph, target, critical, atomic, declare reduction)
    4 | #pragma omp parallel for reduction(+ : s)
      |             ^
$S/plain.c:4:13: note: OmpSs programs need no parallel region: tasks run on every CPU worker from main on; remove the line and keep the tasks in it (a 'parallel for' loop becomes '#pragma omp taskloop')
1 error generated."
    # --no-copy-deps (or --variable=copy_deps_by_default:0): the plugin's argument, in the
    # compile or in the lowering step; --copy-deps (the default) after it undoes it.
    run_command 0 "$W/nanocc" --show --no-copy-deps -c function_tasks.c
    expect_stdout "$c -fplugin-arg-nanort-no-copy-deps $inc_c -c function_tasks.c"
    run_command 0 "$W/nanocc" --show --variable=copy_deps_by_default:0 -c function_tasks.c
    expect_stdout "$c -fplugin-arg-nanort-no-copy-deps $inc_c -c function_tasks.c"
    expect_stderr ""
    # Mercurium's switch for function tasks that return a value: always on here, silently.
    run_command 0 "$W/nanocc" --show --variable=enable_nonvoid_function_tasks:1 -c function_tasks.c
    expect_stdout "$c $inc_c -c function_tasks.c"
    expect_stderr ""
    run_command 0 "$W/nanocc" --show --no-copy-deps --copy-deps -c function_tasks.c
    expect_stdout "$c $inc_c -c function_tasks.c"
    if [ -n "$HOST_CC_OTHER" ]; then
      run_command 0 env NANORT_CC="$HOST_CC_OTHER" "$W/nanocc" --show -k --no-copy-deps -c function_tasks.c
      expect_stdout "$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=./function_tasks.nanort.c -fplugin-arg-nanort-lower-only -fplugin-arg-nanort-no-copy-deps $inc_c function_tasks.c
$HOST_CC_OTHER $inc_c -c -Wno-unknown-pragmas -iquote . ./function_tasks.nanort.c -o function_tasks.o"
    fi
    # What it does to device tasks that say nothing of copy_deps (kept in --output-dir).
    printf '%s\n' '#pragma omp target device(opencl) ndrange(1, n)' \
      '#pragma omp task inout([n]x)' '__kernel void k1(int n, __global float *x);' \
      '#pragma omp target device(opencl) ndrange(1, n) copy_deps' \
      '#pragma omp task inout([n]x)' '__kernel void k2(int n, __global float *x);' \
      '#pragma omp target device(opencl) ndrange(1, n) no_copy_deps copy_inout([n]x)' \
      '#pragma omp task inout([n]x)' '__kernel void k3(int n, __global float *x);' \
      '#pragma omp task inout([n]x)' 'void cpu(int n, float *x) { x[0] = n; }' > "$S/copy.c"
    mkdir -p "$S/kept"
    run_command 0 "$W/nanocc" -K --output-dir="$S/kept" --no-copy-deps -c "$S/copy.c" -o "$S/copy.o"
    expect_stderr ""
    count() { grep -c -F "$1" "$S/kept/copy.nanort.c" || true; }
    if [ "$(count 'nanort_task_set_copy_deps(nanort_t, 0);')" != 2 ] ||
       [ "$(count 'nanort_task_set_copy_deps(nanort_t, 1);')" != 1 ]; then
      check_fail "with --no-copy-deps, k1 and k3 do not copy their dependences, k2 does: $(grep -n copy_deps "$S/kept/copy.nanort.c")"
    fi
    run_command 0 "$W/nanocc" -K --output-dir="$S/kept" -c "$S/copy.c" -o "$S/copy.o"
    if [ "$(count 'nanort_task_set_copy_deps(nanort_t, 0);')" != 1 ]; then
      check_fail "without --no-copy-deps, only k3 does not copy: $(grep -n copy_deps "$S/kept/copy.nanort.c")"
    fi
    # --W<steps>,<options> and --Xcompiler: compile options always, link options (l, r; L at
    # the end) only when the command links.
    run_command 0 "$W/nanocc" --show --Wn,-O3,-g --Wp,-DX=1 --Wl,-L/opt/lib,-lm --WL,-lz \
                --Xcompiler -fno-fast-math function_tasks.c -o "$S/p"
    expect_stdout "$c $inc_c -O3 -g -DX=1 -L/opt/lib -lm -fno-fast-math function_tasks.c -o $S/p ${link_flags% -lm} -lz -lm"
    expect_stderr ""
    run_command 0 "$W/nanocc" --show --Wn,-O3 --Wl,-lm --Wr,-lm --WL,-lz -c function_tasks.c
    expect_stdout "$c $inc_c -O3 -c function_tasks.c"
    # The other spellings: -K and --output-dir, --debug, --output, -y, --cxx, --v.
    run_command 0 "$W/nanocc" --show -K --output-dir="$S/kept" --debug --output="$S/p" function_tasks.c
    expect_stdout "$c -fplugin-arg-nanort-emit-dir=$S/kept $inc_c -g -o $S/p function_tasks.c $link_flags"
    run_command 0 "$W/nanocc" --show --keep-files -y function_tasks.c
    expect_stdout "$c -fplugin-arg-nanort-emit-dir=. $inc_c -fsyntax-only function_tasks.c"
    run_command 1 "$W/nanocxx" --cxx=no-such-compiler tasks.cpp
    expect_stderr "nanocxx: the host compiler 'no-such-compiler' is not found (set it with --cc= or NANORT_CXX)"
    run_command 0 "$W/nanocc" --v -c function_tasks.c -o "$S/f.o"
    expect_stdout ""
    expect_stderr "$c $inc_c -c function_tasks.c -o $S/f.o"
    if [ ! -s "$S/f.o" ]; then check_fail "--v did not build $S/f.o"; fi
    # Accepted and ignored, each with the reason.
    run_command 0 "$W/nanocc" --show --instrument --instrumentation --variable=nanos_main_enabled:1 \
                --untied-tasks --cluster --dlb --ld=ld --cpp=cpp --std=c99 --profile=mcc \
                --pp-stdout --disable-gxx-traits --do-not-warn-config -c function_tasks.c
    expect_stdout "$c $inc_c -c function_tasks.c"
    expect_stderr "nanocc: --instrument is ignored: nanort traces a program at run time instead (NANORT_TRACE=trace.json, NANORT_STATS=1)
nanocc: --instrumentation is ignored: nanort traces a program at run time instead (NANORT_TRACE=trace.json, NANORT_STATS=1)
nanocc: --variable=nanos_main_enabled:1 is ignored: it sets a variable of Mercurium's compiler passes, which nanocc does not have
nanocc: --untied-tasks is ignored: a nanort task runs to its end on the thread that starts it
nanocc: --cluster is ignored: nanort runs a program in one process (OmpSs@Cluster has no equivalent)
nanocc: --dlb is ignored: nanort has no DLB (dynamic load balancing) support
nanocc: --ld=ld is ignored: the host compiler links
nanocc: --cpp=cpp is ignored: the host compiler preprocesses
nanocc: --std=c99 is ignored: it sets the language of Mercurium's own parser (-std=c99 sets the compiler's)
nanocc: --profile=mcc is ignored: it sets Mercurium's own compiler passes, which nanocc does not have
nanocc: --pp-stdout is ignored: it sets Mercurium's own compiler passes, which nanocc does not have
nanocc: --disable-gxx-traits is ignored: it sets Mercurium's own compiler passes, which nanocc does not have
nanocc: --do-not-warn-config is ignored: it sets Mercurium's own compiler passes, which nanocc does not have"
    # Any other --option goes to the compiler, which names it.
    run_command 1 "$W/nanocc" --bogus-mcc-flag -c function_tasks.c -o "$S/x.o"
    expect_stderr "$(basename "$CLANG_C"): error: unknown argument: '--bogus-mcc-flag'"
    ;;
  showme) # Open MPI's --showme:compile and --showme:link
    run_command 0 "$W/nanocc" --showme:compile
    expect_stdout "-fplugin=$PLUGIN $inc_c"
    expect_stderr ""
    run_command 0 "$W/nanocxx" --showme:compile
    expect_stdout "-fplugin=$PLUGIN $inc_cxx"
    run_command 0 "$W/nanocc" --showme:link
    expect_stdout "$link_flags"
    expect_stderr ""
    run_command 1 env NANORT_CC="$HOST_CC" "$W/nanocc" --showme:compile
    expect_stdout ""
    expect_stderr "nanocc: --showme:compile: the host compiler '$HOST_CC' does not load the pragma plugin, only clang 19 does (nanocc --show prints the steps for '$HOST_CC')"
    run_command 2 "$W/nanocc" --showme:libs
    expect_stdout ""
    expect_stderr "nanocc: unknown option '--showme:libs': --showme:compile and --showme:link are known"
    ;;
  missing_inputs) # a file that cannot be read is named before any tool runs
    cd "$S"
    p=$PROGRAMS
    mkdir folder.cl
    for run in "nanocc|missing.c|missing.c" \
               "nanocc|missing.cl|$p/function_tasks.c missing.cl" \
               "nanocc|missing.cu|$p/function_tasks.c missing.cu" \
               "nanocc|missing.fatbin|$p/function_tasks.c missing.fatbin" \
               "nanocc|missing.c|--show missing.c" \
               "nanocxx|missing.cpp|-c missing.cpp" \
               "nanocxx|missing.cl|$p/tasks.cpp missing.cl" \
               "nanocc|missing.cl|--embed-opencl=$S/kernels.c missing.cl"; do
      IFS='|' read -r wrapper file words <<< "$run"
      read -r -a words <<< "$words"
      run_command 1 "$W/$wrapper" "${words[@]}"
      expect_stdout ""
      expect_stderr "$wrapper: cannot read '$file': no such file"
    done
    run_command 1 "$W/nanocc" "$p/function_tasks.c" folder.cl
    expect_stderr "nanocc: cannot read 'folder.cl': it is a folder"
    run_command 1 "$W/nanocc" --cc=no-such-compiler "$p/function_tasks.c"
    expect_stderr "nanocc: the host compiler 'no-such-compiler' is not found (set it with --cc= or NANORT_CC)"
    run_command 1 env NANORT_CXX=no-such-compiler "$W/nanocxx" "$p/tasks.cpp"
    expect_stderr "nanocxx: the host compiler 'no-such-compiler' is not found (set it with --cc= or NANORT_CXX)"
    if [ -n "$(ls -A | grep -v '^folder.cl$')" ]; then check_fail "files were made: $(ls -A)"; fi
    ;;
  *) echo "check_wrappers.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
checks_done "$case_name"
