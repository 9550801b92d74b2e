# Helpers that every benchmark's cmake/bench/<name>.cmake uses.

# The backends, from config/backends.json (the one list, which the driver reads too): their CMake keys
# (HDB_BACKEND_KEYS, in order) and those with sources of their own (HDB_SOURCE_BACKEND_KEYS; the others
# compile another backend's sources another way, e.g. CUDA_HOST).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/config/backends.json")
file(READ "${CMAKE_SOURCE_DIR}/config/backends.json" _hdb_backends)
string(JSON _hdb_count LENGTH "${_hdb_backends}" backends)
math(EXPR _hdb_last "${_hdb_count} - 1")
set(HDB_BACKEND_KEYS "")
set(HDB_SOURCE_BACKEND_KEYS "")
foreach(i RANGE ${_hdb_last})
  string(JSON _key GET "${_hdb_backends}" backends ${i} cmake)
  string(JSON _from ERROR_VARIABLE _no_from GET "${_hdb_backends}" backends ${i} sources_of)
  list(APPEND HDB_BACKEND_KEYS ${_key})
  if(_no_from)
    list(APPEND HDB_SOURCE_BACKEND_KEYS ${_key})
  endif()
endforeach()

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

# hdb_cuda_host_sources(<out_var> <sources>): the CUDA backend's sources for host execution. A .cu
# file is compiled as C++ through a generated one-line .cpp that includes it (a source file's
# language is one per directory, and nvcc compiles the same file); other sources pass through.
function(hdb_cuda_host_sources out_var)
  set(out "")
  foreach(f IN LISTS ARGN)
    get_filename_component(abs "${f}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(abs MATCHES "\\.cu$")
      file(RELATIVE_PATH rel "${CMAKE_SOURCE_DIR}" "${abs}")
      set(wrapper "${CMAKE_BINARY_DIR}/cuda_host/${rel}.cpp")
      file(CONFIGURE OUTPUT "${wrapper}" CONTENT "// Host execution of ${rel} (generated).\n#include \"${abs}\"\n")
      # -fno-sanitize=null: Thrust's CPP system binds a reference to a null execution policy
      # (thrust/detail/reference.h, assign_from), which UBSan stops at in every thrust::sort;
      # a null dereference of our own still faults, and AddressSanitizer reports it.
      set_source_files_properties("${wrapper}" PROPERTIES OBJECT_DEPENDS "${abs}" COMPILE_OPTIONS -fno-sanitize=null)
      list(APPEND out "${wrapper}")
    else()
      list(APPEND out "${abs}")
    endif()
  endforeach()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# hdb_add_benchmark(<name>
#   COMMON <sources>        backend-neutral logic, reference and workloads -> library hdb_bench_<name>
#                           (the tests link it to drive the logic directly)
#   LIBS <targets>          what hdb_bench_<name> links besides hdb_common
#   and for each backend <B> with sources of its own (HDB_SOURCE_BACKEND_KEYS: CPU, OPENCL, CUDA):
#   <B> <sources>           the main -> executable hdb-<name>-<b>
#   <B>_LIB <sources>       the backend class -> library hdb_<name>_<b>, which the executable links
#                           and the unit tests link directly
#   <B>_LIBS <targets>      what the backend needs besides hdb_bench_<name> and hdb_<b>_runtime
#   The CUDA sources also make a CUDA_HOST backend when HDB_CUDA_HOST is on: the same files
#   compiled for host execution (hdb_<name>_cuda_host, hdb-<name>-cuda-host), each hdb_*_cuda in
#   CUDA_LIBS replaced by its hdb_*_cuda_host.
#   CL_KERNELS <.cl files>  embedded as hdb::opencl::kernels::<name> (into the OpenCL library when
#                           there is one, else into the executable); concatenated in order)
# A backend is built when its API was found (OpenCL, CUDA; the CPU always) and every target in its
# <B>_LIBS exists, so a benchmark composed from another benchmark's backends follows them.
function(hdb_add_benchmark name)
  set(backend_keys "")
  foreach(B IN LISTS HDB_SOURCE_BACKEND_KEYS)
    list(APPEND backend_keys ${B} ${B}_LIB ${B}_LIBS)
  endforeach()
  cmake_parse_arguments(ARG "" "" "COMMON;LIBS;CL_KERNELS;${backend_keys}" ${ARGN})
  set(bench hdb_bench_${name})
  add_library(${bench} STATIC ${ARG_COMMON})
  target_link_libraries(${bench} PUBLIC hdb_common ${ARG_LIBS})
  hdb_warnings(${bench})

  set(HDB_HAVE_CPU TRUE)
  if(HDB_HAVE_CUDA_HOST)
    hdb_cuda_host_sources(ARG_CUDA_HOST ${ARG_CUDA})
    hdb_cuda_host_sources(ARG_CUDA_HOST_LIB ${ARG_CUDA_LIB})
    list(TRANSFORM ARG_CUDA_LIBS REPLACE "_cuda$" "_cuda_host" OUTPUT_VARIABLE ARG_CUDA_HOST_LIBS)
  endif()
  foreach(B IN LISTS HDB_BACKEND_KEYS)
    string(TOLOWER ${B} b)
    if(NOT HDB_HAVE_${B} OR (NOT ARG_${B} AND NOT ARG_${B}_LIB))
      continue()
    endif()
    set(missing "")
    foreach(dep IN LISTS ARG_${B}_LIBS)
      if(NOT TARGET ${dep})
        list(APPEND missing ${dep})
      endif()
    endforeach()
    if(missing)
      message(STATUS "${name}: no ${b} backend (needs ${missing})")
      continue()
    endif()
    set(deps ${bench} hdb_${b}_runtime ${ARG_${B}_LIBS})
    set(embedded "")
    if(B STREQUAL "OPENCL" AND ARG_CL_KERNELS)
      hdb_embed_cl(embedded ${name} ${ARG_CL_KERNELS})
    endif()
    if(ARG_${B}_LIB)
      set(backend_lib hdb_${name}_${b})
      add_library(${backend_lib} STATIC ${ARG_${B}_LIB} ${embedded})
      target_link_libraries(${backend_lib} PUBLIC ${deps})
      hdb_warnings(${backend_lib})
      set(deps ${backend_lib})
      set(embedded "")
    endif()
    if(ARG_${B})
      string(REPLACE "_" "-" exe_backend "${b}")
      set(exe hdb-${name}-${exe_backend})
      add_executable(${exe} ${ARG_${B}} ${embedded})
      target_link_libraries(${exe} PRIVATE ${deps})
      hdb_warnings(${exe})
    endif()
  endforeach()
  if(HDB_HAVE_CUDA_TRAFFIC AND TARGET hdb-${name}-cuda-host)
    hdb_add_traffic_twin(${name} "${ARG_CUDA_HOST}" "${ARG_CUDA_HOST_LIB}" "${ARG_CUDA_HOST_LIBS}")
  endif()
endfunction()

# hdb_add_traffic_twin(<name> <exe sources> <lib sources> <cuda-host libs>): hdb-<name>-cuda-host
# again, instrumented for --traffic (docs/cuda.md): the same host-execution sources compiled with
# -fsanitize=thread and linked against the suite's callbacks (hdb_cuda_traffic_hooks) instead of
# libtsan, as bin/traffic/hdb-<name>-cuda-host (target hdb-<name>-cuda-host-traffic), to which the
# plain executable hands a --traffic run. Each hdb_*_cuda_host it links is replaced by its
# hdb_*_cuda_traffic.
# The optimisations that would change an access's width are off: scalar replacement of aggregates
# (a uint4 load would arrive as four 4-byte loads), the vectorisers and store merging (GCC's wider
# accesses where nvcc keeps the source's), and loops turned into memcpy/memset calls (which no
# callback sees).
set(HDB_TRAFFIC_FLAGS -fsanitize=thread -fno-tree-sra -fno-tree-loop-vectorize -fno-tree-slp-vectorize
    -fno-store-merging -fno-tree-loop-distribute-patterns)
function(hdb_add_traffic_twin name exe_sources lib_sources libs)
  list(TRANSFORM libs REPLACE "_cuda_host$" "_cuda_traffic" OUTPUT_VARIABLE twin_libs)
  foreach(dep IN LISTS twin_libs)
    if(NOT TARGET ${dep})
      message(STATUS "${name}: no traffic build (needs ${dep})")
      return()
    endif()
  endforeach()
  set(deps hdb_bench_${name} hdb_cuda_host_runtime ${twin_libs} hdb_cuda_traffic_hooks)
  if(lib_sources)
    add_library(hdb_${name}_cuda_traffic STATIC ${lib_sources})
    target_link_libraries(hdb_${name}_cuda_traffic PUBLIC ${deps})
    target_compile_options(hdb_${name}_cuda_traffic PRIVATE ${HDB_TRAFFIC_FLAGS})
    hdb_warnings(hdb_${name}_cuda_traffic)
    set(deps hdb_${name}_cuda_traffic)
  endif()
  set(exe hdb-${name}-cuda-host-traffic)
  add_executable(${exe} ${exe_sources})
  target_link_libraries(${exe} PRIVATE ${deps})
  target_compile_options(${exe} PRIVATE ${HDB_TRAFFIC_FLAGS})
  set_target_properties(${exe} PROPERTIES OUTPUT_NAME hdb-${name}-cuda-host
                        RUNTIME_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/traffic)
  hdb_warnings(${exe})
endfunction()
