#include "bench/dist_collective.hpp"

#include <new>
#include <stdexcept>

#include "harness/errors.hpp"

namespace hdb::dist {

void collectively(const Comm& comm, const std::function<void()>& local) {
  // The reason travels with a one-letter kind: 'S' skip, 'E' error.
  std::string failure;
  bool lost = false;
  try {
    local();
  } catch (const SkipCase& e) {
    failure = std::string("S") + e.what();
  } catch (const std::bad_alloc&) {
    failure = "Sout of host memory";
  } catch (const UsageError&) {
    throw;  // option errors are found before any case runs, identically on every rank
  } catch (const DeviceLost& e) {
    failure = std::string("E") + e.what();
    lost = true;
  } catch (const std::exception& e) {
    failure = std::string("E") + e.what();
  }
  Comm::Agreement a = comm.first_failure(!failure.empty(), failure);
  // This rank's device is gone: after the agreement (the other ranks fail the case), its run stops.
  if (lost) throw DeviceLost(failure.substr(1));
  if (!a.any()) return;
  std::string reason = a.message.substr(1);
  if (comm.size() > 1) reason = "rank " + std::to_string(a.rank) + ": " + reason;
  if (a.message[0] == 'S') throw SkipCase(reason);
  throw std::runtime_error(reason);
}

Breakdown collective_pass(const Comm& comm, const std::function<Breakdown()>& local, const std::vector<Phase>& phases) {
  comm.barrier();
  Breakdown mine;
  std::string error;
  bool lost = false;
  try {
    mine = local();
  } catch (const DeviceLost& e) {
    error = e.what();
    lost = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  Comm::Agreement a = comm.first_failure(!error.empty(), error);
  if (lost) throw DeviceLost(error);  // as in collectively()
  if (a.any())
    throw std::runtime_error(comm.size() > 1 ? "rank " + std::to_string(a.rank) + ": " + a.message : a.message);
  std::vector<double> v{mine.h2d, mine.kernel, mine.d2h, mine.total};
  for (const Phase& ph : phases) {
    double t = 0;
    for (const Phase& p : mine.phases)
      if (p.name == ph.name) t += p.seconds;
    v.push_back(t);
  }
  comm.max_inplace(v);
  Breakdown b;
  b.h2d = v[0];
  b.kernel = v[1];
  b.d2h = v[2];
  b.total = v[3];
  for (std::size_t i = 0; i < phases.size(); ++i) b.add_phase(phases[i].name, v[4 + i], phases[i].kind);
  return b;
}

Verification broadcast_verdict(const Comm& comm, const Verification& on_root) {
  std::string text = comm.broadcast(std::string(on_root.ok ? "1" : "0") + on_root.detail, 0);
  Verification v = text[0] == '1' ? Verification::pass(text.substr(1)) : Verification::fail(text.substr(1));
  v.extra = nlohmann::json::parse(comm.broadcast(on_root.extra.dump(), 0));
  return v;
}

void add_rank_params(Params& p, const Comm& comm, bool weak) {
  p.emplace_back("ranks", comm.size());
  p.emplace_back("scaling", weak ? "weak" : "strong");
}

}  // namespace hdb::dist
