#include "ngram_backend.hpp"

#include "algorithms/ngram_search.hpp"
#include "harness/errors.hpp"

namespace hdb::opencl {
namespace kernels {
extern const char ngram[];
}

using ngram::kBinSize;

namespace {
// Fixed work-group size for the Figure-1 kernels (they bound-check): a NullRange local size makes
// some implementations (PoCL) compile a new work-group function for every global size.
cl::NDRange padded(std::uint64_t n) { return cl::NDRange((n + kBinSize - 1) / kBinSize * kBinSize); }

cl::Buffer upload(OpenClPlatform& p, const std::vector<std::uint32_t>& v) {
  cl::Buffer b = device_buffer(p.context_ref(), 4 * v.size(), CL_MEM_READ_ONLY);
  if (!v.empty()) p.queue().enqueueWriteBuffer(b, CL_TRUE, 0, 4 * v.size(), v.data());
  return b;
}
}  // namespace

OpenClNgram::OpenClNgram(OpenClPlatform& p)
    : p_(p),
      table_("OpenCL ngram", {{OpenClNgramVariant::Gpu, {"gpu", {"search"}, ""}},
                              {OpenClNgramVariant::GpuSegmented, {"gpu-segmented", {"search", "batch"}, ""}}}) {}

void OpenClNgram::plan_memory(MemoryPlan& plan, const ngram::NgramIndex& ix, const NgramVariant& v,
                              const std::vector<ngram::QueryPlan>& plans) const {
  plan_index_copy(plan, ix);
  plan_dense_work(plan, ix);
  if (table_.id(v.name) == OpenClNgramVariant::Gpu) return;
  // search_segmented's scratch: the packed queries and one hit-bitmap row per query in a batch.
  plan_packed_queries(plan, plans);
  plan.add("segmented hit bitmaps", 4ull * ix.bins() * (kBinSize / 32) * (v.batch ? plans.size() : 1));
}

nlohmann::json OpenClNgram::load_index(const ngram::NgramIndex& ix) {
  if (p_.max_work_group_size() < kBinSize)
    throw SkipCase("the device's work-groups hold fewer than " + std::to_string(kBinSize) + " work-items");
  std::uint64_t bytes = ix.bytes();
  MemoryPlan work_plan;
  plan_dense_work(work_plan, ix);
  std::uint64_t work = work_plan.total();
  if (4 * ix.postings() > p_.max_alloc_bytes()) throw SkipCase("a posting array exceeds the device's largest buffer");
  // The last size's buffers go before this size's are made (the plan counts one index).
  release_index();
  scratch_.emplace(p_);
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
    cl::Program& prog = p_.program("ngram", kernels::ngram);
    kernel_ = cl::Kernel(prog, "ngram_segmented");
    scatter_ = cl::Kernel(prog, "ngram_scatter");
    update_ = cl::Kernel(prog, "ngram_update");
    bitmap_ = cl::Kernel(prog, "ngram_bitmap");
    host_ = &ix;
    bins_ = ix.bins();
    std::uint64_t words = std::uint64_t{bins_} * (kBinSize / 32);
    newmap_ = device_buffer(p_.context_ref(), 4ull * ix.articles);
    planes_ = device_buffer(p_.context_ref(), 4ull * ngram::kPlanes * ix.articles);
    alive_ = device_buffer(p_.context_ref(), ix.articles);
    words_ = device_buffer(p_.context_ref(), 4 * words);
    host_words_.assign(words, 0);
    return nlohmann::json{{"device_index_bytes", bytes}, {"device_work_bytes", work}, {"upload_s", s}};
  });
}

void OpenClNgram::release_index() {
  article_ = map_ = list_off_ = dir_off_ = dir_bin_ = dir_start_ = cl::Buffer();
  newmap_ = planes_ = alive_ = words_ = cl::Buffer();
  scratch_.reset();
  host_words_ = {};
  host_ = nullptr;
  bins_ = 0;
}

std::vector<std::uint32_t> OpenClNgram::figure1(const ngram::QueryPlan& plan, Breakdown& b) {
  const ngram::NgramIndex& ix = *host_;
  if (plan.n == 0 || ix.articles == 0) return {};
  cl::CommandQueue& q = p_.queue();
  std::vector<cl::Event> ev(1);
  q.enqueueFillBuffer(planes_, cl_uint{0}, 0, 4ull * ngram::kPlanes * ix.articles, nullptr, &ev[0]);
  q.enqueueFillBuffer(alive_, cl_uchar{0}, 0, ix.articles);
  for (int i = 0; i < plan.n; ++i) {
    std::uint32_t list = plan.lists[static_cast<std::size_t>(i)];
    std::uint32_t begin = ix.list_offsets[list], end = ix.list_offsets[list + 1];
    q.enqueueFillBuffer(newmap_, cl_uint{0}, 0, 4ull * ix.articles);
    if (end > begin) {
      set_args("ngram_scatter arguments", scatter_, article_, map_, begin, end, newmap_);
      q.enqueueNDRangeKernel(scatter_, cl::NullRange, padded(end - begin), cl::NDRange(kBinSize));
    }
    set_args("ngram_update arguments", update_, newmap_, planes_, alive_, ix.articles, i, plan.g,
             ngram::needed_after(plan.m, plan.n, i + 1));
    q.enqueueNDRangeKernel(update_, cl::NullRange, padded(ix.articles), cl::NDRange(kBinSize));
  }
  auto nwords = static_cast<std::uint32_t>(host_words_.size());
  set_args("ngram_bitmap arguments", bitmap_, alive_, ix.articles, words_, nwords);
  cl::Event last, read;
  q.enqueueNDRangeKernel(bitmap_, cl::NullRange, padded(nwords), cl::NDRange(kBinSize), nullptr, &last);
  q.enqueueReadBuffer(words_, CL_TRUE, 0, 4ull * nwords, host_words_.data(), nullptr, &read);
  b.kernel += event_span(ev[0], last);
  b.d2h += event_seconds(read);
  return ngram::bitmap_hits(host_words_.data(), nwords);
}

Breakdown OpenClNgram::search(const NgramVariant& v, const std::vector<ngram::QueryPlan>& plans, NgramSearchOut& out) {
  if (!host_) throw DeviceError("ngram: search before load_index");
  if (table_.id(v.name) == OpenClNgramVariant::Gpu) {
    return checked("n-gram search (gpu)", [&] {
      Breakdown dev;
      Breakdown host = time_each_query(plans.size(), out, [&](std::size_t q) { out.hits[q] = figure1(plans[q], dev); });
      host.kernel = dev.kernel;
      host.d2h = dev.d2h;
      return host;
    });
  }
  return search_segmented(v, plans, out);
}

Breakdown OpenClNgram::search_segmented(const NgramVariant& v, const std::vector<ngram::QueryPlan>& plans,
                                        NgramSearchOut& out) {
  return checked("n-gram search (gpu-segmented)", [&] {
    ngram::PackedQueries pq = ngram::pack_queries(plans);
    std::size_t nq = plans.size(), row = std::size_t{bins_} * (kBinSize / 32);
    cl::Buffer& lists = scratch_->get("queries.lists", 4 * pq.lists.size());
    cl::Buffer& off = scratch_->get("queries.off", 4 * pq.off.size());
    cl::Buffer& ms = scratch_->get("queries.m", 4 * pq.m.size());
    std::size_t out_rows = v.batch ? nq : 1;
    cl::Buffer& words = scratch_->get("hit_words", 4 * row * out_rows);
    std::vector<std::uint32_t> host(row * out_rows);
    Breakdown b;
    HostTimer total;
    {
      cl::Event e1, e2, e3;
      if (!pq.lists.empty())
        p_.queue().enqueueWriteBuffer(lists, CL_FALSE, 0, 4 * pq.lists.size(), pq.lists.data(), nullptr, &e1);
      p_.queue().enqueueWriteBuffer(off, CL_FALSE, 0, 4 * pq.off.size(), pq.off.data(), nullptr, &e2);
      p_.queue().enqueueWriteBuffer(ms, CL_TRUE, 0, 4 * pq.m.size(), pq.m.data(), nullptr, &e3);
      b.h2d = (pq.lists.empty() ? 0 : event_seconds(e1)) + event_seconds(e2) + event_seconds(e3);
    }
    auto launch = [&](std::uint32_t base, std::size_t count) {
      cl::Event k, r;
      set_args("ngram_segmented arguments", kernel_, article_, map_, list_off_, dir_off_, dir_bin_, dir_start_, lists,
               off, ms, base, bins_, words);
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
