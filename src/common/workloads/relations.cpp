#include "workloads/relations.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "harness/parallel.hpp"
#include "workloads/random.hpp"

namespace hdb::ra {

HostMemory::HostMemory(std::uint64_t words) : words_(words ? new std::uint32_t[words]() : nullptr), capacity_(words) {}
HostMemory::~HostMemory() { delete[] words_; }

void check_shape(int values, int key_words) {
  if (key_words != 1 && key_words != 2) throw std::invalid_argument("keys are 1 or 2 words (32 or 64 bits)");
  if (values < 0 || values > max_values(key_words))
    throw std::invalid_argument("a tuple with a " + std::to_string(32 * key_words) + "-bit key has 0.." +
                                std::to_string(max_values(key_words)) + " values");
}

Relation::Relation(std::uint64_t rows, int values, int key_words)
    : rows_(rows), values_(values), key_words_(key_words) {
  check_shape(values, key_words);
  memory_ = std::make_shared<HostMemory>(rows * static_cast<std::uint64_t>(width()));
}

Relation::Relation(std::shared_ptr<HostMemory> memory, std::uint64_t rows, int values, int key_words)
    : memory_(std::move(memory)), rows_(rows), values_(values), key_words_(key_words) {
  check_shape(values, key_words);
  if (rows > capacity_rows()) throw std::length_error("relation memory too small for its rows");
}

std::uint64_t Relation::capacity_rows() const {
  return memory_ ? memory_->capacity_words() / static_cast<std::uint64_t>(width()) : 0;
}

void Relation::set_rows(std::uint64_t rows) {
  if (rows > capacity_rows())
    throw std::length_error("relation holds " + std::to_string(capacity_rows()) + " tuples, " + std::to_string(rows) +
                            " asked");
  rows_ = rows;
}

Relation Relation::clone() const {
  Relation r(rows_, values_, key_words_);
  if (words()) std::memcpy(r.data(), data(), bytes());
  return r;
}

int compare_tuples(const std::uint32_t* a, const std::uint32_t* b, int width) {
  for (int i = 0; i < width; ++i)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

bool same_tuples(const Relation& a, const Relation& b) {
  return a.values() == b.values() && a.key_words() == b.key_words() && a.rows() == b.rows() &&
         (a.words() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

std::string first_difference(const Relation& got, const Relation& want) {
  if (got.key_words() != want.key_words())
    return "keys have " + std::to_string(got.key_bits()) + " bits, expected " + std::to_string(want.key_bits());
  if (got.values() != want.values())
    return "tuples have " + std::to_string(got.values()) + " values, expected " + std::to_string(want.values());
  std::uint64_t n = std::min(got.rows(), want.rows());
  for (std::uint64_t i = 0; i < n; ++i)
    if (compare_tuples(got.tuple(i), want.tuple(i), got.width()) != 0) {
      std::string s = "tuple " + std::to_string(i) + " is (";
      for (int w = 0; w < got.width(); ++w) s += (w ? "," : "") + std::to_string(got.tuple(i)[w]);
      s += "), expected (";
      for (int w = 0; w < want.width(); ++w) s += (w ? "," : "") + std::to_string(want.tuple(i)[w]);
      return s + ")";
    }
  if (got.rows() != want.rows()) return std::to_string(got.rows()) + " tuples, expected " + std::to_string(want.rows());
  return {};
}

namespace {
// Fixed-width rows of runtime width, sorted as W-word structs. With threads: chunks sorted at once,
// then neighbouring runs merged pairwise, a round at a time (the last merge is one thread's); the
// result is the same for any thread count (equal rows are identical words).
template <int W>
void sort_fixed(std::uint32_t* d, std::uint64_t n, int threads) {
  struct Row {
    std::uint32_t w[W];
    bool operator<(const Row& o) const { return std::lexicographical_compare(w, w + W, o.w, o.w + W); }
  };
  static_assert(sizeof(Row) == 4 * W);
  Row* rows = reinterpret_cast<Row*>(d);
  const int parts = n >= 65536 ? std::max(1, std::min(threads, 64)) : 1;
  std::vector<std::uint64_t> at(static_cast<std::size_t>(parts) + 1);
  for (int c = 0; c <= parts; ++c)
    at[static_cast<std::size_t>(c)] = n * static_cast<std::uint64_t>(c) / static_cast<std::uint64_t>(parts);
  run_tasks(parts, [&](int c) {
    std::sort(rows + at[static_cast<std::size_t>(c)], rows + at[static_cast<std::size_t>(c) + 1]);
  });
  for (int run = 1; run < parts; run *= 2) {
    std::vector<int> firsts;
    for (int c = 0; c + run < parts; c += 2 * run) firsts.push_back(c);
    run_tasks(static_cast<int>(firsts.size()), [&](int m) {
      const int c = firsts[static_cast<std::size_t>(m)];
      std::inplace_merge(rows + at[static_cast<std::size_t>(c)], rows + at[static_cast<std::size_t>(c + run)],
                         rows + at[static_cast<std::size_t>(std::min(c + 2 * run, parts))]);
    });
  }
}
}  // namespace

void sort_tuples(Relation& r, int threads) {
  std::uint32_t* d = r.data();
  std::uint64_t n = r.rows();
  if (n < 2) return;
  switch (r.width()) {
    case 1: sort_fixed<1>(d, n, threads); break;
    case 2: sort_fixed<2>(d, n, threads); break;
    case 3: sort_fixed<3>(d, n, threads); break;
    case 4: sort_fixed<4>(d, n, threads); break;
    case 5: sort_fixed<5>(d, n, threads); break;
    case 6: sort_fixed<6>(d, n, threads); break;
    case 7: sort_fixed<7>(d, n, threads); break;
    default: sort_fixed<8>(d, n, threads); break;
  }
}

Relation tuple_sorted(const Relation& r, int threads) {
  Relation s = r.clone();
  sort_tuples(s, threads);
  return s;
}

void fill_relation(Relation& out, const RelationSpec& spec, std::uint64_t seed, int threads) {
  if (out.rows() != spec.rows || out.values() != spec.values || out.key_words() != spec.key_words)
    throw std::invalid_argument("fill_relation: relation shape differs from the spec");
  std::vector<std::uint32_t> keys = generate_u32(spec.rows, seed, spec.keys, threads);
  std::uint32_t* d = out.data();
  const int w = out.width();
  const std::uint64_t vseed = splitmix64(seed ^ 0x76616c756573ull);  // "values"
  parallel_for(spec.rows, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      std::uint32_t* t = d + i * static_cast<std::uint64_t>(w);
      const int kw = spec.key_words;
      set_key(t, kw, kw == 2 ? wide_key(keys[i]) : keys[i]);
      for (int v = kw; v < w; ++v) {
        // Odd values before masking keep data away from all-zero; the mask may then make tuples repeat.
        std::uint32_t x =
            static_cast<std::uint32_t>(rand_at(vseed, i * kMaxValues + static_cast<std::uint64_t>(v - kw + 1))) | 1u;
        t[v] = (x & spec.value_mask) | (spec.value_mask ? 0u : 1u);
      }
    }
  });
  if (spec.sorted) sort_tuples(out, threads);
}

Relation make_relation(const RelationSpec& spec, std::uint64_t seed, int threads) {
  Relation r(spec.rows, spec.values, spec.key_words);
  fill_relation(r, spec, seed, threads);
  return r;
}

}  // namespace hdb::ra
