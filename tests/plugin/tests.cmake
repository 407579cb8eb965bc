# Tests of the pragma plugin (included from tests/CMakeLists.txt when the plugin is built).
#
#   plugin.verify.<file>        each diagnostic, with clang's -verify (expected-error comments)
#   plugin.diagnostics.documented  the README's list of diagnostics is src/Diagnostics.def's
#   plugin.columns.*            exact line:column of errors, from the plugin and from clause
#                               expressions compiled by clang or by gcc through lowered source
#   plugin.warnings.*           warnings (off-by-one array sections): each one at its line and
#                               column, no others; -Werror and -w with both host compilers
#   plugin.golden.<file>        the lowered source of golden/<file>, compared with <file>.expected
#   plugin.run.<program>.clang  annotated programs compiled by clang 19 with the plugin in-process
#   plugin.run.<program>.gcc    the same programs lowered to source and compiled by the
#                               project's C/C++ compiler (the only variant in sanitizer builds,
#                               where the programs are built with the sanitizers too)
#   plugin.cuda.*               the wrappers' CUDA options, and a CUDA task without CUDA kernels
#   plugin.omp.libgomp          omp.h's routines in a program that also has libgomp
#   plugin.make.ompss.*         an OmpSs project built by its own Makefile, CC = nanocc
#   plugin.ompss_suite_runner   bench/ompss-suite/run_suite.py on its own small suite
#   plugin.package.*            nanort_annotate from the installed package (clang; CUDA kernels)
#
# The programs check their own results, print FAILED and exit non-zero when one is wrong.
set(plugin_dir ${CMAKE_CURRENT_SOURCE_DIR}/plugin)
set(plugin_bin ${CMAKE_CURRENT_BINARY_DIR}/plugin)
set(plugin_so $<TARGET_FILE:nanort_plugin>)
set(plugin_wrappers ${PROJECT_BINARY_DIR}/pragma-plugin)

# Diagnostics, with -verify.
foreach(file grammar.c association.c lowering_c.c lowering_more.c inline_c.c header.c
             single_source.c cuda.c versions.c sections.c nonvoid.c taskloop.c reductions.c
             local_tasks.c taskiter.c
             cxx_functions.cpp cxx_inline.cpp cxx_more.cpp versions.cpp nonvoid.cpp taskloop.cpp
             local_tasks.cpp)
  if(file MATCHES "\\.c$")
    set(compiler ${NANORT_CLANG_C})
  else()
    set(compiler ${NANORT_CLANG_CXX})
  endif()
  add_test(NAME plugin.verify.${file}
           COMMAND ${compiler} -fsyntax-only -ferror-limit=0 -fplugin=${plugin_so}
                   -Xclang -verify -I${PROJECT_SOURCE_DIR}/include ${file}
           WORKING_DIRECTORY ${plugin_dir}/diagnostics)
  set_tests_properties(plugin.verify.${file} PROPERTIES LABELS plugin TIMEOUT 60)
endforeach()

# Columns: the plugin's own errors, then errors inside clause expressions (clang in-process,
# and gcc through the lowered source).
add_test(NAME plugin.columns.pragma
         COMMAND ${plugin_dir}/check_output.sh
                 "columns.c:3:27: error: unknown clause 'outt' on '#pragma omp task'" --
                 ${NANORT_CLANG_C} -fsyntax-only -fplugin=${plugin_so} columns.c
         WORKING_DIRECTORY ${plugin_dir}/diagnostics)
add_test(NAME plugin.columns.expression.clang
         COMMAND ${plugin_dir}/check_output.sh
                 "expression_errors.c:2:22: error: use of undeclared identifier 'count'"
                 "expression_errors.c:7:38: error: use of undeclared identifier 'undeclared_priority'"
                 -- ${plugin_wrappers}/nanocc -fsyntax-only expression_errors.c
         WORKING_DIRECTORY ${plugin_dir}/diagnostics)
# A plugin argument it does not know.
add_test(NAME plugin.arguments.unknown
         COMMAND ${plugin_dir}/check_output.sh "nanort plugin: unknown argument 'bogus'" --
                 ${NANORT_CLANG_C} -fsyntax-only -fplugin=${plugin_so} -fplugin-arg-nanort-bogus
                 columns.c
         WORKING_DIRECTORY ${plugin_dir}/diagnostics)
# Array sections: one error at the offending part (a third part, a comma with its fix-its, a
# constant start before the base), in the user's words and columns.
add_test(NAME plugin.columns.sections
         COMMAND ${plugin_dir}/check_output.sh
                 "section_columns.c:2:26: error: an array section has at most two parts: start;length or start:end, the end included"
                 "section_columns.c:4:32: error: ',' in a subscript of a dependence is the comma operator, which keeps only the last value: did you mean ';' (start;length) or ':' (start:end)?"
                 "fix-it:\"section_columns.c\":{4:32-4:33}:\";\""
                 "fix-it:\"section_columns.c\":{4:32-4:33}:\":\""
                 "section_columns.c:6:23: error: in(x[-4;8]): the section starts at index -4, before x[0] (to name memory before a pointer, write (x - 4)[0;8])"
                 "section_columns.c:8:35: error: expected 'i = start;length', 'i = start:end' (the end included) or 'i = {a, b}', with ':step' after it if the step is not 1"
                 "4 errors generated."
                 -- ${NANORT_CLANG_C} -fsyntax-only -fdiagnostics-parseable-fixits
                 -fplugin=${plugin_so} section_columns.c
         WORKING_DIRECTORY ${plugin_dir}/diagnostics)
# A kernel task declared in a header (issue 19): an error in its clauses, where the calling
# file does not declare a name they use, is reported in the header, at the clause.
add_test(NAME plugin.columns.header.clang
         COMMAND ${plugin_dir}/check_output.sh
                 "kernel_header.h:3:49: error: use of undeclared identifier 'MAX_NUM_THREADS'"
                 -- ${plugin_wrappers}/nanocc -fsyntax-only kernel_header_user.c
         WORKING_DIRECTORY ${plugin_dir}/diagnostics)
# Reductions (issue 19): an operator that the item's type lacks, at the operator.
add_test(NAME plugin.columns.reduction
         COMMAND ${plugin_dir}/check_output.sh
                 "reductions.c:27:30: error: reduction operator '&' is not defined for type 'double' (item 'd')"
                 "reductions.c:30:30: error: reduction operator '+' is not defined for type 'struct pair' (item 'p')"
                 -- ${NANORT_CLANG_C} -fsyntax-only -fplugin=${plugin_so}
                 -I${PROJECT_SOURCE_DIR}/include reductions.c
         WORKING_DIRECTORY ${plugin_dir}/diagnostics)
set(column_tests plugin.columns.pragma plugin.columns.reduction plugin.columns.expression.clang plugin.arguments.unknown
                 plugin.columns.sections plugin.columns.header.clang)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU") # the expected text is gcc's
  add_test(NAME plugin.columns.expression.gcc
           COMMAND ${plugin_dir}/check_output.sh
                   "expression_errors.c:2:22: error: 'count' undeclared"
                   "expression_errors.c:7:38: error: 'undeclared_priority' undeclared"
                   -- ${plugin_wrappers}/nanocc -fsyntax-only expression_errors.c
           WORKING_DIRECTORY ${plugin_dir}/diagnostics)
  add_test(NAME plugin.columns.header.gcc
           COMMAND ${plugin_dir}/check_output.sh
                   "kernel_header.h:3:49: error: 'MAX_NUM_THREADS' undeclared"
                   -- ${plugin_wrappers}/nanocc -fsyntax-only kernel_header_user.c
           WORKING_DIRECTORY ${plugin_dir}/diagnostics)
  set_tests_properties(plugin.columns.expression.gcc plugin.columns.header.gcc PROPERTIES
                       ENVIRONMENT "NANORT_CC=${CMAKE_C_COMPILER};LC_ALL=C")
  list(APPEND column_tests plugin.columns.expression.gcc plugin.columns.header.gcc)
endif()
# check_output.sh exits 0 only when the command failed (not by a signal) with every fragment.
set_tests_properties(${column_tests} PROPERTIES LABELS plugin TIMEOUT 60)
# An error of the file's own (printf without <stdio.h>) in a file whose header declares a
# kernel task with OpenCL's keywords: it is the first error reported, not "unknown type name
# '__kernel'" in the header (issue 19).
nanort_add_checked_test(NAME plugin.columns.first_error STATUS 1
  EXPECT "\\Amissing_include.c:11:3: error: call to undeclared library function 'printf'"
  REJECT "__kernel" "__global" "FAILED"
  COMMAND ${NANORT_CLANG_C} -fsyntax-only -fplugin=${plugin_so}
          -I${PROJECT_SOURCE_DIR}/include missing_include.c
  WORKING_DIRECTORY ${plugin_dir}/diagnostics)
set_tests_properties(plugin.columns.first_error PROPERTIES LABELS plugin TIMEOUT 60)

# Array sections that are very likely off by one (issue 19): every warning and note, at its
# line and column, with its fix-it, and no other (the correct sections of the same files stay
# quiet); the compile succeeds.
foreach(file section_bounds.c section_bounds.cpp)
  if(file MATCHES "\\.c$")
    set(compiler ${NANORT_CLANG_C})
  else()
    set(compiler ${NANORT_CLANG_CXX})
  endif()
  nanort_add_checked_test(NAME plugin.warnings.${file}
    EXPECT "^diagnostics as expected$"
    COMMAND ${plugin_dir}/check_warnings.sh ${file}.expected --
            ${compiler} -fsyntax-only -fdiagnostics-parseable-fixits -fplugin=${plugin_so}
            -I${PROJECT_SOURCE_DIR}/include ${file}
    WORKING_DIRECTORY ${plugin_dir}/diagnostics)
  set_tests_properties(plugin.warnings.${file} PROPERTIES LABELS plugin TIMEOUT 60)
endforeach()
# The warning follows -Werror (an error: the build fails) and -w (nothing), with clang 19 and
# with another host compiler (the lowering step gets both options), on a program that is
# correct (programs/section_bounds.c, plugin.run.section_bounds_c.*).
set(section_bounds_warning "section 'x[i:i+BS]' in in() covers BS+1 elements, i to i+BS (the bound after ':' is included)")
foreach(variant clang gcc)
  set(environment "")
  if(variant STREQUAL "gcc")
    if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
      continue()
    endif()
    set(environment "NANORT_CC=${CMAKE_C_COMPILER}")
  endif()
  add_test(NAME plugin.warnings.werror.${variant}
           COMMAND ${plugin_dir}/check_output.sh
                   "section_bounds.c:17:25: error: ${section_bounds_warning}"
                   "1 error generated."
                   -- ${plugin_wrappers}/nanocc -Werror -I${plugin_dir}/programs -fsyntax-only
                   section_bounds.c
           WORKING_DIRECTORY ${plugin_dir}/programs)
  nanort_add_checked_test(NAME plugin.warnings.w.${variant}
    REJECT "warning" "error" "note" "FAILED"
    COMMAND ${plugin_wrappers}/nanocc -w -I${plugin_dir}/programs -fsyntax-only section_bounds.c
    WORKING_DIRECTORY ${plugin_dir}/programs)
  set_tests_properties(plugin.warnings.werror.${variant} plugin.warnings.w.${variant} PROPERTIES
                       LABELS plugin TIMEOUT 120 ENVIRONMENT "${environment}")
endforeach()

# The list of diagnostics in pragma-plugin/README.md is the table of src/Diagnostics.def (IDs,
# severities and texts, in order), so that the documentation cannot drift from the messages.
nanort_add_checked_test(NAME plugin.diagnostics.documented
  EXPECT "^diagnostics documented: [0-9]+, as in the table$"
  COMMAND ${plugin_dir}/check_diagnostics_doc.py
          ${PROJECT_SOURCE_DIR}/pragma-plugin/src/Diagnostics.def
          ${PROJECT_SOURCE_DIR}/pragma-plugin/README.md)
set_tests_properties(plugin.diagnostics.documented PROPERTIES LABELS plugin TIMEOUT 60)

# Programs: name, wrapper, environment, sources and flags.
set(plugin_opencl_env "NANORT_OPENCL_CACHE=${plugin_bin}/opencl-program-cache")
function(nanort_plugin_program name wrapper env)
  set(variants gcc)
  if(NOT NANORT_SANITIZE)
    list(APPEND variants clang)
  endif()
  foreach(variant ${variants})
    set(test plugin.run.${name}.${variant})
    set(flags -I${plugin_dir}/programs)
    set(environment ${env})
    if(variant STREQUAL "gcc")
      list(APPEND environment "NANORT_CC=${CMAKE_C_COMPILER}" "NANORT_CXX=${CMAKE_CXX_COMPILER}")
      if(NANORT_SANITIZE)
        list(APPEND flags -fsanitize=${NANORT_SANITIZE} -fno-omit-frame-pointer
                          -fno-sanitize-recover=all)
      endif()
    endif()
    nanort_add_checked_test(NAME ${test} EXPECT "all results correct"
      COMMAND ${plugin_dir}/run_program.sh ${plugin_wrappers}/${wrapper}
              ${plugin_bin}/${variant}/${name} ${flags} ${ARGN})
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "${environment}")
    nanort_test_properties(plugin ${test})
  endforeach()
endfunction()

# The run-time errors of a program that nanort_plugin_program built, from its binaries: each
# ENTRIES item "case|message" runs it again with <variable>=case once its own test has passed
# (a fixture), as test plugin.<name>.<case>.<variant>, and expects exit status 1, the message,
# the ALSO texts, and none of the REJECT texts.
function(nanort_plugin_errors program name variable)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "ENTRIES;ALSO;REJECT;ENV")
  set(variants gcc)
  if(NOT NANORT_SANITIZE)
    list(APPEND variants clang)
  endif()
  foreach(variant ${variants})
    set_tests_properties(plugin.run.${program}.${variant} PROPERTIES
                         FIXTURES_SETUP plugin_${program}_${variant})
    foreach(entry IN LISTS arg_ENTRIES)
      string(FIND "${entry}" "|" bar)
      string(SUBSTRING "${entry}" 0 ${bar} case)
      math(EXPR bar "${bar} + 1")
      string(SUBSTRING "${entry}" ${bar} -1 message)
      set(test plugin.${name}.${case}.${variant})
      nanort_add_checked_test(NAME ${test} STATUS 1 CONTAINS ${arg_ALSO} "${message}"
                              REJECT ${arg_REJECT} COMMAND ${plugin_bin}/${variant}/${program})
      set(environment ${arg_ENV} "${variable}=${case}")
      set_tests_properties(${test} PROPERTIES ENVIRONMENT "${environment}"
                           FIXTURES_REQUIRED plugin_${program}_${variant})
      nanort_test_properties(plugin ${test})
    endforeach()
  endforeach()
endfunction()

set(p ${plugin_dir}/programs)
nanort_plugin_program(function_tasks_c nanocc "NANORT_CPU_WORKERS=2" -Wall ${p}/function_tasks.c)
nanort_plugin_program(inline_tasks_c nanocc "NANORT_CPU_WORKERS=2" -Wall ${p}/inline_tasks.c)
nanort_plugin_program(nested_inline_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/nested_inline.c)
nanort_plugin_program(pragma_operator_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/pragma_operator.c)
nanort_plugin_program(priority_c nanocc "NANORT_CPU_WORKERS=1" -Wall ${p}/priority.c)
nanort_plugin_program(sections_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror ${p}/sections.c)
nanort_plugin_program(tasks_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall ${p}/tasks.cpp)
# Pointers named in dependences are firstprivate (issue 19): a stencil that swaps its grid
# pointers after each step's tasks, compared with a plain loop; tasks created by functions that
# return, structure and array-of-pointers bases, nested tasks, references, templates.
# taskloop (issue 19): OpenMP's form with its implicit group, OmpSs-2's with dependences per
# iteration, C++ (templates, members, lambdas); NANORT_CPU_WORKERS=2 fixes the default number of
# chunks that taskloop.c checks (4 per worker).
nanort_plugin_program(taskloop_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror ${p}/taskloop.c)
# Its run-time errors.
nanort_plugin_errors(taskloop_c taskloop TASKLOOP_ERROR ALSO "taskloop.c:"
  ENTRIES "grainsize|'#pragma omp taskloop': grainsize(zero) is 0; it must be positive"
          "step|'#pragma omp taskloop': the loop's step is -1: 'i' never reaches its bound"
  REJECT "FAILED" "not stopped")
# taskiter and taskgraph (issue 22): loops whose later iterations replay the first one's tasks
# (unroll(2) over swapped pointers, while and do-while conditions that read the tasks' results,
# a loop that is not canonical, function tasks, inside an inline task and a final task), and
# taskgraph regions replayed per graph_id; each against the loop run in order. Then its
# run-time errors, from the binary that test built.
nanort_plugin_program(taskiter_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror ${p}/taskiter.c -lm)
nanort_plugin_program(taskiter_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/taskiter.cpp)
nanort_plugin_errors(taskiter_c taskiter TASKITER_ERROR
  ENTRIES "unroll|taskiter.c:122: '#pragma oss taskiter': unroll(zero) is 0; it must be positive"
          "taskwait|taskwait inside a taskiter's body: the replays would not wait there"
  REJECT "FAILED" "not stopped")
# taskiter's update clause: every iteration runs its body and the later ones give their
# tasks' values (a time-dependent source, a moving target, the step given to a function task)
# to the recorded tasks; each against the loop run in order. Then an iteration with other data
# or another task count, which stops the program naming the task.
nanort_plugin_program(taskiter_update_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/taskiter_update.c -lm)
nanort_plugin_errors(taskiter_update_c taskiter_update UPDATE_ERROR
  ENTRIES "data|in a taskiter's update accesses other data than recorded (task 1 of the iteration"
          "count|in a taskiter's update is task 2 of an iteration that recorded 1"
  REJECT "FAILED" "not stopped")
nanort_plugin_program(taskloop_oss_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/taskloop_oss.c)
nanort_plugin_program(taskloop_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/taskloop.cpp)
# Reductions and collapse(n) on taskloops (issue 19): OpenMP's group as the reduction's scope
# (sum, max, product, an array, declare reduction, taskloop simd, an empty loop), in_reduction
# in a taskgroup, OmpSs-2's chunks as reduction tasks combined before the next access,
# collapse(2) and (3) with grainsize, num_tasks and dependences per iteration, C++ templates and
# members. Built and run with 2 workers, then run again with 1 and with 4.
set(taskloop_variants gcc)
if(NOT NANORT_SANITIZE)
  list(APPEND taskloop_variants clang)
endif()
foreach(entry "taskloop_reduction_c|nanocc|taskloop_reduction.c"
              "taskloop_reduction_oss_c|nanocc|taskloop_reduction_oss.c"
              "taskloop_collapse_c|nanocc|taskloop_collapse.c"
              "taskloop_reduction_cxx|nanocxx|taskloop_reduction.cpp")
  string(REPLACE "|" ";" entry "${entry}")
  list(GET entry 0 name)
  list(GET entry 1 wrapper)
  list(GET entry 2 file)
  set(std)
  if(wrapper STREQUAL "nanocxx")
    set(std -std=c++17)
  endif()
  nanort_plugin_program(${name} ${wrapper} "NANORT_CPU_WORKERS=2" ${std} -Wall -Werror ${p}/${file})
  foreach(variant ${taskloop_variants})
    set_tests_properties(plugin.run.${name}.${variant} PROPERTIES
                         FIXTURES_SETUP plugin_${name}_${variant})
    foreach(workers 1 4)
      set(test plugin.run.${name}.${variant}.workers${workers})
      nanort_add_checked_test(NAME ${test} EXPECT "all results correct"
                              COMMAND ${plugin_bin}/${variant}/${name})
      set_tests_properties(${test} PROPERTIES ENVIRONMENT "NANORT_CPU_WORKERS=${workers}"
                           FIXTURES_REQUIRED plugin_${name}_${variant})
      nanort_test_properties(plugin ${test})
    endforeach()
  endforeach()
endforeach()
nanort_plugin_program(stencil_swap_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/stencil_swap.c)
nanort_plugin_program(stencil_swap_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/stencil_swap.cpp)
# Task reductions written with pragmas (issue 19): OmpSs-2 reduction and weakreduction on
# inline and function tasks (scalars, a section of a larger array between a writer and a
# reader, a shaped pointer, a variable at file scope, every built-in operator, final(1)
# parents), declare reduction on a structure, OpenMP taskgroup task_reduction with
# in_reduction tasks in a loop and nested, a plain taskgroup; C++: a function template, a
# reference parameter, a std::vector's data, a member-function combiner. Each result is
# compared with the sequential computation.
nanort_plugin_program(reductions_c nanocc "NANORT_CPU_WORKERS=4" -Wall -Werror
                      -I${PROJECT_SOURCE_DIR}/tests/support ${p}/reductions.c)
nanort_plugin_program(reductions_cxx nanocxx "NANORT_CPU_WORKERS=4" -std=c++17 -Wall -Werror
                      ${p}/reductions.cpp)
# Correct array sections of every form, one of which (reading BS+1 elements on purpose) has the
# off-by-one warning (issue 19): the program builds with it and its results are right (that the
# warning is its only diagnostic, plugin.warnings.werror.*).
nanort_plugin_program(section_bounds_c nanocc "NANORT_CPU_WORKERS=2" -Wall -std=gnu99
                      ${p}/section_bounds.c)
nanort_plugin_program(capture_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror ${p}/capture.c)
# Variable-length arrays and pointers to their rows in inline tasks (issue 19): tiles of
# double (*a)[ts][ts], a wavefront over a parameter u[n][m], a VLA shared, firstprivate (the whole
# array copied), private, and shared by a nested task; each compared with a sequential run.
# Forms of older OmpSs programs (issue 19): C function tasks declared 'void f()', a task
# declared but neither defined nor called, sections of shaped expressions ([n]p)[a:b] and
# ([r][c]m)[a;k][b;l]; C++ private(c) of a reference, atomic on template-dependent types.
nanort_plugin_program(legacy_forms_c nanocc "NANORT_CPU_WORKERS=2" -std=gnu99 -Wall
                      -Wno-deprecated-non-prototype ${p}/legacy_forms.c)
nanort_plugin_program(legacy_forms_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/legacy_forms.cpp)
# nanocxx passes -fno-strict-return to clang: int member functions that create tasks and run
# off their end without 'return', as programs written for mcc over g++ have (clang would trap,
# also without optimisation; g++ -O2 would take the path as unreachable: no -O here). The
# program runs off those ends on purpose: the sanitizer build's check of exactly that (return)
# is left out for it, every other check stays.
nanort_plugin_program(no_return_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17
                      -fno-sanitize=return ${p}/no_return.cpp)
nanort_plugin_program(vla_c nanocc "NANORT_CPU_WORKERS=2" -std=gnu99 -Wall -Werror ${p}/vla.c)
# The same in C++, where clang and g++ take VLAs as an extension (-Wno-vla: the program's own
# declarations warn; the generated code does not add to them).
nanort_plugin_program(vla_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror -Wno-vla
                      ${p}/vla.cpp)
# A task's private and firstprivate variables live until its children are done (issue 19):
# outer tasks whose inner tasks share them and are not waited for; in C++ a private object's
# destructor runs after the inner task, not when the outer body returns.
nanort_plugin_program(task_env_c nanocc "NANORT_CPU_WORKERS=2" -std=gnu99 -Wall -Werror
                      ${p}/task_env.c)
nanort_plugin_program(task_env_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/task_env.cpp)
# A task whose statement is an atomic or a critical construct (issue 19).
nanort_plugin_program(task_atomic_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/task_atomic.c)
nanort_plugin_program(capture_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/capture.cpp)
# An OmpSs-1 program as mcc takes it: printf without <stdio.h>, Nanos++'s routines without
# their header, sqrt without -lm (nanocc's compatibility: nanort/omp/nanos.h).
nanort_plugin_program(ompss_legacy_c nanocc "NANORT_CPU_WORKERS=2" ${p}/ompss_legacy.c)
# omp.h's routines (libnanort-omp) outside and inside tasks, locks, nest locks; the team's size
# set by omp_set_num_threads before the runtime starts (3, not the environment's 2).
nanort_plugin_program(omp_api_c nanocc "NANORT_CPU_WORKERS=2" -std=c11 -Wall -Werror
                      ${p}/omp_api.c)
# OmpSs clauses of issue 19, each program compared with its own sequential computation:
# taskwait with dependences (OmpSs-2's in/out/inout, OpenMP's depend) returns while an
# unrelated task still runs (it would never return if it waited for it); multidependences over
# blocks of an array, element by element, with a step, a list, two iterators and copies, in C
# and in C++ (templates, std::vector, members); device clauses on CPU tasks (target
# device(smp) before inline tasks, copy clauses on task), inprivate's copy when the task
# starts, cost, onready (after the dependences, before the body), simd, declare simd and
# taskyield.
nanort_plugin_program(taskwait_deps_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/taskwait_deps.c)
nanort_plugin_program(multideps_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror ${p}/multideps.c)
nanort_plugin_program(multideps_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/multideps.cpp)
nanort_plugin_program(device_clauses_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/device_clauses.c)
# omp_in_final() is the runtime's answer also where the program defines a stub of that name
# for builds without OpenMP (true in final tasks, as OmpSs compilers make it).
nanort_plugin_program(in_final_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror ${p}/in_final.c)
# C inline tasks that call the function they are in (a recursive fib); C++: a class template
# with a task member function first in the file, a function template task, a task whose first
# caller has an attribute on the line before it (issue 19).
nanort_plugin_program(recursive_inline_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/recursive_inline.c)
nanort_plugin_program(template_first_cxx nanocxx "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/template_first.cpp)
# Function tasks that return a value (issue 19): recursion, results into variables, array
# elements and containers read after a taskwait, accumulations, results inside expressions,
# initializers, conditional expressions and arguments of other tasks; C++ class results,
# member functions and templates. Compared with the same computations without tasks.
nanort_plugin_program(nonvoid_tasks_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/nonvoid_tasks.c)
nanort_plugin_program(nonvoid_tasks_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/nonvoid_tasks.cpp)
# Function tasks declared inside a function (issue 19): the calls in the declaration's scope
# are tasks with its clauses (the same function with other clauses in two functions that create
# tasks and return, a definition later in the file and one in another file, a function that is
# also a task at file scope, a nested block, target device(smp); C++: namespaces, a member
# function, a lambda, a reference parameter). Compared with the sequential computation.
nanort_plugin_program(block_tasks_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                      ${p}/block_tasks.c ${p}/block_tasks_lib.c)
nanort_plugin_program(block_tasks_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                      ${p}/block_tasks.cpp)
# C++: the pragma taskwait rethrows a task's own exception (function and inline tasks); C++11
# is enough for the lowered code.
nanort_plugin_program(failing_taskwait_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++11 -Wall
                      ${p}/failing_taskwait.cpp)
# C: a failed task ends the program at the pragma taskwait with exit status 1, naming it and
# the task not run after it, with statistics and trace written.
foreach(variant gcc clang)
  if(variant STREQUAL "clang" AND NANORT_SANITIZE)
    continue()
  endif()
  set(test plugin.run.failing_taskwait_c.${variant})
  set(flags -I${plugin_dir}/programs)
  set(environment "NANORT_CPU_WORKERS=2;NANORT_STATS=1")
  if(variant STREQUAL "gcc")
    list(APPEND environment "NANORT_CC=${CMAKE_C_COMPILER}")
    if(NANORT_SANITIZE)
      list(APPEND flags -fsanitize=${NANORT_SANITIZE} -fno-omit-frame-pointer
                        -fno-sanitize-recover=all)
    endif()
  endif()
  nanort_add_checked_test(NAME ${test} STATUS 1
    EXPECT "nanort: taskwait: task 'producer' \\([^)]*failing_taskwait.c:9\\) found no input file\ntask 'consumer' \\([^)]*failing_taskwait.c:14\\) was not run: it depends on task 'producer' \\([^)]*failing_taskwait.c:9\\), which failed\n"
           "nanort statistics: .*tasks created 3, run 2, not run after a failure 1"
           "trace written: "
    COMMAND ${plugin_dir}/check_trace_written.sh ${plugin_bin}/${variant}/failing_taskwait.json
            ${plugin_dir}/run_program.sh ${plugin_wrappers}/nanocc
            ${plugin_bin}/${variant}/failing_taskwait_c ${flags} ${p}/failing_taskwait.c)
  set_tests_properties(${test} PROPERTIES ENVIRONMENT "${environment}")
  nanort_test_properties(plugin ${test})
endforeach()
nanort_plugin_program(opencl_saxpy_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall ${p}/opencl_saxpy.c ${p}/saxpy.cl --opencl-build-opts=-DSCALE=2.0f)
set_tests_properties(plugin.run.opencl_saxpy_c.gcc PROPERTIES LABELS "plugin;opencl")
if(NOT NANORT_SANITIZE)
  set_tests_properties(plugin.run.opencl_saxpy_c.clang PROPERTIES LABELS "plugin;opencl")
endif()
nanort_plugin_program(opencl_target_clauses_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall ${p}/opencl_target_clauses.c ${p}/saxpy.cl
                      --opencl-build-opts=-DSCALE=2.0f)
nanort_plugin_program(opencl_single_source_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall ${p}/opencl_single_source.c)
# device(opencl, smp): OpenCL where there is a device, the smp body where there is none.
nanort_plugin_program(multi_device_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall ${p}/multi_device.c)
nanort_plugin_program(multi_device_no_opencl_c nanocc
                      "NANORT_CPU_WORKERS=2;NANORT_OPENCL_DEVICES=none" -Wall -DNO_OPENCL
                      ${p}/multi_device.c)
# taskiter of OpenCL kernel tasks (replayed as enqueued kernels, the default; again with a
# launcher thread enqueuing them), and again task by task: each against the loop run in order.
nanort_plugin_program(opencl_taskiter_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall -Werror ${p}/opencl_taskiter.c ${p}/diffusion.cl)
nanort_plugin_program(opencl_taskiter_thread_c nanocc
                      "NANORT_CPU_WORKERS=2;NANORT_OPENCL_LAUNCH=thread;${plugin_opencl_env}"
                      -Wall -Werror ${p}/opencl_taskiter.c ${p}/diffusion.cl)
nanort_plugin_program(opencl_taskiter_by_task_c nanocc
                      "NANORT_CPU_WORKERS=2;NANORT_TASKITER_GRAPH=cuda;${plugin_opencl_env}"
                      -Wall -Werror ${p}/opencl_taskiter.c ${p}/diffusion.cl)
foreach(name opencl_target_clauses_c opencl_single_source_c multi_device_c opencl_taskiter_c
             opencl_taskiter_thread_c opencl_taskiter_by_task_c)
  set_tests_properties(plugin.run.${name}.gcc PROPERTIES LABELS "plugin;opencl")
  if(NOT NANORT_SANITIZE)
    set_tests_properties(plugin.run.${name}.clang PROPERTIES LABELS "plugin;opencl")
  endif()
endforeach()
# (Also '-I dir' and '-D X' as two words each, which the wrappers join for every step.)
nanort_plugin_program(two_files_c nanocc "NANORT_CPU_WORKERS=2" -Wall -I ${p} -D TWO_WORDS=1
                      ${p}/two_files_main.c ${p}/two_files_task.c)
# Task pragmas in a header, laid out as OmpSs GPU programs are (issue 19): OpenCL kernel tasks
# that every calling file lowers with its own MAX_NUM_THREADS (declared after the #include),
# an smp function task and a plain task defined in other files, a file that includes the
# header without calling the kernels; in C and in C++ (extern "C", a namespace, a template).
# clause_scope_c: clause expressions naming globals declared after the task, in one file.
nanort_plugin_program(header_kernels_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall -Werror ${p}/header_kernels_main.c ${p}/header_kernels_more.c
                      ${p}/header_kernels_nocall.c ${p}/kernels/header_kernels.cl)
nanort_plugin_program(header_kernels_cxx nanocxx "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -std=c++17 -Wall -Werror ${p}/header_kernels_main.cpp
                      ${p}/header_kernels_more.cpp ${p}/kernels/header_kernels.cl)
nanort_plugin_program(clause_scope_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall -Werror ${p}/clause_scope.c)
foreach(name header_kernels_c header_kernels_cxx clause_scope_c)
  set_tests_properties(plugin.run.${name}.gcc PROPERTIES LABELS "plugin;opencl")
  if(NOT NANORT_SANITIZE)
    set_tests_properties(plugin.run.${name}.clang PROPERTIES LABELS "plugin;opencl")
  endif()
endforeach()
# Versions (implements): tasks whose site lists an smp and an OpenCL implementation (C: one
# declared in a header used by two files, one after the calls; C++: in a namespace, single
# source, an smp version of a kernel task). The default scheduler runs the first of each;
# dmda, learning afresh, tries both on the same data: the programs check both ran.
set(versions_c ${p}/versions_main.c ${p}/versions_task.c)
set(versions_dmda "NANORT_SCHEDULER=dmda;NANORT_PERF_MODEL=off")
nanort_plugin_program(versions_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -Wall -Werror ${versions_c})
nanort_plugin_program(versions_dmda_c nanocc
                      "NANORT_CPU_WORKERS=2;${plugin_opencl_env};${versions_dmda}"
                      -Wall -Werror ${versions_c})
nanort_plugin_program(versions_cxx nanocxx "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                      -std=c++17 -Wall -Werror ${p}/versions.cpp)
nanort_plugin_program(versions_dmda_cxx nanocxx
                      "NANORT_CPU_WORKERS=2;${plugin_opencl_env};${versions_dmda}"
                      -std=c++17 -Wall -Werror ${p}/versions.cpp)
foreach(name versions_c versions_dmda_c versions_cxx versions_dmda_cxx)
  set_tests_properties(plugin.run.${name}.gcc PROPERTIES LABELS "plugin;opencl")
  if(NOT NANORT_SANITIZE)
    set_tests_properties(plugin.run.${name}.clang PROPERTIES LABELS "plugin;opencl")
  endif()
endforeach()

# Sections wrong at run time (issue 18): sections.c with SECTION_ERROR=<case>, run from the
# binaries that plugin.run.sections_c.* build, stops when it creates the task, with exit
# status 1 and a message that names the pragma, the task and the section as written.
set(sections "nanort: ${p}/sections.c")
set(section_errors
    "length|${sections}:20: task 'scale': inout(x[0;n]): the section's length is -5"
    "depend|${sections}:14: task 'bump': depend(inout: x[k:n]): the section's length is -2"
    "end|${sections}:41: inline task: inout(x[a:b]): the section's length is -2"
    "start|${sections}:25: task 'neighbours': in(p[i - 1;2]): the section starts at index -1, before p[0] (to name memory before a pointer, write (p - 1)[0;2])"
    "array|${sections}:46: inline task: inout(x[i - 3;2]): the section starts at index -3, outside the array x"
    "shape|${sections}:28: task 'shaped': in([n]x): the shape's size is -3"
    "row|${sections}:51: task 'block': in(m[0;2][c;2]): the section starts at index -1 in dimension 2, before the first element of a row"
    "taskwait|${sections}:54: taskwait on(x[0;n + 4]): the section's length is -1")
nanort_plugin_errors(sections_c sections SECTION_ERROR ENTRIES ${section_errors}
  REJECT "FAILED" "all results correct" ENV "NANORT_CPU_WORKERS=2")

# CUDA kernels (device(cuda)): the wrappers compile kernels/cuda_kernels.cu with nvcc into a
# fatbin and embed it. cuda_saxpy_c needs a GPU: without one it prints why and exits with 77
# (skipped). cuda_multi_device_c and cuda_kernels_cxx check their results here too: without a
# GPU their smp versions run.
if(NANORT_NVCC)
  set(cuda_kernels ${p}/kernels/cuda_kernels.cu)
  nanort_plugin_program(cuda_saxpy_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                        ${p}/cuda_saxpy.c ${cuda_kernels})
  nanort_plugin_program(cuda_multi_device_c nanocc "NANORT_CPU_WORKERS=2;${plugin_opencl_env}"
                        -Wall -Werror ${p}/cuda_multi_device.c ${cuda_kernels})
  nanort_plugin_program(cuda_kernels_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                        ${p}/cuda_kernels.cpp ${cuda_kernels})
  # CUDA kernel tasks declared in a header (issue 19), called from two C files with their own
  # MAX_NUM_THREADS, and from C++ (a template in a namespace). They need a GPU (else skipped).
  nanort_plugin_program(header_cuda_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                        ${p}/header_cuda_main.c ${p}/header_cuda_more.c ${cuda_kernels})
  nanort_plugin_program(header_cuda_cxx nanocxx "NANORT_CPU_WORKERS=2" -std=c++17 -Wall -Werror
                        ${p}/header_cuda.cpp ${cuda_kernels})
  # A CUDA version (implements): without a GPU its smp task runs; with one, dmda tries both.
  nanort_plugin_program(cuda_versions_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                        ${p}/cuda_versions.c ${cuda_kernels})
  nanort_plugin_program(cuda_versions_dmda_c nanocc "NANORT_CPU_WORKERS=2;${versions_dmda}"
                        -Wall -Werror ${p}/cuda_versions.c ${cuda_kernels})
  # CUDA's vector types (float4, make_float4 ...) in host C, with no CUDA include.
  nanort_plugin_program(cuda_vector_types_c nanocc "NANORT_CPU_WORKERS=2" -std=c11 -Wall -Werror
                        ${p}/cuda_vector_types.c ${p}/kernels/vector_kernels.cu)
  set(variants gcc)
  if(NOT NANORT_SANITIZE)
    list(APPEND variants clang)
  endif()
  # Kernels from an object made by nvcc -c (built for the cuda tests), given as an object.
  set(linked_object ${CMAKE_CURRENT_BINARY_DIR}/cuda_linked_kernels.o)
  if(TARGET cuda_linked)
    nanort_plugin_program(cuda_linked_c nanocc "NANORT_CPU_WORKERS=2" -Wall -Werror
                          ${p}/cuda_linked.c ${linked_object})
  endif()
  foreach(variant ${variants})
    set_tests_properties(plugin.run.cuda_saxpy_c.${variant} plugin.run.header_cuda_c.${variant}
                         plugin.run.header_cuda_cxx.${variant} PROPERTIES
                         LABELS "plugin;cuda" SKIP_RETURN_CODE 77)
    if(TARGET cuda_linked)
      set_tests_properties(plugin.run.cuda_linked_c.${variant} PROPERTIES
                           LABELS "plugin;cuda" SKIP_RETURN_CODE 77)
    endif()
    set_tests_properties(plugin.run.cuda_multi_device_c.${variant} PROPERTIES
                         LABELS "plugin;cuda;opencl")
    set_tests_properties(plugin.run.cuda_kernels_cxx.${variant}
                         plugin.run.cuda_vector_types_c.${variant}
                         plugin.run.cuda_versions_c.${variant}
                         plugin.run.cuda_versions_dmda_c.${variant} PROPERTIES
                         LABELS "plugin;cuda")
  endforeach()
  # --cuda-arch and NANORT_CUDA_ARCH choose the fatbin's architectures (PTX for the last).
  set(arch_expected "compute_75.?,code=sm_75 .*compute_86.?,code=sm_86 .*compute_86.?,code=compute_86")
  nanort_add_checked_test(NAME plugin.cuda.arch EXPECT "${arch_expected}"
    COMMAND ${plugin_wrappers}/nanocc --show --cuda-arch=75,sm_86 ${p}/cuda_saxpy.c
            ${cuda_kernels} -o ${plugin_bin}/cuda_arch)
  nanort_add_checked_test(NAME plugin.cuda.arch_env EXPECT "${arch_expected}"
    COMMAND ${plugin_wrappers}/nanocc --show ${p}/cuda_saxpy.c ${cuda_kernels}
            -o ${plugin_bin}/cuda_arch)
  set_tests_properties(plugin.cuda.arch plugin.cuda.arch_env PROPERTIES
                       LABELS plugin TIMEOUT 60)
  set_tests_properties(plugin.cuda.arch_env PROPERTIES ENVIRONMENT "NANORT_CUDA_ARCH=75 86")
  # nanort_annotate(... CUDA ...) from the installed package (annotate_cuda/), with the
  # project's default compilers (the pragmas lowered to source by clang 19).
  if(NOT NANORT_SANITIZE)
    nanort_add_checked_test(NAME plugin.package.cuda
      EXPECT "all results correct.*all results correct.*all results correct"
      COMMAND bash ${plugin_dir}/check_annotate_cuda.sh ${PROJECT_BINARY_DIR}
              ${plugin_bin}/package-cuda)
    set_tests_properties(plugin.package.cuda PROPERTIES
      LABELS "plugin;package;cuda;opencl" TIMEOUT ${NANORT_TEST_TIMEOUT})
  endif()
endif()
# A device(cuda) task in a program linked without CUDA kernels: a clear error when it is
# created. (Built by the project's C compiler, with the sanitizers in sanitizer builds.)
set(no_kernels_flags -I${plugin_dir}/programs)
if(NANORT_SANITIZE)
  list(APPEND no_kernels_flags -fsanitize=${NANORT_SANITIZE} -fno-omit-frame-pointer)
endif()
add_test(NAME plugin.cuda.no_kernels
         COMMAND ${plugin_dir}/check_output.sh
                 "cuda_multi_device.c:12: task 'add' has a device(cuda) version, but the program holds no CUDA kernels"
                 -- ${plugin_dir}/run_program.sh ${plugin_wrappers}/nanocc
                 ${plugin_bin}/cuda_no_kernels ${no_kernels_flags} ${p}/cuda_multi_device.c)
set_tests_properties(plugin.cuda.no_kernels PROPERTIES LABELS plugin TIMEOUT 60
                     ENVIRONMENT "NANORT_CPU_WORKERS=2;NANORT_CC=${CMAKE_C_COMPILER}")

# A program built by nanocc that also has libgomp, through a library built with gcc -fopenmp and
# linked after libnanort-omp: every omp_* routine gives libgomp's answers (the library's
# parallel regions work, inside a task too). Outside sanitizer builds (libgomp is not built
# with them).
if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND NOT NANORT_SANITIZE)
  find_package(OpenMP COMPONENTS C QUIET)
  if(OpenMP_C_FOUND)
    nanort_add_checked_test(NAME plugin.omp.libgomp EXPECT "^all results correct$"
      COMMAND bash ${plugin_dir}/omp_libgomp/run.sh ${plugin_wrappers}/nanocc
              ${CMAKE_C_COMPILER} ${plugin_bin}/omp_libgomp ${plugin_dir}/programs)
    set_tests_properties(plugin.omp.libgomp PROPERTIES
                         ENVIRONMENT "OMP_NUM_THREADS=3;NANORT_CPU_WORKERS=2")
    nanort_test_properties(plugin plugin.omp.libgomp)
  endif()
endif()

# An OmpSs project as written for mcc (ompss_make/: CC = nanocc, --ompss, --instrument,
# --debug, --Wl,-lm, helpers compiled by a '.c.o' rule with --no-openmp, one of them with an
# OpenMP loop that is not lowered), built by make and run; clang 19 in the compile and gcc
# through the lowered source. Outside sanitizer builds (the Makefile has no sanitizer flags).
find_program(NANORT_MAKE make)
if(NANORT_MAKE AND NOT NANORT_SANITIZE)
  set(variants clang)
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    list(APPEND variants gcc)
  endif()
  foreach(variant ${variants})
    set(test plugin.make.ompss.${variant})
    nanort_add_checked_test(NAME ${test}
      EXPECT "stream-p: all results correct\nstream-i: all results correct\nstream-d: all results correct\n$"
      CONTAINS "nanocc: --instrument is ignored: nanort traces a program at run time instead (NANORT_TRACE=trace.json, NANORT_STATS=1)"
      COMMAND bash ${plugin_dir}/check_make.sh ${plugin_wrappers} ${plugin_bin}/make-${variant})
    set(environment "NANORT_CPU_WORKERS=2")
    if(variant STREQUAL "gcc")
      list(APPEND environment "NANORT_CC=${CMAKE_C_COMPILER}")
    endif()
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "${environment}")
    nanort_test_properties(plugin ${test})
  endforeach()
endif()

# The OmpSs suite runner (bench/ompss-suite/run_suite.py) on its own small suite: the counts
# it reports (what was selected, built and passed with 1 and 2 workers) and a failure's cause.
# Outside sanitizer builds (the installed programs are built without the sanitizer runtime).
if(Python3_Interpreter_FOUND AND NOT NANORT_SANITIZE)
  nanort_add_checked_test(NAME plugin.ompss_suite_runner
    EXPECT "wrong_result_fails.c +build=ok +runs=FAIL,FAIL +NANORT_CPU_WORKERS=1: exit status 1"
           "parallel_out_of_subset.c +build=FAIL"
           "all run-tests: 4 tests, 3 built, 2 passed with every worker count \\(1,2\\)"
           "subset [^\n]*: 3 tests, 3 built, 2 passed with every worker count \\(1,2\\)"
    REJECT "ignored.c"
    COMMAND bash ${PROJECT_SOURCE_DIR}/bench/ompss-suite/check_fixture.sh ${PROJECT_BINARY_DIR}
            ${plugin_bin}/ompss-suite)
  nanort_test_properties(plugin plugin.ompss_suite_runner)
endif()

# Golden test of the lowered source (tests/plugin/golden/*.expected).
add_test(NAME plugin.golden.lowering.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include lowering.c lowering.c.expected
                 ${plugin_bin}/golden/lowering.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.cuda.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include cuda.c cuda.c.expected
                 ${plugin_bin}/golden/cuda.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.versions.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include versions.c versions.c.expected
                 ${plugin_bin}/golden/versions.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.sections.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include sections.c sections.c.expected
                 ${plugin_bin}/golden/sections.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.capture.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include capture.c capture.c.expected
                 ${plugin_bin}/golden/capture.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.capture.cpp
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_CXX} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include capture.cpp capture.cpp.expected
                 ${plugin_bin}/golden/capture.cpp
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.taskloop.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include taskloop.c taskloop.c.expected
                 ${plugin_bin}/golden/taskloop.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
# taskiter's two lowerings (a condition evaluated after each replay; unroll's trip count) and
# taskgraph's (issue 22).
add_test(NAME plugin.golden.taskiter.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include taskiter.c taskiter.c.expected
                 ${plugin_bin}/golden/taskiter.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
# Reductions and collapse(2) on taskloops (issue 19): OpenMP's group as a taskgroup with the
# reduction, OmpSs-2's reduction chunks, the product space and its iterations turned back into
# the loops' variables.
add_test(NAME plugin.golden.taskloop_reduction.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include taskloop_reduction.c taskloop_reduction.c.expected
                 ${plugin_bin}/golden/taskloop_reduction.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
# Variable-length arrays and pointers to their rows in a C inline task (issue 19): the argument
# block's untyped members and row lengths, the copy after the block, the body's declarations.
add_test(NAME plugin.golden.vla.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include vla.c vla.c.expected ${plugin_bin}/golden/vla.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
# Issue 19's clauses: a multidependence's loop, taskwait with dependences, inprivate, copies.
add_test(NAME plugin.golden.clauses.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include clauses.c clauses.c.expected
                 ${plugin_bin}/golden/clauses.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
add_test(NAME plugin.golden.reductions.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include reductions.c reductions.c.expected
                 ${plugin_bin}/golden/reductions.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
# A task's private and firstprivate variables in its argument block when it creates tasks; a
# task whose statement is an atomic or critical construct (issue 19).
add_test(NAME plugin.golden.task_env.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include task_env.c task_env.c.expected
                 ${plugin_bin}/golden/task_env.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
# Function tasks declared inside a function (issue 19): each declaration's wrapper, of internal
# linkage, before the enclosing function after a declaration of what it calls; the uses in the
# declaration's scope renamed, the others not; a function that is also a task at file scope
# run through its renamed body.
add_test(NAME plugin.golden.block_tasks.c
         COMMAND ${plugin_dir}/check_golden.sh ${NANORT_CLANG_C} ${plugin_so}
                 ${PROJECT_SOURCE_DIR}/include block_tasks.c block_tasks.c.expected
                 ${plugin_bin}/golden/block_tasks.c
         WORKING_DIRECTORY ${plugin_dir}/golden)
set_tests_properties(plugin.golden.lowering.c plugin.golden.cuda.c plugin.golden.versions.c
                     plugin.golden.sections.c plugin.golden.capture.c plugin.golden.capture.cpp
                     plugin.golden.taskloop.c plugin.golden.vla.c plugin.golden.clauses.c
                     plugin.golden.reductions.c plugin.golden.task_env.c
                     plugin.golden.taskloop_reduction.c
                     plugin.golden.block_tasks.c plugin.golden.taskiter.c
                     PROPERTIES LABELS plugin TIMEOUT 60)

# nanort_annotate from the installed package, with clang 19 as the consumer's compiler (the
# plugin lowers in the compile). package.consumer covers the other path: the project's default
# compiler compiles the source that clang 19 lowered. Not in sanitizer builds (the consumer is
# built without the sanitizer runtime that the installed library needs).
if(NOT NANORT_SANITIZE)
  nanort_add_checked_test(NAME plugin.package.clang
    EXPECT "annotated C: all results correct.*annotated C\\+\\+: all results correct"
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/check.sh ${PROJECT_BINARY_DIR}
            ${plugin_bin}/package-clang ${NANORT_CLANG_C} ${NANORT_CLANG_CXX})
  set_tests_properties(plugin.package.clang PROPERTIES
    LABELS "plugin;package;opencl" TIMEOUT ${NANORT_TEST_TIMEOUT})
endif()
include(${CMAKE_CURRENT_LIST_DIR}/wrappers.cmake)
