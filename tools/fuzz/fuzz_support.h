// What the fuzz targets share: the limits they run under, the pipeline they drive a model
// through (validate, infer, specialize and inline, print and parse back), and the
// invariants they hold it to. A broken invariant aborts, which libFuzzer reports as a
// crash with the input that caused it; so do exceptions that escape the library,
// sanitizer reports, leaks, allocations beyond -malloc_limit_mb and inputs that run
// longer than -timeout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
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
// as a one-line diagnostic. Each written model is held to what users rely on:
// written_model_holds below, and the runtime oracle (save_for_runtime).
void run_pipeline(const onnx::ModelProto& model, const Invariants& invariants = {});

// Whether ONNX's full checker (its checker, then its strict inference; run_onnx_checker)
// accepts `model` as ONNX's own check_model(full_check=true) would: CheckerMode::onnx.
bool passes_full_checker(const onnx::ModelProto& model);

// Whether `told` holds a warning or an error.
bool warns(const Diagnostics& told);

// The oracles of a model the library wrote (`written`, `what` naming the step, `told`
// what the run reported) from `input`, whose dim_params are `names` (dim_params_of) and
// which `input_checks` (passes_full_checker):
//  - every dim_param written is a dim name of the input, a minted name (dyn__N, unk__N)
//    or an expression over them (foreign_dim_param);
//  - where the input passes ONNX's full checker and the run told of no problem, the
//    written model passes it too. A run that warns has told the user what is wrong:
//    where ONNX's inference fails on a node in the context the analysis proves (an Expand
//    of shapes that never broadcast, behind a shape value ONNX's own inference cannot
//    follow), the written model, with that shape value folded, shows ONNX the failure;
//  - the pair is saved for the runtime oracle (save_for_runtime).
void written_model_holds(const onnx::ModelProto& input, const std::set<std::string>& names, bool input_checks,
                         const onnx::ModelProto& written, const Diagnostics& told, const char* what);

// The runtime oracle's first half: with SHAPEPROP_FUZZ_RUNTIME_DIR set, `input` and the
// model written from it are saved there as HASH.input.onnx and HASH.WHAT.onnx (HASH of
// the input's bytes), for tools/fuzz/runtime-facts.sh, which runs each written model on
// ONNX Runtime and checks every type it declares against the tensors computed
// (tools/equiv/ort_types.js). Outside that run nothing is written. ONNX Runtime is not
// linked into the fuzzers (it is the Node package tools/equiv uses), so the fuzzers save
// and the script checks, after a run or over a corpus (scripts/fuzz.sh does both).
void save_for_runtime(const onnx::ModelProto& input, const onnx::ModelProto& written, const char* what);

}  // namespace shapeprop::fuzz
