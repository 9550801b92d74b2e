# cmake -DOUT=file.cpp -DNAME=ident -DFILES="a.cl;b.cl" -P EmbedFiles.cmake
set(body "")
foreach(f IN LISTS FILES)
  file(READ "${f}" text)
  get_filename_component(fname "${f}" NAME)
  string(APPEND body "// ---- ${fname} ----\n${text}\n")
endforeach()
file(WRITE "${OUT}.tmp"
  "// Generated from OpenCL C sources at build time; do not edit.\n"
  "namespace hdb::opencl::kernels {\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"hdbcl(${body})hdbcl\";\n"
  "}\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
