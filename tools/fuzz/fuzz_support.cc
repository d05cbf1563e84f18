#include "fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <string>

#include "io/model_prefix.h"
#include "shapeprop/check.h"
#include "shapeprop/infer.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"
#include "shapeprop/text.h"
#include "shapeprop/validate.h"

namespace shapeprop::fuzz {

namespace {

// Longer than any diagnostic str() writes (Diagnostic::str's bounds add up to ~2 KB).
constexpr size_t kMaxDiagnosticLine = 2500;

// The check of a device's or FIFO's first bytes (io/model_prefix.h) lets every model pass
// as protobuf writes it and as shapeprop prints it, read in chunks of any size.
void require_prefix_accepts(const std::string& bytes, const char* what) {
  for (size_t chunk : {size_t{7}, size_t{4096}}) {
    ModelPrefix prefix("<fuzz>", std::nullopt, fuzz_limits());
    for (size_t n = chunk;; n += chunk) {
      auto refused = prefix.check(std::string_view(bytes).substr(0, std::min(n, bytes.size())));
      require(!refused, std::string("the first bytes of a valid model, ") + what + ", are refused: " +
                            (refused ? refused->str() : ""));
      if (n >= bytes.size()) break;
    }
  }
}

}  // namespace

Limits fuzz_limits() {
  Limits limits;
  limits.max_input_bytes = 1 << 20;
  limits.fifo_wait_seconds = 0;
  limits.max_subgraph_depth = 16;
  limits.max_call_depth = 16;
  limits.max_elements = 4096;
  limits.max_inlined_nodes = 20000;
  limits.inline_growth = 16;
  limits.max_specializations = 32;
  return limits;
}

void require(bool ok, std::string_view what) {
  if (ok) return;
  std::cerr << "fuzz invariant broken: " << what << '\n';
  std::abort();
}

void check_diagnostic(const Diagnostic& d) {
  const std::string line = d.str();
  require(line.find('\n') == std::string::npos && line.find('\r') == std::string::npos,
          "a diagnostic spans several lines: " + line);
  require(line.size() <= kMaxDiagnosticLine, "a diagnostic line of " + std::to_string(line.size()) + " bytes");
}

void check_diagnostics(const Diagnostics& diagnostics) {
  for (const auto& d : diagnostics) check_diagnostic(d);
}

bool warns(const Diagnostics& told) {
  return std::any_of(told.begin(), told.end(), [](const Diagnostic& d) { return d.severity != Severity::Note; });
}

bool passes_full_checker(const onnx::ModelProto& model) {
  return !has_errors(run_onnx_checker(model, /*full_check=*/true, "<fuzz>", nullptr, CheckerMode::onnx));
}

void written_model_holds(const onnx::ModelProto& input, const std::set<std::string>& names, bool input_checks,
                         const onnx::ModelProto& written, const Diagnostics& told, const char* what) {
  // What a written model may hold (issue 50): no dim_param but the model's names, minted
  // ones and expressions over them, whatever the library wrote.
  // The models, printed after the message of a broken invariant.
  auto shown = [&]() { return "\nthe model given:\n" + print_model(input) + "\nthe model written:\n" + print_model(written); };
  const auto foreign = foreign_dim_param(written, names);
  if (foreign) require(false, std::string(what) + ": " + *foreign + shown());
  if (input_checks && !warns(told)) {
    const Diagnostics refused = run_onnx_checker(written, /*full_check=*/true, "<fuzz>", nullptr, CheckerMode::onnx);
    if (has_errors(refused))
      require(false, std::string(what) + ": ONNX's full checker accepts the model given and refuses the model written: " +
                         first_and_count(refused) + shown());
  }
  save_for_runtime(input, written, what);
}

void save_for_runtime(const onnx::ModelProto& input, const onnx::ModelProto& written, const char* what) {
  static const char* const dir = std::getenv("SHAPEPROP_FUZZ_RUNTIME_DIR");
  if (!dir || !*dir) return;
  const std::string bytes = input.SerializeAsString();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(bytes));
  const std::filesystem::path base = std::filesystem::path(dir) / hash;
  auto save = [](const std::filesystem::path& path, const std::string& data) {
    std::ofstream out(path, std::ios::binary);
    out << data;
    require(static_cast<bool>(out), "cannot write " + path.string());
  };
  save(base.string() + ".input.onnx", bytes);
  save(base.string() + "." + what + ".onnx", written.SerializeAsString());
}

// What the driver does with a model ONNX's checker refuses when the checker runs alongside
// the analysis (JobOptions::check_alongside): the first analysis of each mode reads it,
// and the run stops where it would first write. It must end that way, unharmed.
void analyse_refused(const onnx::ModelProto& model, const Limits& limits) {
  InferOptions options;
  options.limits = limits;
  options.before_writing = []() -> Status { return Diagnostic::error("refused"); };
  onnx::ModelProto copy = model;
  auto annotated = infer_shapes(copy, options);
  if (annotated) check_diagnostics(annotated->diagnostics);  // analysis errors end it before the gate
  require(copy.SerializeAsString() == model.SerializeAsString(), "a run stopped before writing wrote the model");
  TransformOptions transform;
  transform.infer = options;
  transform.inline_policy = InlinePolicy::All;
  transform.consume_input = true;
  auto specialized = specialize(copy, transform);
  if (specialized) check_diagnostics(specialized->diagnostics);
  require(copy.SerializeAsString() == model.SerializeAsString(), "a transform stopped before writing wrote the model");
}

void run_pipeline(const onnx::ModelProto& model, const Invariants& invariants) {
  const Limits limits = fuzz_limits();
  std::optional<CallGraph> calls;
  Diagnostics problems =
      validate_model_but_onnx_checker(model, "<fuzz>", nullptr, CheckerMode::as_inference, limits, false, calls);
  check_diagnostics(problems);
  if (has_errors(problems)) return;
  problems = run_onnx_checker(model, /*full_check=*/false, "<fuzz>", nullptr, CheckerMode::as_inference);
  check_diagnostics(problems);
  if (has_errors(problems)) {
    analyse_refused(model, limits);
    return;
  }

  if (invariants.roundtrip) {
    auto rt = verify_text_roundtrip(model, limits);
    require(rt.ok(), "a valid model does not round-trip through text: " + (rt.ok() ? "" : rt.error().str()));
    require_prefix_accepts(model.SerializeAsString(), "serialized");
    require_prefix_accepts(print_model(model), "printed");
  }

  InferOptions options;
  options.limits = limits;
  const std::set<std::string> names = dim_params_of(model);
  const bool input_checks = passes_full_checker(model);
  onnx::ModelProto annotated = model;
  auto inferred = infer_shapes(annotated, options);
  if (!inferred) {
    check_diagnostic(inferred.error());
  } else {
    check_diagnostics(inferred->diagnostics);
    written_model_holds(model, names, input_checks, annotated, inferred->diagnostics, "annotated");
    (void)print_model(annotated);
    if (invariants.deterministic) {
      onnx::ModelProto again = model;
      auto second = infer_shapes(again, options);
      require(second.ok() && again.SerializeAsString() == annotated.SerializeAsString(),
              "annotating twice gives different models");
    }
  }

  CheckOptions check;  // --mode check
  check.limits = limits;
  check_diagnostics(check_model(model, check));

  TransformOptions transform;
  transform.infer = options;
  transform.inline_policy = InlinePolicy::All;
  onnx::ModelProto flat = model;
  auto specialized = specialize(flat, transform);
  if (!specialized) {
    check_diagnostic(specialized.error());
    return;
  }
  check_diagnostics(specialized->diagnostics);
  written_model_holds(model, names, input_checks, flat, specialized->diagnostics, "inlined");
  (void)print_model(flat);
}

}  // namespace shapeprop::fuzz
