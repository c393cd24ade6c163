// See machine_stalls.h.
#include "stats/machine_stalls.h"

#include "base/thread_name.h"

namespace arcstore::stats {

Result<std::unique_ptr<MachineStallMonitor>> MachineStallMonitor::Start(
    const StallOptions& options, Clock* clock, Registry* registry) {
  ARC_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<MachineStallMonitor> m(new MachineStallMonitor(options, clock, registry));
  m->thread_ = std::thread([p = m.get()] { p->Run(); });
  return m;
}

MachineStallMonitor::MachineStallMonitor(const StallOptions& options, Clock* clock,
                                         Registry* registry)
    : options_([&] {
        StallOptions o = options;
        o.max_events = 0;  // counts only: a server runs for months
        return o;
      }()),
      clock_(clock),
      registry_(registry),
      stalls_(registry->AddCounter(kModule, "stalls", Unit::kOps,
                                   "times no CPU ran the process for 10 ms or more (a wake-up "
                                   "of an idle watch thread that late): the host's CPU limit, "
                                   "or steal")),
      stall_ns_(registry->AddCounter(kModule, "stall_ns", Unit::kNanoseconds,
                                     "those stalls' lengths, summed")),
      watched_ns_(registry->AddCounter(kModule, "watched_ns", Unit::kNanoseconds,
                                       "time the stall watch ran (stall_ns over this: the share "
                                       "of time the process was stopped)")),
      worst_ns_(registry->AddGauge(kModule, "worst_stall_ns", Unit::kNanoseconds,
                                   "the longest stall since the server started")) {}

MachineStallMonitor::~MachineStallMonitor() {
  done_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  registry_->RemoveModule(kModule);
}

void MachineStallMonitor::Run() {
  NameThisThread("stall_watch");
  StallRecorder recorder(options_, clock_->NowNs());
  uint64_t last = clock_->NowNs();
  while (!done_.load(std::memory_order_acquire)) {
    const uint64_t due = clock_->NowNs() + options_.period_ns;
    clock_->SleepUntilNs(due);
    const uint64_t woke = clock_->NowNs();
    watched_ns_->Add(woke > last ? woke - last : 0);
    last = woke;
    const uint64_t late = recorder.Wake(due, woke);
    if (late == 0) continue;
    stalls_->Add();
    stall_ns_->Add(late);
    worst_ns_->Set(static_cast<int64_t>(recorder.worst_ns()));
  }
}

}  // namespace arcstore::stats
