#!/usr/bin/env bash
# The nanocc / nanocxx wrappers' own options, each case checked on its exit status, its stdout
# and its stderr, with the exact expected texts (tests/plugin/wrappers.cmake).
#   check_wrappers.sh CASE
# Set by the test (cmake -E env): WRAPPERS (the folder of nanocc and nanocxx), VERSION,
# CLANG_C, CLANG_CXX, HOST_CC (a host compiler other than clang 19), PLUGIN, INCLUDE, LIBDIR,
# NVCC (the wrappers' default nvcc), PROGRAMS (tests/plugin/programs), SCRATCH, RUN (1: also
# run what --show printed and the program it builds).
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
  --opencl-build-opts=O    build options of the embedded OpenCL program
  --cuda-arch=LIST         GPU architectures of the fatbin (also NANORT_CUDA_ARCH), e.g.
                           80,90: code for each, and PTX for the last. Default 80,90
  --nvcc=NVCC              the nvcc that compiles .cu files (also NANORT_NVCC); default
                           $NVCC
  --nvcc-opts=OPTS         more nvcc options (the command's -I, -D and -U are passed too)
  --ompss, --opencl, --cuda
                           accepted for compatibility with OmpSs's mcc (always on)

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

link_flags="-L$LIBDIR -lnanort -Wl,-rpath,$LIBDIR"
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
$CLANG_C -fplugin=$PLUGIN -I$INCLUDE opencl_saxpy.c -o $S/saxpy \"\$tmp\"/opencl_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    if [ -e "$S/saxpy" ]; then check_fail "--show built $S/saxpy"; fi
    run_shown "$S/saxpy"
    # The spellings of mpicc and Open MPI, one command without kernels.
    for form in -show --showme; do
      run_command 0 "$W/nanocxx" "$form" -std=c++17 tasks.cpp -o "$S/tasks"
      expect_stdout "$CLANG_CXX -fplugin=$PLUGIN -I$INCLUDE -std=c++17 tasks.cpp -o $S/tasks $link_flags"
    done
    ;;
  show_host_compiler) # another host compiler: clang 19 lowers, that compiler compiles
    cd "$PROGRAMS"
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --show opencl_saxpy.c saxpy.cl \
                --opencl-build-opts=-DSCALE=2.0f -o "$S/saxpy"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$W/nanocc --embed-opencl=\"\$tmp\"/opencl_kernels.c --opencl-build-opts=-DSCALE=2.0f saxpy.cl
$HOST_CC -x c -c \"\$tmp\"/opencl_kernels.c -I$INCLUDE -o \"\$tmp\"/opencl_kernels.o
$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=\"\$tmp\"/opencl_saxpy.nanort.c -fplugin-arg-nanort-lower-only -I$INCLUDE opencl_saxpy.c
$HOST_CC -I$INCLUDE -iquote . \"\$tmp\"/opencl_saxpy.nanort.c -o $S/saxpy -Wno-unknown-pragmas \"\$tmp\"/opencl_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    if [ -e "$S/saxpy" ]; then check_fail "--show built $S/saxpy"; fi
    run_shown "$S/saxpy"
    # -c without -o; -k keeps the lowered source in the current folder (no scratch folder).
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --show -c function_tasks.c
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=\"\$tmp\"/function_tasks.nanort.c -fplugin-arg-nanort-lower-only -I$INCLUDE function_tasks.c
$HOST_CC -I$INCLUDE -c -Wno-unknown-pragmas -iquote . \"\$tmp\"/function_tasks.nanort.c -o function_tasks.o
rm -rf \"\$tmp\""
    run_command 0 env NANORT_CC="$HOST_CC" "$W/nanocc" --show -k -c function_tasks.c
    expect_stdout "$CLANG_C -fsyntax-only -fplugin=$PLUGIN -fplugin-arg-nanort-emit=./function_tasks.nanort.c -fplugin-arg-nanort-lower-only -I$INCLUDE function_tasks.c
$HOST_CC -I$INCLUDE -c -Wno-unknown-pragmas -iquote . ./function_tasks.nanort.c -o function_tasks.o"
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
$CLANG_C -fplugin=$PLUGIN -I$INCLUDE cuda_multi_device.c -o $S/cuda_multi_device \"\$tmp\"/cuda_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
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
$CLANG_C -fplugin=$PLUGIN -I$INCLUDE function_tasks.c -o $S/p \"\$tmp\"/cuda_kernels.o $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    run_command 0 "$W/nanocc" --show function_tasks.c "$S/kernels.o" -o "$S/p"
    expect_stdout "tmp=\$(mktemp -d \"\${TMPDIR:-/tmp}/nanort.XXXXXX\")
$W/nanocc --embed-cuda-objects=\"\$tmp\"/cuda_objects.c
$CLANG_C -x c -c \"\$tmp\"/cuda_objects.c -I$INCLUDE -o \"\$tmp\"/cuda_objects.o
$CLANG_C -fplugin=$PLUGIN -I$INCLUDE function_tasks.c $S/kernels.o -o $S/p \"\$tmp\"/cuda_objects.o $LIBDIR/libnanort_cuda_objects.a -lstdc++ $link_flags
rm -rf \"\$tmp\""
    expect_stderr ""
    if [ -e "$S/p" ]; then check_fail "--show built $S/p"; fi
    ;;
  showme) # Open MPI's --showme:compile and --showme:link
    run_command 0 "$W/nanocc" --showme:compile
    expect_stdout "-fplugin=$PLUGIN -I$INCLUDE"
    expect_stderr ""
    run_command 0 "$W/nanocxx" --showme:compile
    expect_stdout "-fplugin=$PLUGIN -I$INCLUDE"
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
