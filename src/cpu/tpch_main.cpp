#include "runtime/cpu_platform.hpp"
#include "tpch_backend.hpp"

namespace {
// The thread count is only known after the platform has parsed --threads.
class Backend : public hdb::cpu::CpuTpch {
 public:
  explicit Backend(const hdb::cpu::CpuPlatform& p) : CpuTpch(1), p_(p) {}
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
  Backend backend(platform);
  return hdb::tpch::tpch_main(argc, argv, platform, backend);
}
