// inline-report: for each model, the If nodes and nodes before and after inlining, with
// ONNX's own inliner (onnx::inliner::InlineLocalFunctions, which folds nothing) side by
// side with shapeprop's --mode inline. Prints a Markdown table.
//
// With --check, exits 1 when a model whose graph inputs all have a known rank keeps, after
// shapeprop's inlining, an If whose condition depends only on ranks, shapes or sizes.
// With --onnxscript TSV (model, nodes_after, ...: what onnxscript's optimizer leaves, as
// tests/data/corpus/torchlib-2024-03/onnxscript-0.7.1.tsv holds it), adds that column, and
// a row of totals over the models the TSV names; with --check too, exits 1 when shapeprop
// leaves a model with more nodes than onnxscript does. With --max-total N too, exits 1
// when shapeprop leaves more than N nodes in all over those models. --onnxscript-gaps FILE
// names models exempt from that bound, as --onnxslim-gaps below does.
// With --onnxslim TSV (model, nodes, valid: what OnnxSlim leaves, as
// tests/data/onnxslim/*.tsv hold it), adds that column; with --check, exits 1 when
// shapeprop leaves more nodes than OnnxSlim on a model whose row says "valid", but for the
// models --onnxslim-gaps FILE names (one a line, model TAB reason: the known gaps), which
// must still be fatter (a gap closed is taken off the list).
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/inliner/inliner.h"
#include "shapeprop/io.h"
#include "shapeprop/specialize.h"

namespace {

using onnx::GraphProto;
using onnx::NodeProto;

struct Counts {
  size_t nodes = 0;
  size_t ifs = 0;
  size_t shape_only_ifs = 0;
};

// Values computed from shapes alone: Shape/Size outputs, constants, and what only
// those feed. Graph inputs (their values) and anything else are data.
class ShapeOnly {
 public:
  explicit ShapeOnly(const onnx::ModelProto& m) {
    for (const auto& t : m.graph().initializer()) known_[t.name()] = true;
    for (const auto& i : m.graph().input()) known_[i.name()] = false;
  }
  void visit(const NodeProto& n) {
    bool shape_only;
    const std::string& op = n.op_type();
    if (op == "Shape" || op == "Size" || op == "Constant")
      shape_only = true;
    else if (op == "If" || op == "Loop" || op == "Scan" || n.input_size() == 0)
      shape_only = false;
    else {
      shape_only = true;
      for (const auto& in : n.input())
        if (!in.empty()) shape_only = shape_only && lookup(in);
    }
    for (const auto& o : n.output()) known_[o] = shape_only;
  }
  bool lookup(const std::string& name) const {
    auto it = known_.find(name);
    return it != known_.end() && it->second;
  }

 private:
  std::unordered_map<std::string, bool> known_;
};

void count(const GraphProto& g, ShapeOnly& shapes, Counts& c) {
  for (const auto& n : g.node()) {
    ++c.nodes;
    if (n.op_type() == "If") {
      ++c.ifs;
      if (n.input_size() > 0 && shapes.lookup(n.input(0))) ++c.shape_only_ifs;
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count(a.g(), shapes, c);
      for (const auto& sg : a.graphs()) count(sg, shapes, c);
    }
    shapes.visit(n);
  }
}

Counts count(const onnx::ModelProto& m) {
  Counts c;
  ShapeOnly shapes(m);
  count(m.graph(), shapes, c);
  for (const auto& f : m.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = f.node();
    ShapeOnly fshapes(onnx::ModelProto{});
    count(body, fshapes, c);
  }
  return c;
}

bool ranks_known(const onnx::ModelProto& m) {
  for (const auto& i : m.graph().input())
    if (!i.type().has_tensor_type() || !i.type().tensor_type().has_shape()) return false;
  return true;
}

// The node counts per model (file name without .onnx) of a TSV whose first columns are
// model and nodes_after, after a header line.
std::ifstream open_or_exit(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << path << ": cannot read\n";
    std::exit(2);
  }
  return in;
}

std::unordered_map<std::string, size_t> read_counts(const std::string& path) {
  std::unordered_map<std::string, size_t> counts;
  std::ifstream in = open_or_exit(path);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string model;
    size_t nodes = 0;
    if (std::getline(fields, model, '\t') && fields >> nodes) counts[model] = nodes;
  }
  return counts;
}

// The rows of an OnnxSlim TSV whose output is valid (third column "valid"), or the first
// column of a gaps file (all rows: `valid_only` false).
std::unordered_map<std::string, size_t> read_peer_counts(const std::string& path, bool valid_only) {
  std::unordered_map<std::string, size_t> counts;
  std::ifstream in = open_or_exit(path);
  std::string line;
  if (valid_only) std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream row(line);
    for (std::string f; std::getline(row, f, '\t');) fields.push_back(f);
    if (fields.empty() || fields[0].empty() || fields[0][0] == '#') continue;
    if (!valid_only) {
      counts[fields[0]] = 0;
    } else if (fields.size() >= 3 && fields[2] == "valid") {
      counts[fields[0]] = std::stoul(fields[1]);
    }
  }
  return counts;
}

// With --check, 1 when `ours` passes a peer's count `theirs` on a model that is not a known
// gap, or does not on one that is (the gap closed: the list is out of date); else 0.
int bound_failures(bool check, bool gap, const std::string& path, size_t ours, size_t theirs, const char* peer) {
  if (!check || gap == (ours > theirs)) return 0;
  std::cerr << path << ": " << (gap ? "listed as a known gap, but " : "") << ours << " nodes after inlining, " << peer
            << " leaves " << theirs << (gap ? ": take it off the list" : "") << "\n";
  return 1;
}

struct Totals {
  size_t before = 0, by_onnx = 0, ours = 0, theirs = 0;
};

}  // namespace

int main(int argc, char** argv) {
  bool check = false;
  std::optional<std::unordered_map<std::string, size_t>> onnxscript;
  std::optional<size_t> max_total;
  std::optional<std::unordered_map<std::string, size_t>> onnxslim, onnxslim_gaps, onnxscript_gaps;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check")
      check = true;
    else if (a == "--onnxscript" && i + 1 < argc)
      onnxscript = read_counts(argv[++i]);
    else if (a == "--onnxslim" && i + 1 < argc)
      onnxslim = read_peer_counts(argv[++i], /*valid_only=*/true);
    else if (a == "--onnxscript-gaps" && i + 1 < argc)
      onnxscript_gaps = read_peer_counts(argv[++i], /*valid_only=*/false);
    else if (a == "--onnxslim-gaps" && i + 1 < argc)
      onnxslim_gaps = read_peer_counts(argv[++i], /*valid_only=*/false);
    else if (a == "--max-total" && i + 1 < argc)
      max_total = std::stoul(argv[++i]);
    else
      paths.push_back(a);
  }
  std::cout << "| model | Ifs | nodes | ONNX inliner: Ifs | nodes | shapeprop --mode inline: Ifs | nodes | shape-only Ifs left |"
            << (onnxscript ? " onnxscript 0.7.1 optimize: nodes |" : "") << (onnxslim ? " OnnxSlim: nodes |" : "")
            << "\n"
            << "|---|---|---|---|---|---|---|---|" << (onnxscript ? "---|" : "") << (onnxslim ? "---|" : "") << "\n";
  Totals totals;
  int failures = 0;
  for (const auto& path : paths) {
    auto model = shapeprop::load_model(path);
    if (!model) {
      std::cerr << model.error().str() << '\n';
      ++failures;
      continue;
    }
    const Counts before = count(*model);
    onnx::ModelProto onnx_inlined = *model;
    Counts by_onnx;
    try {
      onnx::inliner::InlineLocalFunctions(onnx_inlined, /*convert_version=*/false);
      by_onnx = count(onnx_inlined);
    } catch (const std::exception& e) {
      std::cerr << path << ": ONNX's inliner failed: " << e.what() << '\n';
    }
    onnx::ModelProto ours = *model;
    shapeprop::TransformOptions options;
    options.inline_policy = shapeprop::InlinePolicy::All;
    auto done = shapeprop::specialize(ours, options);
    if (!done || shapeprop::has_errors(done->diagnostics)) {
      std::cerr << path << ": shapeprop failed\n";
      ++failures;
      continue;
    }
    const Counts after = count(ours);
    std::string name = path.substr(path.find_last_of('/') + 1);
    const std::string stem = name.substr(0, name.rfind(".onnx"));
    std::cout << "| " << name << " | " << before.ifs << " | " << before.nodes << " | " << by_onnx.ifs << " | "
              << by_onnx.nodes << " | " << after.ifs << " | " << after.nodes << " | " << after.shape_only_ifs << " |";
    if (onnxscript) {
      auto theirs = onnxscript->find(stem);
      const bool gap = onnxscript_gaps && onnxscript_gaps->count(stem);
      if (theirs == onnxscript->end()) {
        std::cout << " – |";
      } else {
        std::cout << " " << theirs->second << (gap ? " (known gap)" : "") << " |";
        failures += bound_failures(check, gap, path, after.nodes, theirs->second, "onnxscript's optimizer");
        totals.before += before.nodes;
        totals.by_onnx += by_onnx.nodes;
        totals.ours += after.nodes;
        totals.theirs += theirs->second;
      }
    }
    if (onnxslim) {
      auto theirs = onnxslim->find(stem);
      const bool gap = onnxslim_gaps && onnxslim_gaps->count(stem);
      if (theirs == onnxslim->end()) {
        std::cout << " – |";
      } else {
        std::cout << " " << theirs->second << (gap ? " (known gap)" : "") << " |";
        failures += bound_failures(check, gap, path, after.nodes, theirs->second, "OnnxSlim");
      }
    }
    std::cout << "\n";
    if (check && ranks_known(*model) && after.shape_only_ifs > 0) {
      std::cerr << path << ": " << after.shape_only_ifs << " If(s) conditioned only on shapes remain\n";
      ++failures;
    }
  }
  if (onnxscript)
    std::cout << "| **total** (models the TSV names) | | " << totals.before << " | | " << totals.by_onnx << " | | "
              << totals.ours << " | | " << totals.theirs << " |\n";
  if (onnxscript && check && max_total && totals.ours > *max_total) {
    std::cerr << "shapeprop leaves " << totals.ours << " nodes in all, more than --max-total " << *max_total << "\n";
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}
