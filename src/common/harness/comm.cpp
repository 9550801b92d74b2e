#include "harness/comm.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#ifdef HDB_HAVE_MPI
#include <mpi.h>
#endif

namespace hdb {

#ifdef HDB_HAVE_MPI
struct Comm::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

namespace {
// A tuple of `width` words as one MPI element, so counts are tuples, not words.
class TupleType {
 public:
  explicit TupleType(int width) {
    MPI_Type_contiguous(width, MPI_UINT32_T, &type_);
    MPI_Type_commit(&type_);
  }
  ~TupleType() { MPI_Type_free(&type_); }
  TupleType(const TupleType&) = delete;
  TupleType& operator=(const TupleType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

int to_int(std::uint64_t x, const char* what) {
  if (x > Comm::kMaxTuplesPerPeer)
    throw std::length_error(std::string(what) + ": more tuples than one MPI call can move");
  return static_cast<int>(x);
}

// Counts and displacements (in tuples) as MPI wants them.
void int_layout(const std::vector<std::uint64_t>& counts, std::vector<int>& c, std::vector<int>& d, const char* what) {
  c.resize(counts.size());
  d.resize(counts.size());
  std::uint64_t off = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    c[i] = to_int(counts[i], what);
    d[i] = to_int(off, what);
    off += counts[i];
  }
  to_int(off, what);
}
}  // namespace
#endif

Comm Comm::single() { return Comm(); }

bool Comm::init(int* argc, char*** argv) {
#ifdef HDB_HAVE_MPI
  bool launched = false;
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) launched = true;
  if (!launched) return false;
  MPI_Init(argc, argv);
  return true;
#else
  (void)argc;
  (void)argv;
  return false;
#endif
}

void Comm::finalize() {
#ifdef HDB_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
#endif
}

Comm Comm::world() {
  Comm c;
#ifdef HDB_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    // A private duplicate keeps TP traffic apart from the harness's own EP gather.
    auto impl = std::make_shared<Impl>();
    MPI_Comm_dup(MPI_COMM_WORLD, &impl->comm);
    MPI_Comm_rank(impl->comm, &c.rank_);
    MPI_Comm_size(impl->comm, &c.size_);
    c.impl_ = std::move(impl);
  }
#endif
  return c;
}

Comm Comm::node() const {
  Comm c;
#ifdef HDB_HAVE_MPI
  if (impl_) {
    auto impl = std::make_shared<Impl>();
    MPI_Comm_split_type(impl_->comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &impl->comm);
    MPI_Comm_rank(impl->comm, &c.rank_);
    MPI_Comm_size(impl->comm, &c.size_);
    c.impl_ = std::move(impl);
  }
#endif
  return c;
}

bool Comm::all(bool flag) const {
#ifdef HDB_HAVE_MPI
  if (impl_) {
    int in = flag ? 1 : 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, impl_->comm);
    return out != 0;
  }
#endif
  return flag;
}

void Comm::barrier() const {
#ifdef HDB_HAVE_MPI
  if (impl_) MPI_Barrier(impl_->comm);
#endif
}

void Comm::max_inplace(std::vector<double>& v) const {
#ifdef HDB_HAVE_MPI
  if (impl_ && !v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, impl_->comm);
#else
  (void)v;
#endif
}

std::uint64_t Comm::max(std::uint64_t x) const {
#ifdef HDB_HAVE_MPI
  if (impl_) MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_UINT64_T, MPI_MAX, impl_->comm);
#endif
  return x;
}

std::uint64_t Comm::sum(std::uint64_t x) const {
#ifdef HDB_HAVE_MPI
  if (impl_) MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_UINT64_T, MPI_SUM, impl_->comm);
#endif
  return x;
}

std::vector<std::uint64_t> Comm::all_gather(std::uint64_t x) const {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(size_), x);
#ifdef HDB_HAVE_MPI
  if (impl_) MPI_Allgather(&x, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, impl_->comm);
#endif
  return all;
}

std::string Comm::broadcast(const std::string& text, int root) const {
#ifdef HDB_HAVE_MPI
  if (impl_) {
    std::uint64_t len = text.size();
    MPI_Bcast(&len, 1, MPI_UINT64_T, root, impl_->comm);
    std::string out = rank_ == root ? text : std::string(len, '\0');
    if (len) MPI_Bcast(out.data(), to_int(len, "broadcast"), MPI_CHAR, root, impl_->comm);
    return out;
  }
#else
  (void)root;
#endif
  return text;
}

std::vector<std::string> Comm::gather(const std::string& text, int root) const {
  if (!impl_) return {text};
  std::vector<std::string> out;
#ifdef HDB_HAVE_MPI
  std::vector<std::uint64_t> lens = all_gather(text.size());
  std::vector<int> c, d;
  int_layout(lens, c, d, "gather");
  std::string all;
  if (rank_ == root) all.resize(static_cast<std::size_t>(d.back()) + static_cast<std::size_t>(c.back()));
  MPI_Gatherv(text.data(), c[static_cast<std::size_t>(rank_)], MPI_CHAR, all.data(), c.data(), d.data(), MPI_CHAR, root,
              impl_->comm);
  for (int r = 0; rank_ == root && r < size_; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(d[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(c[static_cast<std::size_t>(r)])));
#else
  (void)root;
#endif
  return out;
}

Comm::Agreement Comm::first_failure(bool failed, const std::string& message) const {
  Agreement a;
  if (!impl_) {
    if (failed) a = {0, message};
    return a;
  }
#ifdef HDB_HAVE_MPI
  int mine = failed ? rank_ : size_, first = size_;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, impl_->comm);
  if (first < size_) a = {first, broadcast(message, first)};
#endif
  return a;
}

Comm::Agreement Comm::first_error(int code, const std::string& message) const {
  Agreement a = first_failure(code != 0, std::to_string(code) + " " + message);
  if (!a.any()) return a;
  std::size_t space = a.message.find(' ');
  a.code = std::atoi(a.message.substr(0, space).c_str());
  a.message = space == std::string::npos ? std::string() : a.message.substr(space + 1);
  return a;
}

void Comm::abort(int code) {
#ifdef HDB_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::exit(code);
}

std::vector<std::uint64_t> Comm::exchange_counts(const std::vector<std::uint64_t>& send_counts) const {
  if (send_counts.size() != static_cast<std::size_t>(size_))
    throw std::invalid_argument("exchange_counts: one count per rank expected");
  std::vector<std::uint64_t> recv(send_counts);
#ifdef HDB_HAVE_MPI
  if (impl_) MPI_Alltoall(send_counts.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, impl_->comm);
#endif
  return recv;
}

void Comm::alltoallv(const std::uint32_t* send, const std::vector<std::uint64_t>& send_counts, std::uint32_t* recv,
                     const std::vector<std::uint64_t>& recv_counts, int width) const {
  if (send_counts.size() != static_cast<std::size_t>(size_) || recv_counts.size() != static_cast<std::size_t>(size_))
    throw std::invalid_argument("alltoallv: one count per rank expected");
  if (!impl_) {
    if (send_counts[0] != recv_counts[0]) throw std::invalid_argument("alltoallv: send and receive counts differ");
    if (send_counts[0]) std::memcpy(recv, send, send_counts[0] * static_cast<std::uint64_t>(width) * 4);
    return;
  }
#ifdef HDB_HAVE_MPI
  std::vector<int> sc, sd, rc, rd;
  int_layout(send_counts, sc, sd, "alltoallv send");
  int_layout(recv_counts, rc, rd, "alltoallv receive");
  TupleType t(width);
  MPI_Alltoallv(send, sc.data(), sd.data(), t.get(), recv, rc.data(), rd.data(), t.get(), impl_->comm);
#endif
}

std::vector<std::uint32_t> Comm::gather_tuples(const std::uint32_t* data, std::uint64_t rows, int width,
                                               int root) const {
  const std::uint64_t w = static_cast<std::uint64_t>(width);
  if (!impl_) return std::vector<std::uint32_t>(data, data + rows * w);
  std::vector<std::uint32_t> out;
#ifdef HDB_HAVE_MPI
  std::vector<std::uint64_t> rows_of = all_gather(rows);
  std::vector<int> c, d;
  int_layout(rows_of, c, d, "gather");
  std::uint64_t total = 0;
  for (std::uint64_t r : rows_of) total += r;
  if (rank_ == root) out.resize(total * w);
  TupleType t(width);
  MPI_Gatherv(data, c[static_cast<std::size_t>(rank_)], t.get(), out.data(), c.data(), d.data(), t.get(), root,
              impl_->comm);
#else
  (void)data;
  (void)rows;
  (void)root;
#endif
  return out;
}

}  // namespace hdb
