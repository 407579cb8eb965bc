# nanort_annotate: turns a target into an annotated one (its pragmas are lowered by the nanort
# plugin, its OpenCL kernels embedded, nanort::runtime linked). Part of the installed package
# (find_package(nanort)); documented in pragma-plugin/README.md, section "CMake".
#
#   nanort_annotate(<target>
#                   [OPENCL <file.cl>...]
#                   [OPENCL_BUILD_OPTIONS <option>...]
#                   [LOWER])
#
# Reads global properties that nanortConfig.cmake sets (global, so that find_package in one
# folder serves targets in any other):
#   NANORT_PLUGIN           the plugin (nanort-plugin.so); empty when nanort has none
#   NANORT_CLANG_C, NANORT_CLANG_CXX   clang 19, which lowers for other compilers
#   NANORT_EMBED_SCRIPT     NanortEmbedOpenCL.cmake
#   NANORT_RUNTIME_TARGET   the runtime's target (nanort::runtime)

# Is the compiler of <lang> clang 19, which lowers in the same compile?
function(_nanort_compiler_is_clang19 lang out)
  set(${out} FALSE PARENT_SCOPE)
  if(CMAKE_${lang}_COMPILER_ID STREQUAL "Clang" AND CMAKE_${lang}_COMPILER_VERSION)
    string(REGEX MATCH "^[0-9]+" major "${CMAKE_${lang}_COMPILER_VERSION}")
    if(major EQUAL 19)
      set(${out} TRUE PARENT_SCOPE)
    endif()
  endif()
endfunction()

# Escapes a string for a C string literal.
function(_nanort_c_string in out)
  string(REPLACE "\\" "\\\\" s "${in}")
  string(REPLACE "\"" "\\\"" s "${s}")
  string(REPLACE "\n" "\\n" s "${s}")
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

function(nanort_annotate target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "LOWER" "" "OPENCL;OPENCL_BUILD_OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nanort_annotate: unexpected arguments: ${arg_UNPARSED_ARGUMENTS} "
                        "(expected OPENCL <files>, OPENCL_BUILD_OPTIONS <options>, LOWER)")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "nanort_annotate: '${target}' is not a target")
  endif()
  get_target_property(aliased ${target} ALIASED_TARGET)
  get_target_property(imported ${target} IMPORTED)
  if(aliased OR imported)
    message(FATAL_ERROR "nanort_annotate: '${target}' is an alias or imported target")
  endif()
  get_target_property(target_dir ${target} SOURCE_DIR)
  if(NOT target_dir STREQUAL CMAKE_CURRENT_SOURCE_DIR)
    message(FATAL_ERROR "nanort_annotate: call it in the directory that defines '${target}' "
                        "(${target_dir})")
  endif()
  foreach(p NANORT_PLUGIN NANORT_CLANG_C NANORT_CLANG_CXX NANORT_EMBED_SCRIPT
            NANORT_RUNTIME_TARGET)
    get_property(${p} GLOBAL PROPERTY ${p})
  endforeach()
  if(NOT NANORT_PLUGIN OR NOT EXISTS "${NANORT_PLUGIN}")
    message(FATAL_ERROR "nanort_annotate: the nanort pragma plugin is not available "
                        "(nanort was built without Clang 19)")
  endif()

  set(work "${CMAKE_CURRENT_BINARY_DIR}/nanort/${target}")
  get_target_property(sources ${target} SOURCES)
  if(NOT sources)
    set(sources "")
  endif()

  # The sources that hold pragmas: C and C++ files. .cl files among the sources are kernels.
  set(cl_files "")
  foreach(f IN LISTS arg_OPENCL)
    get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND cl_files "${f}")
  endforeach()
  set(new_sources "")
  set(plugin_langs "")
  foreach(src IN LISTS sources)
    if(src MATCHES "\\$<")          # generator expressions: left as they are
      list(APPEND new_sources "${src}")
      continue()
    endif()
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_source_file_property(lang "${src}" LANGUAGE)
    if(NOT lang)
      if(abs MATCHES "\\.c$")
        set(lang C)
      elseif(abs MATCHES "\\.(cc|cpp|cxx|C|c\\+\\+)$")
        set(lang CXX)
      elseif(abs MATCHES "\\.cl$")
        list(APPEND cl_files "${abs}")
      endif()
    endif()
    if(NOT lang STREQUAL "C" AND NOT lang STREQUAL "CXX")
      list(APPEND new_sources "${src}")
      continue()
    endif()
    _nanort_compiler_is_clang19(${lang} in_process)
    if(in_process AND NOT arg_LOWER)
      # Clang 19 lowers in the same compile (the option is the target's, for its sources of
      # that language).
      if(NOT lang IN_LIST plugin_langs)
        list(APPEND plugin_langs ${lang})
        target_compile_options(${target} PRIVATE
                               "$<$<COMPILE_LANGUAGE:${lang}>:-fplugin=${NANORT_PLUGIN}>")
      endif()
      set_property(SOURCE "${src}" APPEND PROPERTY OBJECT_DEPENDS "${NANORT_PLUGIN}")
      list(APPEND new_sources "${src}")
      continue()
    endif()

    # Another compiler: clang 19 writes the lowered source, the target compiles it.
    file(RELATIVE_PATH rel "${CMAKE_CURRENT_SOURCE_DIR}" "${abs}")
    string(REPLACE "../" "__/" rel "${rel}")
    string(REGEX REPLACE "^(.*)\\.([^./]+)$" "\\1.nanort.\\2" rel "${rel}")
    if(IS_ABSOLUTE "${rel}")
      string(MAKE_C_IDENTIFIER "${rel}" rel)
    endif()
    set(out "${work}/${rel}")
    if(lang STREQUAL "C")
      set(clang "${NANORT_CLANG_C}")
      set(x c)
    else()
      set(clang "${NANORT_CLANG_CXX}")
      set(x c++)
    endif()
    # What the target's compile would see: include folders and definitions (with those of
    # the linked targets) and the language standard.
    set(tp "TARGET_PROPERTY:${target}")
    set(incs "$<${tp},INCLUDE_DIRECTORIES>")
    set(defs "$<${tp},COMPILE_DEFINITIONS>")
    set(std "$<${tp},${lang}_STANDARD>")
    set(ext "$<${tp},${lang}_EXTENSIONS>")
    set(std_prefix "$<IF:$<OR:$<STREQUAL:${ext},>,$<BOOL:${ext}>>,gnu,c>")
    if(lang STREQUAL "CXX")
      set(std_prefix "${std_prefix}++")
    endif()
    set(flags "$<$<BOOL:${std}>:-std=${std_prefix}${std}>"
              "$<$<BOOL:${incs}>:-I$<JOIN:${incs},$<SEMICOLON>-I>>"
              "$<$<BOOL:${defs}>:-D$<JOIN:${defs},$<SEMICOLON>-D>>")
    # The headers it includes, for the depfile (the lowering compile itself reads an empty
    # file after the plugin, so its own -MD would list the source only).
    add_custom_command(
      OUTPUT "${out}"
      COMMAND "${clang}" -x ${x} -M -MF "${out}.d" -MT "${out}" ${flags} "${abs}"
      COMMAND "${clang}" -x ${x} -fsyntax-only "-fplugin=${NANORT_PLUGIN}"
              "-fplugin-arg-nanort-emit=${out}" -fplugin-arg-nanort-lower-only ${flags}
              "${abs}"
      DEPENDS "${abs}" "${NANORT_PLUGIN}"
      DEPFILE "${out}.d"
      COMMENT "Lowering the nanort pragmas of ${src}"
      COMMAND_EXPAND_LISTS VERBATIM)
    get_filename_component(src_dir "${abs}" DIRECTORY)
    # Quoted includes of the source resolve from its folder; the lowered source keeps the
    # original headers, whose task pragmas the other compiler must not warn about.
    set(options "-iquote" "${src_dir}")
    if(CMAKE_${lang}_COMPILER_ID MATCHES "GNU|Clang|Intel")
      list(APPEND options -Wno-unknown-pragmas)
    endif()
    set_source_files_properties("${out}" PROPERTIES GENERATED TRUE LANGUAGE ${lang}
                                COMPILE_OPTIONS "${options}")
    list(APPEND new_sources "${out}")
  endforeach()

  # The OpenCL kernels: one embedded program, as nanocc builds from its .cl arguments.
  list(REMOVE_DUPLICATES cl_files)
  if(cl_files)
    if(CMAKE_C_COMPILER_LOADED)
      set(module "${work}/nanort_opencl_program.c")
    else()
      set(module "${work}/nanort_opencl_program.cpp")
    endif()
    list(JOIN arg_OPENCL_BUILD_OPTIONS " " options)
    _nanort_c_string("${options}" options)
    list(JOIN cl_files " " origin)
    _nanort_c_string("${origin}" origin)
    set(config "${work}/nanort_opencl_program.config.cmake")
    set(text "set(NANORT_EMBED_OUTPUT [==[${module}]==])\n")
    string(APPEND text "set(NANORT_EMBED_SOURCES [==[${cl_files}]==])\n")
    string(APPEND text "set(NANORT_EMBED_OPTIONS [==[${options}]==])\n")
    string(APPEND text "set(NANORT_EMBED_ORIGIN [==[${origin}]==])\n")
    file(CONFIGURE OUTPUT "${config}" CONTENT "${text}")
    add_custom_command(
      OUTPUT "${module}"
      COMMAND "${CMAKE_COMMAND}" "-DNANORT_EMBED_CONFIG=${config}" -P "${NANORT_EMBED_SCRIPT}"
      DEPENDS ${cl_files} "${config}" "${NANORT_EMBED_SCRIPT}"
      COMMENT "Embedding the OpenCL kernels of ${target}"
      VERBATIM)
    list(APPEND new_sources "${module}")
  elseif(arg_OPENCL_BUILD_OPTIONS)
    message(FATAL_ERROR "nanort_annotate: OPENCL_BUILD_OPTIONS without OPENCL files")
  endif()

  set_property(TARGET ${target} PROPERTY SOURCES "${new_sources}")
  target_link_libraries(${target} PRIVATE ${NANORT_RUNTIME_TARGET})
endfunction()
