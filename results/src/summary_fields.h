// What the summaries read beside the per-op fields (kernelgate/op_fields.h): the ops of a
// results.json document and of a batch entry.
#pragma once

#include "kernelgate/op_fields.h"
#include "kernelgate/results.h"

#include <string>
#include <vector>

namespace kg::results {

// A results.json document's "ops" array; throws "SOURCE: ops: problem" when it is not an array.
const json& ops_of(const json& results, const std::string& source);

// A batch entry's ops; errors name "NAME/results.json" and the op's field.
std::vector<OpFields> entry_op_fields(const BatchEntry& entry);

}  // namespace kg::results
