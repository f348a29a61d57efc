// The runner observation -> rule table (evidence_rules.h).
#include "kernelgate/evidence_rules.h"

#include <stdexcept>

namespace kg::policy {

const std::vector<ObservationRule>& observation_rules() {
  using O = RunnerObservation;
  static const std::vector<ObservationRule> table = {
      {O::ThreadsLeftRunning, Rule::AsyncEscape, Unless::Never, "the call returned with threads it started still running"},
      {O::DeviceBusyAfterCall, Rule::AsyncEscape, Unless::Never, "the timed stream still had work once the call's end event completed"},
      // Before the bracketing's: seen from the calls made, the same on every run and every size.
      {O::SideStreamNotOrdered, Rule::AsyncEscape, Unless::Never,
       "queued work on a stream that was never ordered after the call's stream (no event of the call's stream waited for, no "
       "host synchronisation): it can start before the call's inputs are written"},
      {O::WorkOutsideTimedRegion, Rule::AsyncEscape, Unless::Never,
       "a call queued work on a stream of its own that ran outside the call's start and stop events (before the start: "
       "beside the runner's own input copies and cache flush, before its inputs were there; after the stop: the call's "
       "stream did not wait for it), so the call's events cover none of it"},
      {O::PersistingL2Changed, Rule::CacheTampering, Unless::Never, "a call changed the persisting-L2 limit or access window"},
      {O::OutputsChangedAfterReturn, Rule::AsyncEscape, Unless::Never,
       "the call's outputs (or arguments) changed after it had returned: work left running in the background"},
      {O::ObserverOff, Rule::FallbackToTorch, Unless::Never, "the runner's dispatcher observer was removed or disabled during the call"},
      {O::PoisonOff, Rule::UnwrittenOutput, Unless::Never, "the runner's allocation poisoning was switched off during the call"},
      {O::UnwrittenBool, Rule::UnwrittenOutput, Unless::Never,
       "a bool output held bytes other than 0 and 1 (the runner's allocation poison): never written"},
      {O::NoDeviceWork, Rule::NoDeviceWork, Unless::OpReturnsOnlyViews,
       "the call returned elements on cuda:0, but its host code queued no device work (no kernel launch, memset or "
       "device-to-device copy through libcudart): computed on the host"},
      {O::DispatchedOverflow, Rule::FallbackToTorch, Unless::OperatorsNamed,
       "the kernel dispatched more than {max_dispatched} distinct PyTorch operators during its call (not all could be "
       "checked)"},
      // The timed call then measured a warm cache; nothing the kernel is known to have done.
      {O::FlushSkipped, std::nullopt, Unless::Never, "the cache flush before a timed call could not run (no memory for its buffer)"},
  };
  return table;
}

const ObservationRule& observation_rule(RunnerObservation o) {
  for (const ObservationRule& r : observation_rules())
    if (r.observation == o) return r;
  throw std::logic_error("runner observation " + std::to_string(static_cast<int>(o)) + " has no entry in observation_rules()");
}

std::string observation_evidence(const ObservationRule& rule, unsigned max_dispatched) {
  static const std::string placeholder = "{max_dispatched}";
  std::string text = rule.evidence;
  for (size_t at; (at = text.find(placeholder)) != std::string::npos;) text.replace(at, placeholder.size(), std::to_string(max_dispatched));
  return text;
}

}  // namespace kg::policy
