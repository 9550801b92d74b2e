// The column model, the reference and its checks, and the CPU parallel algorithms forced onto
// 3 and 7 threads at tiny sizes (grain 1), compared with the serial reference.
#include <gtest/gtest.h>

#include <set>

#include "bench/merge.hpp"
#include "merge_algorithms.hpp"
#include "merge_inputs.hpp"
#include "reference/merge_reference.hpp"

namespace hdb {
namespace {

TEST(MergeModel, CodeWidthIsMinimal) {
  EXPECT_EQ(code_width(0), 0u);
  EXPECT_EQ(code_width(1), 0u);
  EXPECT_EQ(code_width(2), 1u);
  EXPECT_EQ(code_width(3), 2u);
  EXPECT_EQ(code_width(4), 2u);
  EXPECT_EQ(code_width(5), 3u);
  EXPECT_EQ(code_width(1u << 20), 20u);
  EXPECT_EQ(code_width((1u << 20) + 1), 21u);
  EXPECT_EQ(code_width(0xffffffffull), 32u);
}

TEST(MergeModel, BitPackedStraddlesWords) {
  for (unsigned w : {1u, 3u, 7u, 13u, 31u, 32u}) {
    BitPacked p;
    p.resize(1000, w);
    for (std::uint64_t i = 0; i < 1000; ++i) p.set(i, static_cast<std::uint32_t>(rand_at(w, i) & ((1ull << w) - 1)));
    for (std::uint64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(p.get(i), static_cast<std::uint32_t>(rand_at(w, i) & ((1ull << w) - 1)))
          << "width " << w << " id " << i;
  }
}

TEST(MergeModel, GeneratedColumnHasRequestedShape) {
  auto in = generate_column<std::uint64_t>(column_spec(10000, 100, 0.01), 3, 2);
  EXPECT_EQ(in.main_rows(), 10000u);
  EXPECT_EQ(in.delta_rows(), 100u);
  EXPECT_EQ(in.main_dict.size(), 100u);
  EXPECT_EQ(in.main_codes.width, 7u);
  EXPECT_TRUE(ref::check_sorted_distinct(in.main_dict, "U_M").empty());
  auto again = generate_column<std::uint64_t>(column_spec(10000, 100, 0.01), 3, 1);
  EXPECT_EQ(again.delta, in.delta);  // same seed, any thread count: same data
  EXPECT_EQ(again.main_codes.words, in.main_codes.words);
  auto all_new = generate_column<std::string_view>(column_spec(1000, 1000, 1.0), 3, 2);
  EXPECT_EQ(ref::delta_dict(all_new.delta).size(), 1000u);
  EXPECT_EQ(ref::dict_merge(all_new.main_dict, ref::delta_dict(all_new.delta)).dict.size(), 2000u);
}

TEST(MergeModel, VerificationCatchesWrongOutput) {
  auto in = generate_column<std::uint32_t>(column_spec(5000, 300, 0.1), 5, 2);
  MergeWork<std::uint32_t> w = prepare_work(in);
  MergeOutput<std::uint32_t> out;
  out.delta_dict = w.delta_dict;
  out.delta_ids = w.delta_ids;
  out.dict = w.dict;
  out.x_m = w.x_m;
  out.x_d = w.x_d;
  cpu::reencode_lookup(in, w.delta_ids, w.x_m, w.x_d, w.width, out.codes, 1);
  EXPECT_EQ(verify_merge_output(MergeStep::Whole, w, out), "");
  auto bad = out;
  bad.codes.words[3] ^= 1ull << 17;
  EXPECT_NE(verify_merge_output(MergeStep::Reencode, w, bad), "");
  bad = out;
  bad.codes.width += 1;
  EXPECT_NE(verify_merge_output(MergeStep::Reencode, w, bad), "");
  bad = out;
  std::swap(bad.dict[0], bad.dict[1]);
  EXPECT_NE(verify_merge_output(MergeStep::DictMerge, w, bad), "");
  bad = out;
  bad.x_d[0] ^= 1;
  EXPECT_NE(verify_merge_output(MergeStep::DictMerge, w, bad), "");
  bad = out;
  bad.delta_ids.back() ^= 1;
  EXPECT_NE(verify_merge_output(MergeStep::DeltaDict, w, bad), "");
}

template <class T>
class ParallelAlgorithms : public ::testing::Test {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128, std::string_view>;
TYPED_TEST_SUITE(ParallelAlgorithms, ValueTypes);

TYPED_TEST(ParallelAlgorithms, MatchReferenceOnEveryEdgeCaseAndThreadCount) {
  using T = TypeParam;
  for (const auto& [name, in] : test::edge_inputs<T>()) {
    MergeWork<T> w = prepare_work(in);
    for (int threads : {3, 7}) {
      SCOPED_TRACE(name + " threads=" + std::to_string(threads));
      MergeOutput<T> o;
      std::vector<T> tmp;
      cpu::delta_dict_parallel(in.delta, o.delta_dict, tmp, threads, 1);
      cpu::ids_of(o.delta_dict, in.delta, o.delta_ids, threads, 1);
      cpu::dict_merge_parallel(in.main_dict, o.delta_dict, o.dict, o.x_m, o.x_d, threads, 1);
      cpu::reencode_lookup(in, o.delta_ids, o.x_m, o.x_d, code_width(o.dict.size()), o.codes, threads, 1);
      ASSERT_EQ(verify_merge_output(MergeStep::Whole, w, o), "");
      cpu::reencode_binsearch(in, w.dict, w.width, o.codes, threads, 1);
      ASSERT_EQ(verify_merge_output(MergeStep::Reencode, w, o), "");
    }
  }
}

// The width-specialised packer and unpacker against BitPacked::set/get at every width 0..32, with
// the maximum id and 0 among random ids.
template <unsigned W>
struct UnpackIdentity {
  static void run(const std::uint64_t* in, std::uint32_t* out, std::size_t groups, const std::uint32_t*) {
    cpu::unpack_groups<W>(in, out, groups, [](std::uint32_t id) { return id; });
  }
};

TEST(MergePack, EveryWidthRoundTrips) {
  for (unsigned w = 0; w <= 32; ++w) {
    SCOPED_TRACE("width " + std::to_string(w));
    const std::size_t groups = 5;
    std::uint64_t mask = w == 0 ? 0 : (w == 64 ? ~0ull : (1ull << w) - 1);
    std::vector<std::uint32_t> ids(64 * groups);
    for (std::size_t i = 0; i < ids.size(); ++i)
      ids[i] = static_cast<std::uint32_t>((i % 7 == 0 ? ~0ull : i % 11 == 0 ? 0 : rand_at(w, i)) & mask);
    BitPacked want;
    want.resize(ids.size(), w);
    for (std::size_t i = 0; i < ids.size(); ++i) want.set(i, ids[i]);
    std::vector<std::uint64_t> words(groups * w + 1, 0x5a5a5a5a5a5a5a5aull);  // one guard word
    cpu::pick_width<cpu::PackGroups>(w)(ids.data(), words.data(), groups);
    cpu::stream_fence();
    for (std::size_t k = 0; k < want.words.size(); ++k) ASSERT_EQ(words[k], want.words[k]) << "word " << k;
    EXPECT_EQ(words[groups * w], 0x5a5a5a5a5a5a5a5aull);
    std::vector<std::uint32_t> back(ids.size(), 12345);
    cpu::pick_width<UnpackIdentity>(w)(want.words.data(), back.data(), groups, nullptr);
    EXPECT_EQ(back, ids);
  }
}

// reencode_lookup on its own at every new width 0..32, each with old widths equal to it, one less
// (the fused kernels) and another: row counts that are and are not multiples of 64 and of the
// block, empty delta, all-equal ids, the maximum id; one thread and pieces on 3 and 7 threads. Old
// ids stay below 2^21 (X_M is a vector; from 21 bits on it exceeds kPrefetchMapBytes, so the
// prefetching pass runs) but are packed at their width. The expected words come
// from BitPacked::set, so bits past the last row must be zero too.
TEST(MergePack, ReencodeEveryWidthAndRowCount) {
  for (unsigned wn = 0; wn <= 32; ++wn) {
    std::set<unsigned> old_widths{wn, wn == 0 ? 0 : wn - 1, (wn * 7) % 21};
    for (unsigned wo : old_widths) {
      std::uint64_t new_mask = wn == 0 ? 0 : (1ull << wn) - 1;
      std::uint64_t old_n = std::uint64_t{1} << std::min(wo, 21u);  // 2^21 entries: 8 MB, the prefetching path
      std::vector<std::uint32_t> xm(old_n), xd(97);
      for (std::uint64_t i = 0; i < old_n; ++i)
        xm[i] = static_cast<std::uint32_t>((i + 1 == old_n ? ~0ull : rand_at(wn + 100, i)) & new_mask);
      for (std::uint64_t i = 0; i < xd.size(); ++i)
        xd[i] = static_cast<std::uint32_t>((i == 0 ? ~0ull : rand_at(wn + 200, i)) & new_mask);
      for (std::uint64_t nm : {0ull, 1ull, 63ull, 64ull, 65ull, 1000ull, 1024ull, 3 * 1024ull + 64 * 5 + 31}) {
        for (std::uint64_t nd : {0ull, 1ull, 130ull}) {
          for (bool all_equal : {false, true}) {
            SCOPED_TRACE("wn=" + std::to_string(wn) + " wo=" + std::to_string(wo) + " nm=" + std::to_string(nm) +
                         " nd=" + std::to_string(nd) + (all_equal ? " all-equal" : ""));
            MergeInput<std::uint32_t> in;
            in.main_codes.resize(nm, wo);
            std::vector<std::uint32_t> old(nm), ids(nd);
            for (std::uint64_t r = 0; r < nm; ++r) {
              old[r] = static_cast<std::uint32_t>(all_equal || r % 5 == 0 ? old_n - 1 : rand_at(wo, r) % old_n);
              in.main_codes.set(r, old[r]);
            }
            in.delta.resize(nd);
            for (std::uint64_t r = 0; r < nd; ++r)
              ids[r] = static_cast<std::uint32_t>(all_equal ? 0 : rand_at(7, r) % xd.size());
            BitPacked want;
            want.resize(nm + nd, wn);
            for (std::uint64_t r = 0; r < nm; ++r) want.set(r, xm[old[r]]);
            for (std::uint64_t r = 0; r < nd; ++r) want.set(nm + r, xd[ids[r]]);
            for (int threads : {1, 3, 7}) {
              BitPacked got;
              got.words.assign(want.words.size(), ~0ull);  // stale bits must be overwritten
              cpu::reencode_lookup(in, ids, xm, xd, wn, got, threads, 1);
              ASSERT_EQ(got.width, wn);
              ASSERT_EQ(got.size, nm + nd);
              ASSERT_EQ(got.words, want.words) << "threads " << threads;
            }
          }
        }
      }
    }
  }
}

// The lockstep branch-free lower bounds against std::lower_bound: dictionaries of 0, 1, 2^k-1, 2^k,
// 2^k+1 entries, values below, between, equal to and above the entries (including the maximum),
// counts that are not multiples of the lane count.
TEST(MergePack, LowerBoundsMatchStd) {
  for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 15ull, 16ull, 17ull, 1023ull, 1024ull, 1025ull}) {
    std::vector<std::uint64_t> dict(n);
    for (std::uint64_t i = 0; i < n; ++i) dict[i] = 3 * i + 1;
    if (n) dict.back() = ~0ull;
    std::vector<std::uint64_t> values;
    for (std::uint64_t v = 0; v < 3 * n + 5; ++v) values.push_back(v);
    values.push_back(~0ull);
    values.push_back(~0ull - 1);
    for (std::uint64_t count : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{17}, std::uint64_t{values.size()}}) {
      if (count > values.size()) continue;
      std::vector<std::uint32_t> got(count, 7);
      cpu::lower_bounds(dict.data(), n, values.data(), count, got.data());
      for (std::uint64_t i = 0; i < count; ++i)
        ASSERT_EQ(got[i], std::lower_bound(dict.begin(), dict.end(), values[i]) - dict.begin())
            << "n=" << n << " i=" << i;
    }
  }
}

// The parallel 1a's radix sort against std::sort: u32 and u64, sizes around a digit's 256, all-equal
// keys (every pass skipped), keys differing only in the top byte, 0 and the maximum.
TEST(MergePack, RadixSortMatchesStd) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    for (std::uint64_t n : {0ull, 1ull, 255ull, 256ull, 257ull, 5000ull}) {
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<T> a(n), tmp(n);
        for (std::uint64_t i = 0; i < n; ++i) {
          T r = static_cast<T>(rand_at(kind, i));
          a[i] = kind == 0 ? static_cast<T>(~T{0}) : kind == 1 ? static_cast<T>(r << (8 * sizeof(T) - 8)) : r;
          if (kind == 2 && i % 9 == 0) a[i] = i % 2 ? T{0} : static_cast<T>(~T{0});
        }
        std::vector<T> want = a;
        std::sort(want.begin(), want.end());
        cpu::radix_sort(a.data(), n, tmp.data());
        ASSERT_EQ(a, want) << "n=" << n << " kind=" << kind << " bytes=" << sizeof(T);
      }
    }
  };
  check(std::uint32_t{0});
  check(std::uint64_t{0});
}

// The 16-bit form of X_M (X_M[i] - i): a strictly increasing map of 2^17 entries whose shifts grow
// to the 16-bit maximum, at the new width equal to and one more than the old; and maps it must
// refuse (a shift of 2^16, one entry below its index), which take the 32-bit path.
TEST(MergePack, ReencodeThroughShiftMap) {
  const unsigned wo = 17;
  const std::uint64_t n = std::uint64_t{1} << wo, nm = 64 * 3000 + 29, nd = 77;
  for (int kind = 0; kind < 3; ++kind) {
    std::vector<std::uint32_t> xm(n), xd(50);
    for (std::uint64_t i = 0; i < n; ++i) xm[i] = static_cast<std::uint32_t>(i + i * 0xffff / (n - 1));
    if (kind == 1) xm.back() += 1;  // last shift 2^16
    if (kind == 2) xm[5] = 0;       // below its index
    for (std::uint64_t i = 0; i < xd.size(); ++i) xd[i] = static_cast<std::uint32_t>(rand_at(3, i) % (n + 0xffff));
    std::vector<std::uint16_t> shift;
    EXPECT_EQ(cpu::shift_map(xm, shift), kind == 0);
    for (unsigned wn : {18u, 19u}) {  // 18: wo + 1 (fused), 19: the unfused path
      MergeInput<std::uint32_t> in;
      in.main_codes.resize(nm, wo);
      std::vector<std::uint32_t> ids(nd);
      BitPacked want;
      want.resize(nm + nd, wn);
      for (std::uint64_t r = 0; r < nm; ++r) {
        auto id = static_cast<std::uint32_t>(r % 7 == 0 ? n - 1 : rand_at(wo, r) % n);
        in.main_codes.set(r, id);
        want.set(r, xm[id]);
      }
      in.delta.resize(nd);
      for (std::uint64_t r = 0; r < nd; ++r) {
        ids[r] = static_cast<std::uint32_t>(rand_at(9, r) % xd.size());
        want.set(nm + r, xd[ids[r]]);
      }
      for (int threads : {1, 3}) {
        BitPacked got;
        cpu::reencode_lookup(in, ids, xm, xd, wn, got, threads, 1, &shift);
        ASSERT_EQ(got.words, want.words) << "kind " << kind << " wn " << wn << " threads " << threads;
      }
    }
  }
}

}  // namespace
}  // namespace hdb
