// libFuzzer target: every arcstats reader, the doctor and both renderers on
// arbitrary input. Nothing may crash, leak or trip a sanitizer. Seed corpus:
// testdata/ (the seed's excerpts and the hand-made dumps of every format).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tools/doctor/arcstats_reader.h"
#include "tools/doctor/doctor.h"
#include "tools/doctor/report_format.h"
#include "tools/doctor/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arcstore::doctor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (StatsView view : {ReadKstatLines(text), ReadArcSummary(text)}) {
    DecideFieldSet(view);
    Report report = Diagnose(view);
    (void)RenderText(report);
    (void)RenderJson(report);
    (void)RenderSummary(view);
  }
  auto r = ReadArcStats(text);
  if (r.ok()) (void)RenderText(Diagnose(*r));
  return 0;
}
