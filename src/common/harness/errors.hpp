#pragma once
// Error kinds the harness maps to exit codes and result statuses.
#include <stdexcept>
#include <string>

namespace hdb {

// Bad command-line value or input file: exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The backend has no usable device: "skipped: ..." and exit code 77 (CTest's skip code).
struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One case cannot run (too large for the device, bounded product size, ...): recorded as skipped
// with the reason, and the run goes on.
struct SkipCase : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Results could not be written (disk full, a read-only directory, ...): exit code 1. The message
// names the file; the file's previous contents are kept.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A device API call failed; the message names the call.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The device's context is lost (a sticky CUDA error: an illegal address, a kernel fault, ...): every
// later call on it fails with the same error. Session::run records the running case as failed and
// rethrows, so the run stops with exit code 1 and the results taken so far are kept (marked
// "stopped by an error"), instead of every later case failing with the same error.
struct DeviceLost : DeviceError {
  using DeviceError::DeviceError;
};

enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitNoDevice = 77 };

}  // namespace hdb
