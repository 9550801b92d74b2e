#include "npy.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace hdb::tools {

namespace {

bool little_endian() {
  const std::uint32_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

}  // namespace

void write_npy_columns(const std::string& path, std::uint64_t columns, std::uint64_t rows,
                       const std::function<const std::uint32_t*(std::uint64_t, std::vector<std::uint32_t>&)>& column) {
  if (!little_endian()) throw std::runtime_error("hdb-export writes little-endian .npy files only");
  std::string header = "{'descr': '<u4', 'fortran_order': False, 'shape': (" + std::to_string(columns) + ", " +
                       std::to_string(rows) + "), }";
  // magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64, '\n' last.
  const std::size_t fixed = 10;
  std::size_t total = fixed + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  auto fail = [&path] { throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno)); };
  if (!f) fail();
  const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  const std::uint16_t hlen = static_cast<std::uint16_t>(header.size());
  unsigned char len[2] = {static_cast<unsigned char>(hlen & 0xff), static_cast<unsigned char>(hlen >> 8)};
  if (std::fwrite(magic, 1, 8, f.get()) != 8 || std::fwrite(len, 1, 2, f.get()) != 2 ||
      std::fwrite(header.data(), 1, header.size(), f.get()) != header.size())
    fail();
  std::vector<std::uint32_t> scratch;
  for (std::uint64_t c = 0; c < columns; ++c) {
    const std::uint32_t* words = column(c, scratch);
    if (rows && std::fwrite(words, 4, rows, f.get()) != rows) fail();
  }
  if (std::fflush(f.get()) != 0) fail();
}

}  // namespace hdb::tools
