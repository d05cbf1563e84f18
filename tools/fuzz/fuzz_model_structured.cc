// Fuzz target: models built from the fuzzer's bytes by the structure-aware generator
// (model_gen.h: random call graphs, rank-conditional Ifs, Loop/Scan nesting, attribute
// references), through the whole pipeline, which must also be deterministic.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "model_gen.h"
#include "shapeprop/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shapeprop;
  fuzz::ByteReader in(data, size);
  const std::string text = fuzz::generate_model(in);
  auto model = parse_model_text(text, "<generated>", fuzz::fuzz_limits());
  fuzz::require(model.ok(), "the generator wrote text that does not parse: " + (model.ok() ? "" : model.error().str()) +
                                "\n" + text);
  fuzz::Invariants invariants;
  invariants.deterministic = true;
  fuzz::run_pipeline(*model, invariants);
  return 0;
}
