// The protocol's evidence bits as the supervisor's observations (runner_reply.h).
#include "runner_reply.h"

namespace kg::loader {

using policy::RunnerObservation;

const EvidenceBit kEvidenceBits[policy::kRunnerObservationCount] = {
    {protocol::kEvidencePersistingL2Changed, RunnerObservation::PersistingL2Changed},
    {protocol::kEvidenceDeviceBusyAfterCall, RunnerObservation::DeviceBusyAfterCall},
    {protocol::kEvidenceThreadsLeftRunning, RunnerObservation::ThreadsLeftRunning},
    {protocol::kEvidenceFlushSkipped, RunnerObservation::FlushSkipped},
    {protocol::kEvidenceOutputsChangedAfterReturn, RunnerObservation::OutputsChangedAfterReturn},
    {protocol::kEvidenceObserverOff, RunnerObservation::ObserverOff},
    {protocol::kEvidenceDispatchedOverflow, RunnerObservation::DispatchedOverflow},
    {protocol::kEvidencePoisonOff, RunnerObservation::PoisonOff},
    {protocol::kEvidenceUnwrittenBool, RunnerObservation::UnwrittenBool},
    {protocol::kEvidenceNoDeviceWork, RunnerObservation::NoDeviceWork},
    {protocol::kEvidenceWorkOutsideTimedRegion, RunnerObservation::WorkOutsideTimedRegion},
    {protocol::kEvidenceSideStreamNotOrdered, RunnerObservation::SideStreamNotOrdered},
};

policy::ObservationSet observations_from_evidence(uint32_t evidence) {
  policy::ObservationSet set;
  for (const EvidenceBit& e : kEvidenceBits)
    if (evidence & e.bit) set.add(e.observation);
  return set;
}

}  // namespace kg::loader
