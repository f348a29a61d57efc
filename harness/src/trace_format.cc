// Canonical rendering of trace values and calls, and structural equality.
// parse_call(format_call(c)) reproduces c exactly (floats included); see docs/trace-format.md.
// No torch headers here: this file builds alone for the fuzz target.
#include "kernelgate/trace.h"

#include "kernelgate/text_safety.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kg::trace {

namespace {

void append_int_seq(std::string& out, const std::vector<int64_t>& xs) {
  out += '[';
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(xs[i]);
  }
  out += ']';
}

void append_float(std::string& out, double f) {
  if (std::isnan(f)) {
    out += "nan";
    return;
  }
  if (std::isinf(f)) {
    out += f < 0 ? "-inf" : "inf";
    return;
  }
  // Shortest text that reads back to the same double.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  std::string s(buf, r.ptr);
  // Keep it a float literal: "1" would read back as an integer.
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  out += s;
}

void append_string(std::string& out, const std::string& s) { out += text::python_quoted(s); }

void append_value(std::string& out, const Value& v);

void append_items(std::string& out, const ValueList& items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    append_value(out, items[i]);
  }
}

void append_value(std::string& out, const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: out += "None"; return;
    case Value::Kind::Bool: out += v.b ? "True" : "False"; return;
    case Value::Kind::Int: out += std::to_string(v.i); return;
    case Value::Kind::Float: append_float(out, v.f); return;
    case Value::Kind::String: append_string(out, v.s); return;
    case Value::Kind::Tensor:
      out += "T(";
      append_int_seq(out, v.tensor.shape);
      out += ", ";
      out += v.tensor.dtype;
      if (v.tensor.has_strides) {
        out += ", ";
        append_int_seq(out, v.tensor.strides);
      }
      out += ')';
      return;
    case Value::Kind::List:
      out += '[';
      append_items(out, v.items);
      out += ']';
      return;
    case Value::Kind::Tuple:
      out += '(';
      append_items(out, v.items);
      if (v.items.size() == 1) out += ',';
      out += ')';
      return;
    case Value::Kind::Dict:
      if (v.keys.size() != v.items.size())
        throw std::invalid_argument("format_value: dict with " + std::to_string(v.keys.size()) + " keys and " +
                                    std::to_string(v.items.size()) + " values");
      out += '{';
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (i) out += ", ";
        append_string(out, v.keys[i]);
        out += ": ";
        append_value(out, v.items[i]);
      }
      out += '}';
      return;
    case Value::Kind::Dtype: out += v.s; return;
    case Value::Kind::Device:
      out += "torch.device(";
      append_string(out, v.s);
      out += ')';
      return;
    case Value::Kind::Symbol: out += v.s; return;
  }
}

bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;  // tells -0.0 from 0.0
}

bool same_list(const ValueList& a, const ValueList& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_value(a[i], b[i])) return false;
  return true;
}

}  // namespace

std::string format_value(const Value& v) {
  std::string out;
  append_value(out, v);
  return out;
}

std::string format_spec(const Call& call) {
  std::string out = "((";
  append_items(out, call.args);
  if (call.args.size() == 1) out += ',';
  out += "), {";
  for (std::size_t i = 0; i < call.kwargs.size(); ++i) {
    if (i) out += ", ";
    append_string(out, call.kwargs[i].first);
    out += ": ";
    append_value(out, call.kwargs[i].second);
  }
  out += "})";
  return out;
}

std::string format_call(const Call& call) { return "cnt: " + std::to_string(call.count) + ", " + format_spec(call); }

std::string format_trace(const std::vector<OperatorEntry>& ops) {
  std::string out;
  for (const auto& op : ops) {
    out += "Operator: ";
    out += op.name;
    out += '\n';
    for (const auto& c : op.calls) {
      out += format_call(c);
      out += '\n';
    }
  }
  return out;
}

bool same_value(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::None: return true;
    case Value::Kind::Bool: return a.b == b.b;
    case Value::Kind::Int: return a.i == b.i;
    case Value::Kind::Float: return same_double(a.f, b.f);
    case Value::Kind::String:
    case Value::Kind::Dtype:
    case Value::Kind::Device:
    case Value::Kind::Symbol: return a.s == b.s;
    case Value::Kind::Tensor:
      return a.tensor.shape == b.tensor.shape && a.tensor.dtype == b.tensor.dtype && a.tensor.has_strides == b.tensor.has_strides &&
             (!a.tensor.has_strides || a.tensor.strides == b.tensor.strides);
    case Value::Kind::List:
    case Value::Kind::Tuple: return same_list(a.items, b.items);
    case Value::Kind::Dict: return a.keys == b.keys && same_list(a.items, b.items);
  }
  return false;
}

bool same_call(const Call& a, const Call& b) {
  if (a.count != b.count || !same_list(a.args, b.args) || a.kwargs.size() != b.kwargs.size()) return false;
  for (std::size_t i = 0; i < a.kwargs.size(); ++i)
    if (a.kwargs[i].first != b.kwargs[i].first || !same_value(a.kwargs[i].second, b.kwargs[i].second)) return false;
  return true;
}

bool same_trace(const std::vector<OperatorEntry>& a, const std::vector<OperatorEntry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].calls.size() != b[i].calls.size()) return false;
    for (std::size_t j = 0; j < a[i].calls.size(); ++j)
      if (!same_call(a[i].calls[j], b[i].calls[j])) return false;
  }
  return true;
}

}  // namespace kg::trace
