# ngram: nsearch approximate text search (docs/ngram.md). zlib reads GCIDE's dictzip file; without
# it (e.g. the bare GPU machine) the GCIDE loader reports that and --corpus auto uses synthetic text.
# Backend classes live in their own libraries so the unit tests can call them directly.
find_package(ZLIB)
set(ngram_zlib "")
if(ZLIB_FOUND)
  set(ngram_zlib ZLIB::ZLIB)
endif()

hdb_add_benchmark(ngram
  COMMON     src/common/bench/ngram.cpp
             src/common/algorithms/ngram_index.cpp
             src/common/algorithms/ngram_search.cpp
             src/common/reference/ngram_reference.cpp
             src/common/workloads/text_corpus.cpp
             src/common/workloads/text_queries.cpp
  LIBS       ${ngram_zlib}
  CPU        src/cpu/ngram_main.cpp
  CPU_LIB    src/cpu/ngram_backend.cpp
  OPENCL     src/opencl/ngram_main.cpp
  OPENCL_LIB src/opencl/ngram_backend.cpp
  CL_KERNELS src/opencl/kernels/ngram.cl
  CUDA       src/cuda/ngram_main.cpp
  CUDA_LIB   src/cuda/ngram_backend.cu)

if(ZLIB_FOUND)
  target_compile_definitions(hdb_bench_ngram PUBLIC HDB_HAVE_ZLIB=1)
endif()
