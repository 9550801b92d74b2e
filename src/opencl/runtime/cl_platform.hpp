#pragma once
// The OpenCL platform: one device, one in-order profiling queue, programs built from sources that
// were embedded at build time. Errors carry the failing call and the OpenCL error name.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CL/opencl.hpp>

#include "harness/platform.hpp"
#include "harness/timing.hpp"

namespace hdb::opencl {

class OpenClPlatform : public Platform {
 public:
  std::string name() const override { return "opencl"; }
  void init(const Options& opts) override;
  nlohmann::json context() const override;
  bool has_transfers() const override { return true; }
  double measure_copy_ceiling() override;
  // Every pattern (runtime/cl_patterns.hpp), at the copy's size.
  PatternRates measure_pattern_ceilings() override;
  std::string describe_runtime_error(const std::exception& e) const override;
  // The host's LLC, and on a GPU device its global-memory cache too (a fill of twice its size).
  std::string flush_caches() override;
  std::string cold_pass_note() const override;
  double take_compile_seconds() override;
  // RAPL when the device is the CPU; a GPU has no portable counter through OpenCL.
  EnergyProbe open_energy_meter() override;

  cl::Context& context_ref() { return context_; }
  cl::Device& device() { return device_; }
  cl::CommandQueue& queue() { return queue_; }
  // Largest single buffer the device allows.
  std::uint64_t max_alloc_bytes() const;
  std::size_t max_work_group_size() const;
  // Builds (once per name) the program from embedded source with -cl-std=CL1.2 and `options`;
  // a build failure throws DeviceError with the build log.
  cl::Program& program(const std::string& name, const char* source, const std::string& options = "");

 protected:
  std::uint64_t device_memory_bytes() const override;

 private:
  cl::Platform platform_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::map<std::string, cl::Program> programs_;
  double compile_seconds_ = 0;  // program builds since take_compile_seconds
  cl::Buffer flush_buffer_;     // flush_caches's, on a GPU device; allocated on the first flush
  std::uint64_t flush_bytes_ = 0;
};

// PoCL's kernel cache: POCL_CACHE_DIR when set, else a directory of this user's
// ($XDG_CACHE_HOME/hetdb-bench/pocl, else ~/.cache/hetdb-bench/pocl, else -- when those cannot be
// made -- ${TMPDIR:-/tmp}/hdb-pocl-cache-<uid>, which must belong to this user), never one directory shared by
// every user of a machine. pocl_cache_dir() is the directory in use (the preferred one before
// prepare_pocl_cache()).
std::string pocl_cache_dir();
// Makes the cache (and sets POCL_CACHE_DIR to it when unset) and checks that a file can be made in
// it; returns "" or what is wrong, naming the directory. OpenClPlatform::init reports that instead
// of "no OpenCL device" when the platform is PoCL (or no platform loads).
std::string prepare_pocl_cache();

// The OpenCL implementation a platform is, in one word for results and reports: "pocl", "intel",
// "nvidia", "amd", ... (else the first word of its name). Two of them on one CPU are two series.
std::string implementation_name(const cl::Platform& p);

// Seconds between the event's start and end (CL_PROFILING_COMMAND_START/END).
double event_seconds(const cl::Event& e);
// Seconds from the start of `first` to the end of `last`.
double event_span(const cl::Event& first, const cl::Event& last);
// The one phase timer of the OpenCL backends: the profiling events of a pass in enqueue order,
// each under the phase it belongs to.
class Trace {
 public:
  void add(const std::string& phase, const cl::Event& e) { ev_.emplace_back(phase, e); }
  // Moves the events a primitive (sort, scan) appended to `evs` under `phase`.
  void take(const std::string& phase, std::vector<cl::Event>& evs) {
    for (const cl::Event& e : evs) add(phase, e);
    evs.clear();
  }
  std::size_t size() const { return ev_.size(); }
  bool empty() const { return ev_.empty(); }
  // From the start of event `from` to the end of event `to - 1` (0 when the range is empty).
  double span(std::size_t from, std::size_t to) const {
    return to > from ? event_span(ev_[from].second, ev_[to - 1].second) : 0.0;
  }
  double span() const { return span(0, size()); }
  // Every event's time under its phase.
  void add_phases(Breakdown& b) const {
    for (const auto& [phase, e] : ev_) b.add_phase(phase, event_seconds(e));
  }

 private:
  std::vector<std::pair<std::string, cl::Event>> ev_;
};

// Name of an OpenCL error code, e.g. CL_OUT_OF_RESOURCES.
const char* error_name(cl_int code);
// Rethrows a cl::Error as DeviceError("<what>: <call> failed with <name>").
[[noreturn]] void rethrow(const cl::Error& e, const std::string& what);

// Runs f() and converts OpenCL errors into DeviceError naming `what`; out-of-memory becomes SkipCase.
template <class F>
auto checked(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cl::Error& e) {
    rethrow(e, what);
  }
}

// Sets the kernel's arguments 0, 1, 2, ... to `args` in order; errors name `what`.
template <class... A>
void set_args(const std::string& what, cl::Kernel& k, const A&... args) {
  checked(what, [&] {
    cl_uint index = 0;
    (k.setArg(index++, args), ...);
    return 0;
  });
}

// An ordinary device buffer of `bytes` (at least 1 byte: OpenCL forbids empty buffers).
cl::Buffer device_buffer(cl::Context& ctx, std::uint64_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);

// The one scratch-memory scheme of the OpenCL backends: device buffers a case (or a backend)
// keeps between passes, allocated when it is prepared or in the warm-up pass, never in a timed one.
// scratch_buffer: one buffer of `bytes`; a size beyond the device's largest allocation is a
// SkipCase. Scratch: such buffers kept by name, grown only (get(name, 0) is the buffer as it is).
cl::Buffer scratch_buffer(OpenClPlatform& p, std::uint64_t bytes, const std::string& what = "scratch");
class Scratch {
 public:
  explicit Scratch(OpenClPlatform& p) : p_(p) {}
  cl::Buffer& get(const std::string& name, std::uint64_t bytes);
  // Frees every buffer (between cases).
  void clear() { named_.clear(); }

 private:
  OpenClPlatform& p_;
  std::map<std::string, std::pair<cl::Buffer, std::uint64_t>> named_;
};

// Host memory for transfers. Pageable: plain host memory. Pinned: a CL_MEM_ALLOC_HOST_PTR staging
// buffer kept mapped, whose pointer is the source/target of enqueueWrite/ReadBuffer into ordinary
// device buffers (the vendor-recommended way to get pinned transfers in OpenCL).
class HostStaging {
 public:
  HostStaging(OpenClPlatform& p, std::uint64_t bytes, Transfer mode);
  ~HostStaging();
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  void* data() { return ptr_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  OpenClPlatform& p_;
  std::uint64_t bytes_;
  Transfer mode_;
  void* ptr_ = nullptr;
  cl::Buffer pinned_;
  std::unique_ptr<char[]> pageable_;
};

}  // namespace hdb::opencl
