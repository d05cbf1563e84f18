// What the fuzz targets share: the limits they run under, the pipeline they drive a model
// through (validate, infer, specialize and inline, print and parse back), and the
// invariants they hold it to. A broken invariant aborts, which libFuzzer reports as a
// crash with the input that caused it; so do exceptions that escape the library,
// sanitizer reports, leaks, allocations beyond -malloc_limit_mb and inputs that run
// longer than -timeout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "shapeprop/diagnostics.h"
#include "shapeprop/limits.h"

namespace shapeprop::fuzz {

// Tighter than the CLI's defaults, so that one input stays in milliseconds.
Limits fuzz_limits();

// Aborts with `what` on stderr unless `ok`.
void require(bool ok, std::string_view what);

// Every diagnostic is one line of bounded length, whatever the input holds.
void check_diagnostics(const Diagnostics& diagnostics);
void check_diagnostic(const Diagnostic& diagnostic);

// What to hold the pipeline's results to, beyond not crashing.
struct Invariants {
  bool roundtrip = true;      // valid models print as text that parses back to the same model
  bool deterministic = false; // annotating twice gives the same bytes (doubles the cost)
};

// Validates `model` and, when it is valid, annotates a copy, checks it as --mode check
// does, specializes and inlines another, and prints both; every failure must come back
// as a one-line diagnostic.
void run_pipeline(const onnx::ModelProto& model, const Invariants& invariants = {});

}  // namespace shapeprop::fuzz
