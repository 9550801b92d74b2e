// hdb-tpch-cpu: the kernels composed from the CPU RA primitives (ra-serial, ra-parallel) and by
// the columnar engine (columnar-serial, columnar-parallel).
#include "bench/tpch_ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cpu_platform.hpp"
#include "tpch_backend.hpp"

namespace {
// The thread count is only known after the platform has parsed --threads.
class Columnar : public hdb::cpu::CpuTpch {
 public:
  explicit Columnar(const hdb::cpu::CpuPlatform& p) : CpuTpch(1), p_(p) {}
  std::unique_ptr<hdb::tpch::TpchRun> prepare(const hdb::tpch::Plan& plan, const std::string& variant,
                                              hdb::Transfer t) override {
    set_threads(p_.threads());
    return CpuTpch::prepare(plan, variant, t);
  }

 private:
  const hdb::cpu::CpuPlatform& p_;
};
}  // namespace

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::ra::cpu::CpuRa ra(platform);
  hdb::tpch::RaComposed composed(ra);
  Columnar columnar(platform);
  hdb::tpch::MultiBackend backend({&composed, &columnar});
  return hdb::tpch::tpch_main(argc, argv, platform, backend);
}
