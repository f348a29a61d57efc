// EvidenceRules: the runner observation -> rule table (kernelgate/evidence_rules.h) has one entry
// per observation, names only rules of the catalogue, and keeps its known meanings.
#include "kernelgate/catalogue.h"
#include "kernelgate/evidence_rules.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kg::policy {
namespace {

TEST(EvidenceRules, EveryObservationHasExactlyOneEntry) {
  std::set<int> seen;
  for (const ObservationRule& r : observation_rules()) {
    EXPECT_TRUE(seen.insert(static_cast<int>(r.observation)).second) << "observation " << static_cast<int>(r.observation) << " twice";
    EXPECT_GE(static_cast<int>(r.observation), 0);
    EXPECT_LT(static_cast<int>(r.observation), kRunnerObservationCount);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRunnerObservationCount));
  for (int o = 0; o < kRunnerObservationCount; ++o)
    EXPECT_EQ(static_cast<int>(observation_rule(static_cast<RunnerObservation>(o)).observation), o);
}

TEST(EvidenceRules, RulesAreCatalogueIdsAndEveryEntrySaysWhatItMeans) {
  for (const ObservationRule& r : observation_rules()) {
    EXPECT_NE(std::string(r.evidence), "") << static_cast<int>(r.observation);
    if (!r.rule) continue;
    const std::string id = rule_id(*r.rule);
    ASSERT_TRUE(rule_from_id(id)) << id;
    EXPECT_EQ(*rule_from_id(id), *r.rule);
  }
}

TEST(EvidenceRules, KnownMeanings) {
  EXPECT_EQ(observation_rule(RunnerObservation::ThreadsLeftRunning).rule, Rule::AsyncEscape);
  EXPECT_EQ(observation_rule(RunnerObservation::DeviceBusyAfterCall).rule, Rule::AsyncEscape);
  EXPECT_EQ(observation_rule(RunnerObservation::WorkOutsideTimedRegion).rule, Rule::AsyncEscape);
  EXPECT_EQ(observation_rule(RunnerObservation::SideStreamNotOrdered).rule, Rule::AsyncEscape);
  EXPECT_EQ(observation_rule(RunnerObservation::OutputsChangedAfterReturn).rule, Rule::AsyncEscape);
  EXPECT_EQ(observation_rule(RunnerObservation::PersistingL2Changed).rule, Rule::CacheTampering);
  EXPECT_EQ(observation_rule(RunnerObservation::ObserverOff).rule, Rule::FallbackToTorch);
  EXPECT_EQ(observation_rule(RunnerObservation::PoisonOff).rule, Rule::UnwrittenOutput);
  EXPECT_EQ(observation_rule(RunnerObservation::UnwrittenBool).rule, Rule::UnwrittenOutput);
  EXPECT_EQ(std::string(rule_id(*observation_rule(RunnerObservation::UnwrittenBool).rule)), "unwritten_output");
  // A view op legitimately queues no device work; named operators beat "too many to name".
  EXPECT_EQ(observation_rule(RunnerObservation::NoDeviceWork).rule, Rule::NoDeviceWork);
  EXPECT_EQ(observation_rule(RunnerObservation::NoDeviceWork).unless, Unless::OpReturnsOnlyViews);
  EXPECT_EQ(observation_rule(RunnerObservation::DispatchedOverflow).rule, Rule::FallbackToTorch);
  EXPECT_EQ(observation_rule(RunnerObservation::DispatchedOverflow).unless, Unless::OperatorsNamed);
  // A skipped cache flush is a note about the run, never a violation.
  EXPECT_FALSE(observation_rule(RunnerObservation::FlushSkipped).rule);
}

TEST(EvidenceRules, OrderDecidesWhichEvidenceARuleKeeps) {
  // One violation of each rule per op is kept: the first entry of a rule gives its evidence.
  const auto& t = observation_rules();
  ASSERT_GE(t.size(), 2u);
  EXPECT_EQ(t[0].observation, RunnerObservation::ThreadsLeftRunning);
  EXPECT_EQ(t[1].observation, RunnerObservation::DeviceBusyAfterCall);
  size_t observer = 0, overflow = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].observation == RunnerObservation::ObserverOff) observer = i;
    if (t[i].observation == RunnerObservation::DispatchedOverflow) overflow = i;
  }
  EXPECT_LT(observer, overflow);
}

TEST(EvidenceRules, EvidenceFillsTheDispatchedBound) {
  const std::string text = observation_evidence(observation_rule(RunnerObservation::DispatchedOverflow), 16);
  EXPECT_EQ(text, "the kernel dispatched more than 16 distinct PyTorch operators during its call (not all could be checked)");
  EXPECT_EQ(observation_evidence(observation_rule(RunnerObservation::PoisonOff), 16),
            "the runner's allocation poisoning was switched off during the call");
}

}  // namespace
}  // namespace kg::policy
