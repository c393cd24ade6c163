#include "tools/doctor/report_format.h"

#include <nlohmann/json.hpp>

namespace arcstore::doctor {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

std::string RenderText(const Report& r) {
  std::string out = "source: " + std::string(FormatName(r.format)) +
                    "\nfield set: " + std::string(FieldSetName(r.field_set)) + " (" +
                    r.field_set_reason + ")\n\n";
  for (const auto& f : r.findings) {
    out += Pad(Upper(SeverityName(f.severity)), 9) + " " + f.id + ": " + f.title + "\n";
    for (const auto& e : f.evidence) out += "          " + Pad(e.name, 32) + " " + e.value + "\n";
    if (!f.advice.empty()) out += "          what to do: " + f.advice + "\n";
    out += "\n";
  }
  if (!r.undecided.empty()) {
    out += "could not decide:\n";
    for (const auto& u : r.undecided)
      out += "  " + u.check + ": " + u.why + " (missing: " + Join(u.missing) + ")\n";
    out += "missing fields: " + Join(r.MissingFields()) + "\n\n";
  }
  if (!r.notes.empty()) {
    out += "notes:\n";
    for (const auto& n : r.notes) out += "  " + n + "\n";
    out += "\n";
  }
  out += "verdict: " + std::string(SeverityName(r.Worst())) + " (exit " +
         std::to_string(r.ExitCode()) + ")\n";
  return out;
}

std::string RenderJson(const Report& r, int indent) {
  nlohmann::ordered_json j;
  j["source"] = {{"format", std::string(FormatName(r.format))},
                 {"field_set", std::string(FieldSetName(r.field_set))},
                 {"field_set_reason", r.field_set_reason}};
  j["verdict"] = std::string(SeverityName(r.Worst()));
  j["exit_code"] = r.ExitCode();
  j["findings"] = nlohmann::ordered_json::array();
  for (const auto& f : r.findings) {
    nlohmann::ordered_json jf = {{"id", f.id},
                                 {"severity", std::string(SeverityName(f.severity))},
                                 {"title", f.title}};
    jf["evidence"] = nlohmann::ordered_json::array();
    for (const auto& e : f.evidence) jf["evidence"].push_back({{"name", e.name}, {"value", e.value}});
    jf["advice"] = f.advice;
    j["findings"].push_back(std::move(jf));
  }
  j["undecided"] = nlohmann::ordered_json::array();
  for (const auto& u : r.undecided)
    j["undecided"].push_back({{"check", u.check}, {"missing", u.missing}, {"why", u.why}});
  j["missing_fields"] = r.MissingFields();
  j["notes"] = r.notes;
  // Values come from untrusted text: replace invalid UTF-8 rather than throw.
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace arcstore::doctor
