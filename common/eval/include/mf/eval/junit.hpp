// An eval report as JUnit XML for CI test reporters (docs/formats/eval.md, "Rendering"): one
// testsuite of the campaign with its identity as properties, one testcase per case (a matrix
// column's entry is its own case), repeated attempts that disagree as Surefire's flakyFailure and
// rerunFailure, and each attempt's trace as a GitLab attachment. The output validates against the
// Jenkins xUnit plugin's JUnit schema (tests/schema/junit-10.xsd).
#pragma once

#include <string>

#include "mf/json/value.hpp"

namespace mf::eval {

struct JUnitOptions {
  // Where `run --traces` wrote the attempts' traces, relative to where the XML is read; empty:
  // no attachments.
  std::string traces_dir{};
  // Under the fixed clock the XML is a pure function of the report; otherwise the testsuite also
  // says when (UTC) and on which host it was rendered.
  bool fixed_clock = false;
};

// `report` is one parse_report accepted.
std::string render_junit(const json::Value& report, const JUnitOptions& options);

}  // namespace mf::eval
