# Helpers that every benchmark's cmake/bench/<name>.cmake uses.

function(hdb_warnings tgt)
  set(cxx_flags -Wall -Wextra)
  if(HDB_WERROR)
    list(APPEND cxx_flags -Werror)
  endif()
  target_compile_options(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr --extended-lambda>)
endfunction()

# Turns OpenCL C files into one C++ string: hdb::opencl::kernels::<NAME>.
# The files are concatenated in order, so shared helpers can come first.
function(hdb_embed_cl out_var name)
  set(files "")
  foreach(f IN LISTS ARGN)
    get_filename_component(abs "${f}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
    list(APPEND files "${abs}")
  endforeach()
  set(out "${CMAKE_BINARY_DIR}/embedded/cl_${name}.cpp")
  # A list in a COMMAND argument would split into separate words; pass it with escaped semicolons.
  string(REPLACE ";" "$<SEMICOLON>" files_arg "${files}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} "-DOUT=${out}" "-DNAME=${name}" "-DFILES=${files_arg}"
            -P "${CMAKE_SOURCE_DIR}/cmake/EmbedFiles.cmake"
    DEPENDS ${files} "${CMAKE_SOURCE_DIR}/cmake/EmbedFiles.cmake"
    COMMENT "Embedding OpenCL kernels ${name}"
    VERBATIM)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# hdb_add_benchmark(<name>
#   COMMON <sources>          backend-neutral logic + reference (src/common/bench, src/common/reference)
#   CPU <sources>             -> bin/hdb-<name>-cpu
#   OPENCL <sources>          -> bin/hdb-<name>-opencl (only when OpenCL is found)
#   CL_KERNELS <.cl files>    embedded as hdb::opencl::kernels::<name>
#   CUDA <sources>            -> bin/hdb-<name>-cuda (only when CUDA is found)
#   LIBS <targets>            extra libraries for every executable)
# Creates the library hdb_bench_<name> from COMMON so tests can link the logic directly.
function(hdb_add_benchmark name)
  cmake_parse_arguments(B "" "" "COMMON;CPU;OPENCL;CL_KERNELS;CUDA;LIBS" ${ARGN})
  set(lib hdb_bench_${name})
  add_library(${lib} STATIC ${B_COMMON})
  target_link_libraries(${lib} PUBLIC hdb_common ${B_LIBS})
  hdb_warnings(${lib})

  if(B_CPU)
    add_executable(hdb-${name}-cpu ${B_CPU})
    target_link_libraries(hdb-${name}-cpu PRIVATE ${lib} hdb_cpu_runtime)
    hdb_warnings(hdb-${name}-cpu)
  endif()
  if(B_OPENCL AND HDB_HAVE_OPENCL)
    set(embedded "")
    if(B_CL_KERNELS)
      hdb_embed_cl(embedded ${name} ${B_CL_KERNELS})
    endif()
    add_executable(hdb-${name}-opencl ${B_OPENCL} ${embedded})
    target_link_libraries(hdb-${name}-opencl PRIVATE ${lib} hdb_opencl_runtime)
    hdb_warnings(hdb-${name}-opencl)
  endif()
  if(B_CUDA AND HDB_HAVE_CUDA)
    add_executable(hdb-${name}-cuda ${B_CUDA})
    target_link_libraries(hdb-${name}-cuda PRIVATE ${lib} hdb_cuda_runtime)
    hdb_warnings(hdb-${name}-cuda)
  endif()
endfunction()
