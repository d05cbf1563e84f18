// Fuzz target: models built from the fuzzer's bytes by the structure-aware generator
// (model_gen.h: random call graphs, rank-conditional Ifs, Loop/Scan nesting, attribute
// references; one input in four also what current ONNX writes: IR 11-13, the newer
// element types, opsets 23-26 and their ops), through the whole pipeline, which must also
// be deterministic. A model the linked ONNX is too old to read must be refused cleanly:
// a one-line error when its text is parsed or it is validated, never an analysis.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "model_gen.h"
#include "shapeprop/io.h"
#include "shapeprop/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapeprop;
  fuzz::ByteReader in(data, size);
  const bool current_onnx = in.number(0, 3) == 0;
  const fuzz::GeneratedModel generated = fuzz::generate(in, current_onnx);
  auto model = parse_model_text(generated.text, "<generated>", fuzz::fuzz_limits());
  if (!fuzz::readable_by_linked_onnx(generated)) {
    if (!model) return fuzz::check_diagnostic(model.error()), 0;
    const Diagnostics problems =
        validate_model(*model, "<generated>", nullptr, CheckerMode::as_inference, fuzz::fuzz_limits());
    fuzz::check_diagnostics(problems);
    fuzz::require(has_errors(problems), "a model newer than the linked ONNX passes validation:\n" + generated.text);
    return 0;
  }
  fuzz::require(model.ok(), "the generator wrote text that does not parse: " + (model.ok() ? "" : model.error().str()) +
                                "\n" + generated.text);
  fuzz::Invariants invariants;
  invariants.deterministic = true;
  fuzz::run_pipeline(*model, invariants);
  return 0;
}
