#pragma once
// What keeps the ranks of a TP case in step. The session on every rank decides skips, the number
// of passes and verdicts on its own, so each of those inputs is made identical on every rank:
// set-up failures are agreed on (the first failing rank's reason wins), pass times are the maximum
// over ranks, and verdicts are decided on rank 0 and broadcast.
#include <functional>
#include <string>
#include <vector>

#include "harness/comm.hpp"
#include "harness/result.hpp"
#include "harness/session.hpp"
#include "harness/timing.hpp"

namespace hdb::dist {

// Runs rank-local set-up work. If it throws on any rank, every rank throws the same: SkipCase when
// the first failing rank skipped (or ran out of memory), else std::runtime_error naming the rank;
// except that a rank whose device was lost (DeviceLost) throws DeviceLost, which stops its run.
void collectively(const Comm& comm, const std::function<void()>& local);

// One timed pass: a barrier (so every rank starts together), the local pass, then every field the
// maximum over ranks. `phases` fixes the phase names and their order on every rank. A pass that
// threw on any rank throws on every rank (DeviceLost on a rank whose device was lost).
Breakdown collective_pass(const Comm& comm, const std::function<Breakdown()>& local, const std::vector<Phase>& phases);

// Rank 0's verdict on every rank.
Verification broadcast_verdict(const Comm& comm, const Verification& on_root);

// The case parameters every TP case carries: ranks and scaling (strong/weak).
void add_rank_params(Params& p, const Comm& comm, bool weak);

}  // namespace hdb::dist
