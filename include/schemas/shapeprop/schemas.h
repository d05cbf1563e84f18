// Rules for operators outside ONNX's registry, read at run time from schemas/ folders.
//
// ONNX Runtime's contrib ops (com.microsoft) and ops of domains nobody registers have no
// ONNX schema, so ONNX's inference knows nothing of their outputs. A rule file states,
// as data, what such an op's outputs are: a signature with named dim symbols, layouts,
// type constraints in ONNX's vocabulary, and where that is not enough a shape function
// written as an ONNX function. The language is described in schemas/README.md; the
// rules shipped with shapeprop are in the folder builtin_schemas_dir() finds.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "shapeprop/diagnostics.h"

namespace shapeprop {

namespace schemas {
struct OpRule;
}

// A set of rules, one per (domain, op). The shipped folder's files are read at the first
// lookup of an op they state, and listed at the first lookup of a domain they hold (a run
// pays for the rules it uses: listing and indexing them all was a sixth of a small model's
// run, and most runs look up none); safe to share between threads.
class OpRules {
 public:
  OpRules();
  ~OpRules();

  // The rule for an op outside ONNX's registry ("" or "ai.onnx" for the default domain), or nullptr.
  // A shipped file that does not read (a broken install) throws std::runtime_error naming it.
  const schemas::OpRule* find(const std::string& domain, const std::string& op) const;
  // The rule for version `since` of ai.onnx `op` (`op Celu since 28`), or nullptr.
  const schemas::OpRule* find_version(const std::string& op, int since) const;
  size_t size() const;
  // Every op with a rule, as "domain.Op" (or "Op", or "Op-28" for a version), with the file that states the rule.
  std::vector<std::pair<std::string, std::string>> list() const;
  // The files whose rules are not read yet (none after list()).
  size_t unread_files() const;
  // Whether the shipped folder is listed yet: from the first lookup of an op of a domain
  // it holds, or size(), list() or unread_files() (always where it was read at load).
  bool listed() const;

 private:
  friend Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders,
                                                              const std::optional<std::filesystem::path>& deferred);
  using Key = std::tuple<std::string, std::string, int>;  // (domain, op, since)
  struct File;  // a file read at its first lookup
  struct Entry {
    std::shared_ptr<const schemas::OpRule> rule;  // read as the folder loaded
    File* file = nullptr;                          // otherwise: the file that states it
  };
  // Rules of one folder: read, or indexed by the files' `op` lines.
  struct Folder {
    std::map<Key, Entry> rules;
    std::vector<std::unique_ptr<File>> files;
  };
  // The shipped folder, listed at the first lookup of a domain it holds (load_op_rules).
  struct Deferred;
  // Reads a folder's rule files, every one (deferred: indexes those its `op` lines index).
  static Result<Folder> load_folder(const std::filesystem::path& folder, const std::filesystem::path& shown,
                                    bool deferred);
  const schemas::OpRule* rule_of(const Key& key) const;
  static const schemas::OpRule* read(const Entry& entry, const Key& key);
  // The deferred folder's rules, listed now if not yet; throws where it does not list.
  const Folder* deferred_rules() const;
  std::map<Key, Entry> rules_;  // the folders read at load, each over the ones before it
  std::vector<std::unique_ptr<File>> files_;
  std::unique_ptr<Deferred> deferred_;  // before every folder of rules_, which replace its rules
};

// The folder of rules shipped with shapeprop: share/shapeprop/schemas beside the running
// executable's bin/ (an install), else the install prefix shapeprop was configured with,
// else the source tree it was built from. nullopt when none of them exists.
std::optional<std::filesystem::path> builtin_schemas_dir();

// Reads every *.rule file under each folder (recursively, in path order). A rule in a
// later folder replaces the rule of an earlier folder for the same op, so that a user's
// folder can correct a shipped rule; two rules for one op in one folder are an error. A
// folder that does not exist, an unreadable file and a malformed rule are errors, the
// latter at file:line:col.
// The files of the folder `deferred` (the shipped one, builtin_schemas_dir(), unless told
// otherwise), whose rules the tests read in full, are only indexed by their `op` lines
// and read at the first lookup of one of their ops; a folder whose `op` lines do not
// index it (schemas::scan_rule_ops) is read in full when it is indexed. Where that folder
// is the shipped one, comes first and holds only folders, one per domain (`onnx` the
// default domain), it is listed and indexed at the first lookup of an op of one of those
// domains, and a lookup throws std::runtime_error where it does not list or index;
// otherwise here.
Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders,
                                                     const std::optional<std::filesystem::path>& deferred);
Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders);

// The shipped rules, indexed once per process (each file read at the first lookup of one
// of its ops); empty when builtin_schemas_dir() finds none or the folder does not load (a
// broken install: `onnx-infer-shapes` reports it; a file of it that does not read is an
// error where a model uses one of its ops).
std::shared_ptr<const OpRules> builtin_op_rules();

}  // namespace shapeprop
