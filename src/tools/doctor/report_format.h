// Rendering a doctor Report for people (text) and for machines (JSON).
//
// Text: one block per finding, most severe first, with its evidence and what
// to do; then the checks that could not be decided and the fields they
// lacked, the reader's notes, and the verdict. JSON:
//   {"source": {"format", "field_set", "field_set_reason"},
//    "verdict": "critical", "exit_code": 2,
//    "findings": [{"id", "severity", "title", "evidence": [{"name", "value"}], "advice"}],
//    "undecided": [{"check", "missing": [...], "why"}],
//    "missing_fields": [...], "notes": [...]}
//
// Thread-safety: pure functions; the strings are owned by the caller.
#pragma once

#include <string>

#include "tools/doctor/doctor.h"

namespace arcstore::doctor {

std::string RenderText(const Report& report);
std::string RenderJson(const Report& report, int indent = 2);

}  // namespace arcstore::doctor
