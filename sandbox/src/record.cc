// record: names of profiles and statuses, and the record as JSON (isolate's meta file).
#include <cmath>
#include <cstdio>
#include <string>

#include "kernelgate/sandbox.h"

namespace kg::sandbox {

const char* profile_name(Profile p) {
  switch (p) {
    case Profile::Compile: return "compile";
    case Profile::RunCpu: return "run-cpu";
    case Profile::RunCuda: return "run-cuda";
  }
  return "?";
}

bool parse_profile(const std::string& name, Profile* out) {
  for (Profile p : {Profile::Compile, Profile::RunCpu, Profile::RunCuda}) {
    if (name == profile_name(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::OK: return "OK";
    case Status::RE: return "RE";
    case Status::SG: return "SG";
    case Status::TO: return "TO";
    case Status::ML: return "ML";
    case Status::OL: return "OL";
    case Status::SV: return "SV";
    case Status::XX: return "XX";
  }
  return "XX";
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

std::string Record::to_json() const {
  std::string j = "{";
  j += "\"status\": " + quote(status_name(status));
  j += ", \"exit_code\": " + std::to_string(exit_code);
  j += ", \"signal\": " + std::to_string(signal);
  j += ", \"syscall\": " + quote(syscall);
  j += ", \"cpu_s\": " + number(cpu_s);
  j += ", \"wall_s\": " + number(wall_s);
  j += ", \"max_rss_kb\": " + std::to_string(max_rss_kb);
  j += ", \"message\": " + quote(message);
  j += "}";
  return j;
}

}  // namespace kg::sandbox
