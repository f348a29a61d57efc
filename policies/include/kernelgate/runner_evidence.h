// kernelgate policies: what the runner can report seeing around a call, as the supervisor's
// typed vocabulary. The loader's runner client decodes the protocol's evidence bits into an
// ObservationSet once; the evaluation reads only this type, and the table that turns an
// observation into a rule (evidence_rules) is a policy decision, kept here.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace kg::policy {

enum class RunnerObservation : uint8_t {
  PersistingL2Changed,        // a call changed the persisting-L2 limit or access window
  DeviceBusyAfterCall,        // the timed stream still busy once the call's end event completed
  ThreadsLeftRunning,         // the call returned with threads it started still running
  FlushSkipped,               // the cache flush could not run (no memory for its buffer)
  OutputsChangedAfterReturn,  // returns or arguments changed after a judged call had returned
  ObserverOff,                // the dispatcher observer missed the called op or a canary op
  DispatchedOverflow,         // more distinct operators were dispatched than a reply holds
  PoisonOff,                  // allocation poisoning was switched off during a call
  UnwrittenBool,              // a bool output held bytes other than 0/1 (poison never overwritten)
  NoDeviceWork,               // a judged call on cuda:0 returned elements but queued no device work
  WorkOutsideTimedRegion,     // a timed call's own-stream work ran outside its start/stop events
  SideStreamNotOrdered,       // a call queued work on a stream never ordered after the call's stream
};
inline constexpr int kRunnerObservationCount = 12;

// A small set of observations (one bit each; not the wire's bit layout).
class ObservationSet {
 public:
  ObservationSet() = default;
  ObservationSet(std::initializer_list<RunnerObservation> l) {
    for (auto o : l) add(o);
  }
  void add(RunnerObservation o) { bits_ |= bit(o); }
  bool has(RunnerObservation o) const { return (bits_ & bit(o)) != 0; }
  bool empty() const { return bits_ == 0; }
  bool operator==(const ObservationSet& o) const { return bits_ == o.bits_; }
  bool operator!=(const ObservationSet& o) const { return bits_ != o.bits_; }

 private:
  static uint32_t bit(RunnerObservation o) { return 1u << static_cast<unsigned>(o); }
  uint32_t bits_ = 0;
};

}  // namespace kg::policy
