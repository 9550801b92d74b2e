#include "runtime/cl_platform.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness/errors.hpp"
#include "harness/sizes.hpp"
#include "harness/timing.hpp"
#include "runtime/cl_patterns.hpp"

namespace hdb::opencl {

const char* error_name(cl_int c) {
  switch (c) {
#define HDB_CL_CASE(x) \
  case x: return #x;
    HDB_CL_CASE(CL_SUCCESS)
    HDB_CL_CASE(CL_DEVICE_NOT_FOUND)
    HDB_CL_CASE(CL_DEVICE_NOT_AVAILABLE)
    HDB_CL_CASE(CL_COMPILER_NOT_AVAILABLE)
    HDB_CL_CASE(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    HDB_CL_CASE(CL_OUT_OF_RESOURCES)
    HDB_CL_CASE(CL_OUT_OF_HOST_MEMORY)
    HDB_CL_CASE(CL_PROFILING_INFO_NOT_AVAILABLE)
    HDB_CL_CASE(CL_BUILD_PROGRAM_FAILURE)
    HDB_CL_CASE(CL_MAP_FAILURE)
    HDB_CL_CASE(CL_INVALID_VALUE)
    HDB_CL_CASE(CL_INVALID_DEVICE)
    HDB_CL_CASE(CL_INVALID_CONTEXT)
    HDB_CL_CASE(CL_INVALID_COMMAND_QUEUE)
    HDB_CL_CASE(CL_INVALID_MEM_OBJECT)
    HDB_CL_CASE(CL_INVALID_BUILD_OPTIONS)
    HDB_CL_CASE(CL_INVALID_PROGRAM)
    HDB_CL_CASE(CL_INVALID_PROGRAM_EXECUTABLE)
    HDB_CL_CASE(CL_INVALID_KERNEL_NAME)
    HDB_CL_CASE(CL_INVALID_KERNEL)
    HDB_CL_CASE(CL_INVALID_ARG_INDEX)
    HDB_CL_CASE(CL_INVALID_ARG_VALUE)
    HDB_CL_CASE(CL_INVALID_ARG_SIZE)
    HDB_CL_CASE(CL_INVALID_KERNEL_ARGS)
    HDB_CL_CASE(CL_INVALID_WORK_DIMENSION)
    HDB_CL_CASE(CL_INVALID_WORK_GROUP_SIZE)
    HDB_CL_CASE(CL_INVALID_WORK_ITEM_SIZE)
    HDB_CL_CASE(CL_INVALID_GLOBAL_OFFSET)
    HDB_CL_CASE(CL_INVALID_EVENT)
    HDB_CL_CASE(CL_INVALID_OPERATION)
    HDB_CL_CASE(CL_INVALID_BUFFER_SIZE)
    HDB_CL_CASE(CL_INVALID_GLOBAL_WORK_SIZE)
#undef HDB_CL_CASE
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
  }
}

namespace {
// "CL_OUT_OF_RESOURCES (-5)": how every message here names an error code.
std::string code_text(cl_int code) { return std::string(error_name(code)) + " (" + std::to_string(code) + ")"; }
// "<call> failed with <code>" of a cl::Error (the bindings' what() is the call's name).
std::string call_failed(const cl::Error& e) { return std::string(e.what()) + " failed with " + code_text(e.err()); }
}  // namespace

void rethrow(const cl::Error& e, const std::string& what) {
  std::string msg = what + ": " + call_failed(e);
  if (e.err() == CL_MEM_OBJECT_ALLOCATION_FAILURE || e.err() == CL_OUT_OF_RESOURCES ||
      e.err() == CL_OUT_OF_HOST_MEMORY || e.err() == CL_INVALID_BUFFER_SIZE)
    throw SkipCase("out of device memory: " + msg);
  throw DeviceError(msg);
}

namespace {

const char* command_name(cl_command_type t) {
  switch (t) {
    case CL_COMMAND_NDRANGE_KERNEL: return "kernel";
    case CL_COMMAND_READ_BUFFER: return "buffer read";
    case CL_COMMAND_WRITE_BUFFER: return "buffer write";
    case CL_COMMAND_COPY_BUFFER: return "buffer copy";
    case CL_COMMAND_FILL_BUFFER: return "buffer fill";
    case CL_COMMAND_MAP_BUFFER: return "buffer map";
    case CL_COMMAND_UNMAP_MEM_OBJECT: return "unmap";
    case CL_COMMAND_MARKER: return "marker";
    case CL_COMMAND_USER: return "user event";
    default: return "command";
  }
}

// Profiling times exist only for a command that has completed (OpenCL 1.2, clGetEventProfilingInfo):
// an event of an in-order queue whose later command has finished may still read as running on a
// strict implementation (Intel's CPU runtime, NVIDIA's), so every read waits for its event first
// and checks that the command completed rather than ended with an error.
void wait_completed(const cl::Event& e, const char* what) {
  if (e() == nullptr) throw DeviceError(std::string(what) + ": no command was enqueued for this event");
  cl_command_type type = 0;
  clGetEventInfo(e(), CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
  // A user event has no profiling times, and waiting for one that nothing sets would never return.
  if (type == CL_COMMAND_USER) throw DeviceError(std::string(what) + ": a user event has no profiling times");
  cl_int err = clWaitForEvents(1, &e());
  cl_int status = CL_COMPLETE;
  cl_int info = clGetEventInfo(e(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  if (info == CL_SUCCESS && status < 0)
    throw DeviceError(std::string(what) + ": the " + command_name(type) + " ended with " + code_text(status));
  if (err != CL_SUCCESS)
    throw DeviceError(std::string(what) + ": clWaitForEvents on a " + command_name(type) + " failed with " +
                      code_text(err));
}

cl_ulong profile_time(const cl::Event& e, cl_profiling_info which, const char* what) {
  cl_ulong t = 0;
  cl_int err = clGetEventProfilingInfo(e(), which, sizeof t, &t, nullptr);
  if (err != CL_SUCCESS) {
    cl_command_type type = 0;
    clGetEventInfo(e(), CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr);
    throw DeviceError(
        std::string(what) + ": clGetEventProfilingInfo(" +
        (which == CL_PROFILING_COMMAND_START ? "CL_PROFILING_COMMAND_START" : "CL_PROFILING_COMMAND_END") + ") on a " +
        command_name(type) + " failed with " + code_text(err));
  }
  return t;
}

}  // namespace

double event_seconds(const cl::Event& e) {
  constexpr const char* what = "reading a command's profiling times";
  wait_completed(e, what);
  return static_cast<double>(profile_time(e, CL_PROFILING_COMMAND_END, what) -
                             profile_time(e, CL_PROFILING_COMMAND_START, what)) *
         1e-9;
}

double event_span(const cl::Event& first, const cl::Event& last) {
  constexpr const char* what = "reading the profiling times of a span of commands";
  wait_completed(first, what);
  wait_completed(last, what);
  return static_cast<double>(profile_time(last, CL_PROFILING_COMMAND_END, what) -
                             profile_time(first, CL_PROFILING_COMMAND_START, what)) *
         1e-9;
}

namespace {

// The per-user defaults, in order of preference.
std::vector<std::string> default_pocl_caches() {
  std::vector<std::string> v;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') v.push_back(std::string(xdg) + "/hetdb-bench/pocl");
  const char* home = std::getenv("HOME");
  if (home && *home == '/') v.push_back(std::string(home) + "/.cache/hetdb-bench/pocl");
  const char* tmp = std::getenv("TMPDIR");
  v.push_back(std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/hdb-pocl-cache-" + std::to_string(::getuid()));
  return v;
}

// Makes `dir` (mkdir -p, private to this user where it is made here) and checks that a file can be
// made in it: "" or what is wrong. `own`: the directory must belong to this user (the one in $TMPDIR).
std::string make_writable_dir(const std::string& dir, bool own) {
  for (std::size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string part = slash == std::string::npos ? dir : dir.substr(0, slash);
    if (!part.empty() && ::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
      int e = errno;
      struct stat st;
      if (::stat(part.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return ": cannot create '" + part + "': " + std::strerror(e);
    }
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return std::string(": ") + std::strerror(errno);
  if (own && (S_ISLNK(st.st_mode) || st.st_uid != ::getuid())) return " belongs to another user";
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return " is not a directory";
  std::string probe = dir + "/.hdb-probe-" + std::to_string(::getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return std::string(" is not writable: ") + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

}  // namespace

std::string pocl_cache_dir() {
  const char* env = std::getenv("POCL_CACHE_DIR");
  if (env && *env) return env;
  return default_pocl_caches().front();
}

std::string prepare_pocl_cache() {
  const char* env = std::getenv("POCL_CACHE_DIR");
  if (env && *env) {
    std::string problem = make_writable_dir(env, false);
    if (problem.empty()) return "";
    return "POCL_CACHE_DIR '" + std::string(env) + "'" + problem +
           "; PoCL compiles its kernels there: set POCL_CACHE_DIR to a writable directory";
  }
  // The first per-user default that works (a home that cannot be written falls back to /tmp).
  std::vector<std::string> dirs = default_pocl_caches();
  std::string first_problem;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    std::string problem = make_writable_dir(dirs[i], /*own=*/i + 1 == dirs.size());
    if (problem.empty()) {
      ::setenv("POCL_CACHE_DIR", dirs[i].c_str(), 0);
      return "";
    }
    if (i == 0) first_problem = problem;
  }
  return "the PoCL kernel cache '" + dirs.front() + "'" + first_problem +
         "; PoCL compiles its kernels there: set POCL_CACHE_DIR (or XDG_CACHE_HOME) to a writable directory";
}

namespace {
bool is_pocl(const cl::Platform& p) {
  try {
    std::string name = p.getInfo<CL_PLATFORM_NAME>(), vendor = p.getInfo<CL_PLATFORM_VENDOR>();
    return name.find("Portable Computing Language") != std::string::npos || name.find("PoCL") != std::string::npos ||
           vendor.find("pocl") != std::string::npos;
  } catch (const cl::Error&) {
    return false;
  }
}
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string platform_name(const cl::Platform& p) {
  try {
    return p.getInfo<CL_PLATFORM_NAME>();
  } catch (const cl::Error&) {
    return "?";
  }
}

bool name_matches(const cl::Platform& p, const std::string& word) {
  if (word == "pocl" && is_pocl(p)) return true;
  try {
    return lower(p.getInfo<CL_PLATFORM_NAME>()).find(word) != std::string::npos ||
           lower(p.getInfo<CL_PLATFORM_VENDOR>()).find(word) != std::string::npos;
  } catch (const cl::Error&) {
    return false;
  }
}

// --platform: an index, or a word of one platform's name or vendor. A word that no platform has
// is NoDevice (that implementation is not installed here, exit 77); an index out of range or a word
// that several platforms share selects nothing definite: a usage error.
std::size_t select_platform(const std::vector<cl::Platform>& platforms, const std::string& selector) {
  std::string found;
  for (std::size_t i = 0; i < platforms.size(); ++i)
    found += (i ? ", " : "") + std::to_string(i) + " '" + platform_name(platforms[i]) + "'";
  if (!selector.empty() &&
      std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); })) {
    std::size_t index = selector.size() > 9 ? platforms.size() : std::stoul(selector);
    if (index >= platforms.size())
      throw UsageError("--platform " + selector + ": only " + std::to_string(platforms.size()) +
                       " OpenCL platform(s) (allowed: 0.." + std::to_string(platforms.size() - 1) +
                       "; found: " + found + ")");
    return index;
  }
  const std::string word = lower(selector);
  std::vector<std::size_t> hits;
  for (std::size_t i = 0; i < platforms.size(); ++i)
    if (name_matches(platforms[i], word)) hits.push_back(i);
  if (hits.empty()) throw NoDevice("no OpenCL platform matches --platform '" + selector + "' (found: " + found + ")");
  if (hits.size() > 1)
    throw UsageError("--platform '" + selector + "' matches " + std::to_string(hits.size()) +
                     " OpenCL platforms (found: " + found + "): give its index");
  return hits.front();
}

}  // namespace

std::string implementation_name(const cl::Platform& p) {
  if (is_pocl(p)) return "pocl";
  std::string name = lower(platform_name(p));
  for (const char* known : {"intel", "nvidia", "amd", "rusticl", "apple", "arm", "qualcomm", "clover"})
    if (name.find(known) != std::string::npos) return known;
  std::string word;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      word += c;
    else if (!word.empty())
      break;
  }
  return word.empty() ? "unknown" : word;
}

void OpenClPlatform::init(const Options& opts) {
  // PoCL compiles kernels into a cache that must be writable; when it is not, that is what is
  // reported (naming the directory), not "no OpenCL device".
  const std::string cache_problem = prepare_pocl_cache();
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    if (!cache_problem.empty()) throw DeviceError(cache_problem);
    throw NoDevice(std::string("no OpenCL device (clGetPlatformIDs: ") + error_name(e.err()) + ")");
  }
  if (platforms.empty()) {
    if (!cache_problem.empty()) throw DeviceError(cache_problem);
    throw NoDevice("no OpenCL device (no platform installed)");
  }
  platform_ = platforms[select_platform(platforms, opts.platform)];
  if (!cache_problem.empty() && is_pocl(platform_)) throw DeviceError(cache_problem);
  std::vector<cl::Device> devices;
  try {
    platform_.getDevices(CL_DEVICE_TYPE_ALL, &devices);
  } catch (const cl::Error& e) {
    throw NoDevice(std::string("no OpenCL device (clGetDeviceIDs: ") + error_name(e.err()) + ")");
  }
  if (devices.empty()) throw NoDevice("no OpenCL device on platform '" + platform_name(platform_) + "'");
  if (opts.device >= static_cast<int>(devices.size()))
    throw UsageError("--device " + std::to_string(opts.device) + ": platform has " + std::to_string(devices.size()) +
                     " device(s) (allowed: 0.." + std::to_string(devices.size() - 1) + ")");
  // Under mpirun the ranks of a node take consecutive devices, wrapping around.
  device_ = devices[static_cast<std::size_t>(opts.device + opts.local_rank) % devices.size()];
  checked("creating the OpenCL context and queue", [&] {
    context_ = cl::Context(device_);
    queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
    return 0;
  });
}

nlohmann::json OpenClPlatform::context() const {
  auto type = device_.getInfo<CL_DEVICE_TYPE>();
  nlohmann::json j = {{"name", device_.getInfo<CL_DEVICE_NAME>()},
                      {"kind", "opencl"},
                      {"platform", platform_.getInfo<CL_PLATFORM_NAME>()},
                      {"implementation", implementation_name(platform_)},
                      {"platform_vendor", platform_.getInfo<CL_PLATFORM_VENDOR>()},
                      {"platform_version", platform_.getInfo<CL_PLATFORM_VERSION>()},
                      {"vendor", device_.getInfo<CL_DEVICE_VENDOR>()},
                      {"device_version", device_.getInfo<CL_DEVICE_VERSION>()},
                      {"driver_version", device_.getInfo<CL_DRIVER_VERSION>()},
                      {"type", (type & CL_DEVICE_TYPE_GPU)   ? "gpu"
                               : (type & CL_DEVICE_TYPE_CPU) ? "cpu"
                                                             : "other"},
                      {"compute_units", device_.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>()},
                      {"global_memory_bytes", device_.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>()},
                      {"max_alloc_bytes", device_.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>()},
                      {"local_memory_bytes", device_.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>()},
                      {"max_work_group_size", device_.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>()},
                      {"host_unified_memory", (type & CL_DEVICE_TYPE_CPU) != 0},
                      {"global_mem_cache_bytes", device_.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>()}};
  // A GPU's global-memory cache is its L2: the size the driver's sweep must go beyond (as CUDA's).
  if (type & CL_DEVICE_TYPE_GPU) j["l2_cache_bytes"] = device_.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  return j;
}

std::string OpenClPlatform::describe_runtime_error(const std::exception& e) const {
  const auto* err = dynamic_cast<const cl::Error*>(&e);
  if (!err) return "";
  return "OpenCL call " + call_failed(*err);
}

std::uint64_t OpenClPlatform::device_memory_bytes() const { return device_.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>(); }
std::uint64_t OpenClPlatform::max_alloc_bytes() const { return device_.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>(); }
std::size_t OpenClPlatform::max_work_group_size() const { return device_.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>(); }

PatternRates OpenClPlatform::measure_pattern_ceilings() {
  return measure_patterns(*this, std::min<std::uint64_t>({256ull << 20, max_alloc_bytes(), device_memory_bytes() / 8}),
                          3);
}

double OpenClPlatform::measure_copy_ceiling() {
  std::uint64_t bytes = std::min<std::uint64_t>({256ull << 20, max_alloc_bytes(), device_memory_bytes() / 8});
  return checked("measuring the device copy ceiling", [&] {
    cl::Buffer a = device_buffer(context_, bytes), b = device_buffer(context_, bytes);
    queue_.enqueueFillBuffer(a, cl_uint{0x5a5a5a5a}, 0, bytes);
    queue_.enqueueFillBuffer(b, cl_uint{0}, 0, bytes);
    queue_.finish();
    double best = 1e30;
    for (int i = 0; i < 4; ++i) {
      cl::Event e;
      queue_.enqueueCopyBuffer(a, b, 0, 0, bytes, nullptr, &e);
      e.wait();
      best = std::min(best, event_seconds(e));
    }
    return 2.0 * static_cast<double>(bytes) / best / 1e9;
  });
}

cl::Program& OpenClPlatform::program(const std::string& name, const char* source, const std::string& options) {
  std::string key = name + "|" + options;
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  cl::Program prog(context_, std::string(source));
  std::string opts = "-cl-std=CL1.2 " + options;
  HostTimer build_time;
  try {
    prog.build({device_}, opts.c_str());
    compile_seconds_ += build_time.seconds();
  } catch (const cl::Error& e) {
    std::string log;
    try {
      log = prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_);
    } catch (const cl::Error&) {
    }
    throw DeviceError("building OpenCL program '" + name + "' failed with " + error_name(e.err()) + ":\n" + log);
  }
  return programs_.emplace(key, std::move(prog)).first->second;
}

double OpenClPlatform::take_compile_seconds() {
  double s = compile_seconds_;
  compile_seconds_ = 0;
  return s;
}

std::string OpenClPlatform::flush_caches() {
  std::string host = flush_host_cache();
  if (!(device_.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU)) return host + " (the device is the CPU)";
  std::uint64_t cache = device_.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  if (cache == 0) return host + "; the device reports no global-memory cache";
  if (flush_bytes_ == 0) {
    flush_bytes_ = std::min<std::uint64_t>(2 * cache, max_alloc_bytes());
    flush_buffer_ = checked("allocating the cache-flush buffer", [&] { return device_buffer(context_, flush_bytes_); });
  }
  static cl_uint round = 0;
  ++round;
  queue_.enqueueFillBuffer(flush_buffer_, round, 0, flush_bytes_);
  queue_.finish();
  return host + "; device global-memory cache " + format_size(cache) + ": filled a " + format_size(flush_bytes_) +
         " buffer";
}

EnergyProbe OpenClPlatform::open_energy_meter() {
  if (device_.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) return open_rapl();
  EnergyProbe p;
  p.reason = "OpenCL offers no energy counter for a GPU device (the CUDA backend reads NVML's)";
  return p;
}

std::string OpenClPlatform::cold_pass_note() const {
  std::string note = Platform::cold_pass_note() +
                     "; on OpenCL also the first launch of each kernel (PoCL compiles a kernel's work-group "
                     "function for each local size at its first launch)";
  return note +
         "; the program builds (clBuildProgram) the case paid, in its set-up or in this pass, are "
         "protocol.compile_s";
}

cl::Buffer device_buffer(cl::Context& ctx, std::uint64_t bytes, cl_mem_flags flags) {
  return cl::Buffer(ctx, flags, std::max<std::uint64_t>(bytes, 1));
}

cl::Buffer scratch_buffer(OpenClPlatform& p, std::uint64_t bytes, const std::string& what) {
  if (bytes > p.max_alloc_bytes())
    throw SkipCase("a " + what + " buffer of " + std::to_string(bytes >> 20) +
                   " MiB exceeds the device's largest allocation");
  return checked("allocating " + what, [&] { return device_buffer(p.context_ref(), bytes); });
}

cl::Buffer& Scratch::get(const std::string& name, std::uint64_t bytes) {
  auto& slot = named_[name];
  if (slot.second < bytes || slot.second == 0) {
    slot.first = scratch_buffer(p_, bytes, "scratch " + name);
    slot.second = std::max<std::uint64_t>(bytes, 1);
  }
  return slot.first;
}

HostStaging::HostStaging(OpenClPlatform& p, std::uint64_t bytes, Transfer mode) : p_(p), bytes_(bytes), mode_(mode) {
  std::uint64_t n = std::max<std::uint64_t>(bytes, 1);
  if (mode == Transfer::Pinned) {
    checked("allocating pinned staging memory", [&] {
      pinned_ = cl::Buffer(p.context_ref(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, n);
      ptr_ = p.queue().enqueueMapBuffer(pinned_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n);
      return 0;
    });
  } else {
    pageable_.reset(new char[n]);
    ptr_ = pageable_.get();
  }
}

HostStaging::~HostStaging() {
  if (mode_ == Transfer::Pinned && ptr_) {
    try {
      p_.queue().enqueueUnmapMemObject(pinned_, ptr_);
      p_.queue().finish();
    } catch (const cl::Error&) {
    }
  }
}

}  // namespace hdb::opencl
