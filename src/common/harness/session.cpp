#include "harness/session.hpp"

#include <algorithm>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "harness/console.hpp"
#include "harness/errors.hpp"
#include "harness/sizes.hpp"
#include "harness/stats.hpp"

namespace hdb {

Session::Session(const Options& opts, Platform* platform, ResultDb& db, Console& console)
    : opts_(opts), platform_(platform), db_(db), console_(console), filter_(opts.only) {}

std::vector<Transfer> Session::transfers() const {
  if (platform_ && platform_->has_transfers()) return opts_.transfers;
  return {Transfer::None};
}

bool Session::selected(const std::string& test, const std::string& variant) const {
  return filter_.may_select(test, variant);
}

bool Session::take(const CaseKey& key) {
  const std::string tv = key.test + "/" + key.variant;
  bool known = false;
  for (const auto& o : offered_) known |= o == tv;
  if (!known) offered_.push_back(tv);
  if (!filter_.selects(key)) return false;
  ++selected_count_;
  return true;
}

std::uint64_t derive_seed(std::uint64_t run_seed, const std::string& salt, std::uint64_t size) {
  // FNV-1a over the salt, mixed with the run seed and the size.
  std::uint64_t h = 1469598103934665603ull ^ run_seed;
  for (unsigned char c : salt) h = (h ^ c) * 1099511628211ull;
  h ^= size + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::uint64_t Session::seed(const std::string& salt, std::uint64_t size) const {
  return derive_seed(opts_.seed, salt, size);
}

void Session::skip(const CaseKey& key, const std::string& reason) {
  if (!take(key)) return;
  if (opts_.list) {
    if (print_list_) std::printf("%s (skipped: %s)\n", key.id().c_str(), reason.c_str());
    return;
  }
  Record r;
  r.key = key;
  r.status = Status::Skipped;
  r.reason = reason;
  record(std::move(r));
}

Prepared prepared_from(const std::shared_ptr<CaseRun>& run) {
  Prepared p;
  p.pass = [run] { return run->pass(); };
  p.ran = [run] { return run->ran(); };
  p.transfer_bytes = run->transfer_bytes();
  return p;
}

void Session::run(const CaseKey& key, const CaseSetup& setup) {
  if (!take(key)) return;
  if (opts_.list) {
    if (print_list_) std::printf("%s\n", key.id().c_str());
    return;
  }
  // The ceiling again when a while has passed: it is compared with this case and the next ones.
  db_.ceiling().refresh(*platform_);
  Record r;
  r.key = key;
  // Where in the case an error came from, for errors that do not say it themselves.
  std::string stage = "the case's memory plan";
  try {
    platform_->take_compile_seconds();  // what earlier cases and the set-up of the run compiled
    MemoryPlan plan = MemoryPlan::for_platform(*platform_);
    if (setup.plan) setup.plan(plan);
    r.memory_plan = plan.to_json();
    plan.require(*platform_);
    stage = "the case's preparation";
    Prepared p = setup.prepare();
    r.elements = p.elements;
    r.input_bytes = p.input_bytes.value_or(key.size_bytes);
    if (p.input_bytes && *p.input_bytes == 0 && p.elements == 0)
      throw SkipCase("its input holds nothing to process (0 elements, 0 bytes" +
                     (key.size_bytes ? " of the requested " + format_size(key.size_bytes) : std::string()) +
                     "): no time or throughput to measure");
    r.min_bytes_moved = p.min_bytes_moved;
    if (p.access.declared() && p.access.read + p.access.written == p.min_bytes_moved) r.access = p.access;
    r.transfer_bytes = p.transfer_bytes;
    r.extra = p.extra;
    take_passes(p, r, stage);
    if (p.ran) r.ran = p.ran().to_json();
    if (opts_.verify) {
      stage = "verification";
      r.checked = true;
      Verification v = p.verify();
      r.verify_detail = v.detail;
      r.extra.update(v.extra);
      if (!v.ok) {
        // A failed verification is a failed case, never a number in a report.
        r.status = Status::Failed;
        r.reason = "verification failed: " + v.detail;
        r.trials.clear();
      } else {
        r.verified = true;
        if (p.figures) r.extra.update(p.figures(r.trials));
      }
    } else {
      r.verify_detail = "not verified (--no-verify)";
    }
    if (opts_.traffic && r.status == Status::Ok) {
      stage = "the traffic pass";
      take_traffic(p, r);
    }
  } catch (const SkipCase& e) {
    r.status = Status::Skipped;
    r.reason = e.what();
    r.trials.clear();
  } catch (const std::bad_alloc&) {
    r.status = Status::Skipped;
    r.reason = "out of host memory";
    r.trials.clear();
  } catch (const UsageError&) {
    throw;
  } catch (const DeviceLost& e) {
    // Every later case would fail with the same error: this one is recorded as failed (and the
    // files written with it), then the run stops, naming the case (exit code 1, the results taken
    // so far kept and marked "stopped by an error").
    r.status = Status::Failed;
    r.reason = e.what();
    r.trials.clear();
    record(std::move(r));
    throw DeviceLost("case " + key.id() + ": " + e.what());
  } catch (const std::exception& e) {
    r.status = Status::Failed;
    std::string runtime = platform_ ? platform_->describe_runtime_error(e) : "";
    r.reason = runtime.empty() ? e.what() : runtime + " during " + stage;
    r.trials.clear();
  }
  record(std::move(r));
}

// --traffic: one more pass, counted (Platform::traffic_begin), then verified again, so that the
// profile is of a pass that computed the right answer. The derived figures need the case's
// declared bytes: traffic_ratio (the modelled DRAM bytes over the declared minimum) and
// launches_per_op (an op is one pass of the case).
void Session::take_traffic(const Prepared& p, Record& r) {
  platform_->traffic_begin();
  nlohmann::json t;
  try {
    p.pass();
  } catch (...) {
    platform_->traffic_end();
    throw;
  }
  t = platform_->traffic_end();
  if (opts_.verify) {
    Verification v = p.verify();
    if (!v.ok) throw std::runtime_error("the traffic pass's output differs from the reference: " + v.detail);
  }
  const double dram = t.value("dram_bytes_model", 0.0);
  t["traffic_ratio"] =
      r.min_bytes_moved ? nlohmann::json(dram / static_cast<double>(r.min_bytes_moved)) : nlohmann::json(nullptr);
  t["launches_per_op"] = t.value("launches", 0);
  r.traffic = std::move(t);
}

// Reads the platform's throttle reasons after a pass into the record; true when there were any.
bool Session::note_throttling(Record& r) {
  std::vector<std::string> now = platform_->throttling();
  if (now.empty()) return false;
  ++r.throttled_passes;
  for (auto& t : now)
    if (std::find(r.throttle_reasons.begin(), r.throttle_reasons.end(), t) == r.throttle_reasons.end())
      r.throttle_reasons.push_back(t);
  r.throttled_dropped = opts_.discard_on_throttle;
  return true;
}

// The cold/warm/hot protocol (docs/methodology.md): the cold pass, kept; the untimed warm-up passes;
// the timed passes until the stopping rule says stop, each after a cache flush under --flush-caches.
// The energy counter is read around the timed passes only (not around the flushes).
void Session::take_passes(const Prepared& p, Record& r, std::string& stage) {
  if (!energy_opened_) {
    energy_ = platform_->open_energy_meter();
    energy_opened_ = true;
  }
  auto flush = [&] {
    if (opts_.flush_caches) r.flush = platform_->flush_caches();
  };
  r.passes_taken = true;
  r.cold_note = platform_->cold_pass_note();
  if (opts_.warmup > 0) {
    stage = "the cold pass";
    flush();
    r.cold = p.pass();
    stage = "a warm-up pass";
    r.warmup_passes = opts_.warmup - 1;
    for (int i = 1; i < opts_.warmup; ++i) p.pass();
  } else {
    r.cold_note = "none taken (--warmup 0): the first timed pass is the case's first";
  }
  r.compile_s = platform_->take_compile_seconds();
  stage = "a timed pass";
  StoppingRule rule{opts_.passes, opts_.max_passes, opts_.max_time, opts_.target_noise};
  EnergySpan span(energy_.meter.get());
  const double passes_began = db_.ceiling().now_s();
  std::vector<double> measured;
  double spent = 0;
  for (;;) {
    if (opts_.flush_caches) {
      span.pause();
      flush();
      span.resume();
    } else {
      span.start();
    }
    Breakdown b = p.pass();
    spent += b.total > 0 ? b.total : b.kernel;
    if (note_throttling(r) && opts_.discard_on_throttle) {
      // The pass still counts against the time budget: a device that throttles throughout ends the case.
      if (r.throttled_passes >= opts_.max_passes || spent > opts_.max_time) break;
      continue;
    }
    measured.push_back(b.measured());
    r.trials.push_back(std::move(b));
    if (rule.done(measured, spent)) break;
  }
  if (r.trials.empty()) {
    std::string reasons;
    for (const auto& t : r.throttle_reasons) reasons += (reasons.empty() ? "" : ", ") + t;
    span.stop();
    throw SkipCase("every timed pass was taken while the device throttled (" + reasons +
                   ") and --discard-on-throttle dropped them all");
  }
  span.stop();
  r.timed_at_s = (passes_began + db_.ceiling().now_s()) / 2;
  // Passes dropped for throttling drew energy inside the span too.
  int passes = static_cast<int>(r.trials.size()) + (r.throttled_dropped ? r.throttled_passes : 0);
  r.energy = span.to_json(passes, energy_.reason);
  r.device_state = platform_->device_state();
}

void Session::record(Record r) {
  std::lock_guard<std::timed_mutex> lock(output_mutex());
  const Record& added = db_.add(std::move(r));
  console_.row(added, db_.ceiling_for(added));
  flush();
}

// The files after every case, marked incomplete ("running") until the run ends. A write error
// (OutputError, naming the file) stops the run, unless on_write_error makes it a warning (MPI rank
// files); the file keeps its previous contents.
void Session::flush() {
  try {
    if (!opts_.json_path.empty()) db_.write_json(opts_.json_path, /*progress=*/true);
    if (!opts_.csv_path.empty()) db_.write_csv(opts_.csv_path, /*progress=*/true);
  } catch (const OutputError& e) {
    if (!opts_.on_write_error || !opts_.on_write_error(e.what())) throw;
  }
}

}  // namespace hdb
