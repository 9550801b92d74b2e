#include "ngram_backend.hpp"

#include "bench/ngram_search.hpp"
#include "harness/errors.hpp"

namespace hdb::opencl {
namespace kernels {
extern const char ngram[];
}

using ngram::kBinSize;

namespace {
cl::Buffer upload(OpenClPlatform& p, const std::vector<std::uint32_t>& v) {
  cl::Buffer b = device_buffer(p.context_ref(), 4 * v.size(), CL_MEM_READ_ONLY);
  if (!v.empty()) p.queue().enqueueWriteBuffer(b, CL_TRUE, 0, 4 * v.size(), v.data());
  return b;
}
}  // namespace

std::vector<NgramVariant> OpenClNgram::variants() const {
  return {{"gpu-segmented", false, true}, {"gpu-segmented", true, true}};
}

nlohmann::json OpenClNgram::load_index(const ngram::NgramIndex& ix) {
  if (p_.max_work_group_size() < kBinSize)
    throw SkipCase("the device's work-groups hold fewer than " + std::to_string(kBinSize) + " work-items");
  std::uint64_t bytes = ix.bytes();
  if (bytes > p_.memory_bytes() / 2) throw SkipCase("the index (" + std::to_string(bytes >> 20) + " MiB) does not fit the device");
  if (4 * ix.postings() > p_.max_alloc_bytes()) throw SkipCase("a posting array exceeds the device's largest buffer");
  return checked("uploading the n-gram index", [&] {
    HostTimer t;
    article_ = upload(p_, ix.post_article);
    map_ = upload(p_, ix.post_map);
    list_off_ = upload(p_, ix.list_offsets);
    dir_off_ = upload(p_, ix.dir_offsets);
    dir_bin_ = upload(p_, ix.dir_bin);
    dir_start_ = upload(p_, ix.dir_start);
    p_.queue().finish();
    double s = t.seconds();
    kernel_ = cl::Kernel(p_.program("ngram", kernels::ngram), "ngram_segmented");
    bins_ = ix.bins();
    return nlohmann::json{{"device_index_bytes", bytes}, {"upload_s", s}};
  });
}

Breakdown OpenClNgram::search(const NgramVariant& v, const std::vector<ngram::QueryPlan>& plans, NgramSearchOut& out) {
  return checked("n-gram search", [&] {
    ngram::PackedQueries pq = ngram::pack_queries(plans);
    std::size_t nq = plans.size(), row = std::size_t{bins_} * (kBinSize / 32);
    cl::Buffer lists = device_buffer(p_.context_ref(), 4 * pq.lists.size(), CL_MEM_READ_ONLY);
    cl::Buffer off = device_buffer(p_.context_ref(), 4 * pq.off.size(), CL_MEM_READ_ONLY);
    cl::Buffer ms = device_buffer(p_.context_ref(), 4 * pq.m.size(), CL_MEM_READ_ONLY);
    std::size_t out_rows = v.batch ? nq : 1;
    cl::Buffer words = device_buffer(p_.context_ref(), 4 * row * out_rows);
    std::vector<std::uint32_t> host(row * out_rows);
    Breakdown b;
    HostTimer total;
    {
      cl::Event e1, e2, e3;
      if (!pq.lists.empty()) p_.queue().enqueueWriteBuffer(lists, CL_FALSE, 0, 4 * pq.lists.size(), pq.lists.data(), nullptr, &e1);
      p_.queue().enqueueWriteBuffer(off, CL_FALSE, 0, 4 * pq.off.size(), pq.off.data(), nullptr, &e2);
      p_.queue().enqueueWriteBuffer(ms, CL_TRUE, 0, 4 * pq.m.size(), pq.m.data(), nullptr, &e3);
      b.h2d = (pq.lists.empty() ? 0 : event_seconds(e1)) + event_seconds(e2) + event_seconds(e3);
    }
    kernel_.setArg(0, article_);
    kernel_.setArg(1, map_);
    kernel_.setArg(2, list_off_);
    kernel_.setArg(3, dir_off_);
    kernel_.setArg(4, dir_bin_);
    kernel_.setArg(5, dir_start_);
    kernel_.setArg(6, lists);
    kernel_.setArg(7, off);
    kernel_.setArg(8, ms);
    kernel_.setArg(10, bins_);
    kernel_.setArg(11, words);
    auto launch = [&](std::uint32_t base, std::size_t count) {
      cl::Event k, r;
      kernel_.setArg(9, base);
      p_.queue().enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(std::size_t{bins_} * kBinSize, count),
                                      cl::NDRange(kBinSize, 1), nullptr, &k);
      p_.queue().enqueueReadBuffer(words, CL_TRUE, 0, 4 * row * count, host.data(), nullptr, &r);
      b.kernel += event_seconds(k);
      b.d2h += event_seconds(r);
    };
    if (v.batch) {
      out.hits.assign(nq, {});
      out.seconds.clear();
      if (nq && bins_) launch(0, nq);
      for (std::size_t q = 0; q < nq && bins_; ++q) out.hits[q] = ngram::bitmap_hits(host.data() + q * row, row);
    } else {
      time_each_query(nq, out, [&](std::size_t q) {
        if (!bins_ || plans[q].n == 0) return;
        launch(static_cast<std::uint32_t>(q), 1);
        out.hits[q] = ngram::bitmap_hits(host.data(), row);
      });
    }
    b.total = total.seconds();
    return b;
  });
}

}  // namespace hdb::opencl
