# ngram: nsearch approximate text search (docs/ngram.md). zlib reads GCIDE's dictzip file; without
# it (e.g. the bare GPU machine) the GCIDE loader reports that and --corpus auto uses synthetic text.
find_package(ZLIB)
set(ngram_zlib "")
if(ZLIB_FOUND)
  set(ngram_zlib ZLIB::ZLIB)
endif()

hdb_add_benchmark(ngram
  COMMON src/common/bench/ngram.cpp
         src/common/algorithms/ngram_index.cpp
         src/common/algorithms/ngram_search.cpp
         src/common/reference/ngram_reference.cpp
         src/common/workloads/text_corpus.cpp
         src/common/workloads/text_queries.cpp
  LIBS   ${ngram_zlib}
  CPU    src/cpu/ngram_main.cpp)

if(ZLIB_FOUND)
  target_compile_definitions(hdb_bench_ngram PUBLIC HDB_HAVE_ZLIB=1)
endif()

# Backend classes live in their own libraries so the unit tests can call them directly.
add_library(hdb_ngram_cpu STATIC src/cpu/ngram_backend.cpp src/cpu/ngram_pool.cpp)
target_link_libraries(hdb_ngram_cpu PUBLIC hdb_bench_ngram hdb_cpu_runtime)
hdb_warnings(hdb_ngram_cpu)
target_link_libraries(hdb-ngram-cpu PRIVATE hdb_ngram_cpu)

if(HDB_HAVE_OPENCL)
  hdb_embed_cl(ngram_cl ngram src/opencl/kernels/ngram.cl)
  add_library(hdb_ngram_opencl STATIC src/opencl/ngram_backend.cpp ${ngram_cl})
  target_link_libraries(hdb_ngram_opencl PUBLIC hdb_bench_ngram hdb_opencl_runtime)
  hdb_warnings(hdb_ngram_opencl)
  add_executable(hdb-ngram-opencl src/opencl/ngram_main.cpp)
  target_link_libraries(hdb-ngram-opencl PRIVATE hdb_ngram_opencl)
  hdb_warnings(hdb-ngram-opencl)
endif()

if(HDB_HAVE_CUDA)
  add_library(hdb_ngram_cuda STATIC src/cuda/ngram_backend.cu)
  target_link_libraries(hdb_ngram_cuda PUBLIC hdb_bench_ngram hdb_cuda_runtime)
  hdb_warnings(hdb_ngram_cuda)
  add_executable(hdb-ngram-cuda src/cuda/ngram_main.cpp)
  target_link_libraries(hdb-ngram-cuda PRIVATE hdb_ngram_cuda)
  hdb_warnings(hdb-ngram-cuda)
endif()
