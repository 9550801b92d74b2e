// The host-execution platform's side of --traffic (harness/platform.hpp): the plain executable
// hands a --traffic run to its instrumented build, bin/traffic/<the same name> (cmake/HdbTargets.cmake),
// which counts (runtime/host/traffic.hpp). Two executables, so that the plain one's kernels make no
// call at every access and its times stay what they were.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/cuda_platform.hpp"
#include "runtime/host/traffic.hpp"

namespace hdb::cuda {
namespace {

std::string instrumented_twin() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  const std::string path(self, static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return path.substr(0, slash + 1) + "traffic/" + path.substr(slash + 1);
}

}  // namespace

std::string CudaPlatform::traffic_problem() const {
  if (host::traffic::instrumented()) return "";
  const std::string twin = instrumented_twin();
  return "this executable's kernels are not instrumented, and its instrumented build (" +
         (twin.empty() ? std::string("bin/traffic/<this name>") : twin) +
         ") is not there to hand the run to: build the target of this name with the suffix -traffic "
         "(configured with -DHDB_CUDA_TRAFFIC=ON, the default where host execution is built)";
}

void CudaPlatform::hand_over_traffic(char** argv) {
  if (host::traffic::instrumented()) return;
  const std::string twin = instrumented_twin();
  if (twin.empty() || access(twin.c_str(), X_OK) != 0) return;  // traffic_problem() tells the user
  std::fflush(nullptr);
  execv(twin.c_str(), argv);
  std::fprintf(stderr, "cannot run the instrumented build %s: %s\n", twin.c_str(), std::strerror(errno));
}

void CudaPlatform::traffic_begin() { host::traffic::begin(host::traffic::h200()); }

nlohmann::json CudaPlatform::traffic_end() { return host::traffic::end(); }

}  // namespace hdb::cuda
