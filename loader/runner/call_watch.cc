// CallWatch: see instrument.h.
#include "instrument.h"

namespace kg::runner {

CallWatch::CallWatch(uint32_t call_no, const std::string& called_op, bool submission, bool poison)
    : poison_(poison), check_called_(!called_op.empty()) {
  observer_arm(called_op, submission);
  if (poison_) poison_arm(call_no);
}

CallWatch::~CallWatch() {
  if (armed_) finish();
}

uint32_t CallWatch::finish() {
  armed_ = false;
  uint32_t ev = 0;
  if (poison_ && !poison_disarm()) ev |= protocol::kEvidencePoisonOff;
  // An op called outside the dispatcher (nvrtc launches) is never seen start; the canary still counts.
  if (!observer_disarm(check_called_)) ev |= protocol::kEvidenceObserverOff;
  return ev;
}

}  // namespace kg::runner
