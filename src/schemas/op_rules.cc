// Loading rule folders, and finding the shipped one.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "io/read_input.h"
#include "schemas/rule_parser.h"
#include "shapeprop/function_id.h"
#include "shapeprop/schemas.h"

namespace shapeprop {

// A file of a deferred folder: its text, kept from the load, read once at the first lookup
// of an op its `op` lines state.
struct OpRules::File {
  std::string name;  // as diagnostics show it (schemas/...)
  std::string text;
  std::vector<Key> keys;  // scan_rule_ops'
  std::once_flag once;
  std::atomic<bool> read{false};
  std::map<Key, std::shared_ptr<const schemas::OpRule>> rules;  // once read
  std::string error;                                              // or why it did not read

  void read_rules() {
    std::call_once(once, [this] {
      auto parsed = schemas::parse_rules(text, name);
      if (!parsed) {
        error = parsed.error().str();
      } else {
        for (auto& rule : *parsed) {
          Key key{rule.domain, rule.op, rule.since};
          rules[key] = std::make_shared<const schemas::OpRule>(std::move(rule));
        }
        // The index must be what the rules state: a rule the `op` lines missed would
        // never be found (the tests check every shipped file the same way).
        std::set<Key> scanned(keys.begin(), keys.end());
        std::set<Key> stated;
        for (const auto& [key, rule] : rules) stated.insert(key);
        if (scanned != stated) error = name + ": the ops its rules state differ from those of its 'op' lines";
      }
      read = true;
    });
    if (!error.empty()) throw std::runtime_error("the shipped rule file " + name + " does not read: " + error);
  }
};

OpRules::OpRules() = default;
OpRules::~OpRules() = default;

const schemas::OpRule* OpRules::rule_of(const Key& key) const {
  auto it = rules_.find(key);
  if (it == rules_.end()) return nullptr;
  if (!it->second.file) return it->second.rule.get();
  it->second.file->read_rules();
  auto found = it->second.file->rules.find(key);
  return found == it->second.file->rules.end() ? nullptr : found->second.get();
}

const schemas::OpRule* OpRules::find(const std::string& domain, const std::string& op) const {
  return rule_of({FunctionId::canonical_domain(domain), op, 0});
}

const schemas::OpRule* OpRules::find_version(const std::string& op, int since) const {
  return rule_of({std::string(), op, since});
}

std::vector<std::pair<std::string, std::string>> OpRules::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, entry] : rules_)
    if (const schemas::OpRule* rule = rule_of(key)) out.emplace_back(rule->versioned_name(), rule->where.file);
  return out;
}

size_t OpRules::unread_files() const {
  return static_cast<size_t>(std::count_if(files_.begin(), files_.end(), [](const auto& f) { return !f->read; }));
}

std::optional<std::filesystem::path> builtin_schemas_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  std::error_code ec;
  // An install: <prefix>/bin/onnx-infer-shapes and <prefix>/share/shapeprop/schemas.
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
    candidates.push_back(exe.parent_path().parent_path() / "share" / "shapeprop" / "schemas");
  candidates.emplace_back(SHAPEPROP_SCHEMAS_INSTALL_DIR);
  candidates.emplace_back(SHAPEPROP_SCHEMAS_SOURCE_DIR);
  for (const auto& c : candidates)
    if (fs::is_directory(c, ec)) return c;
  return std::nullopt;
}

Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders) {
  return load_op_rules(folders, builtin_schemas_dir());
}

Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders,
                                                     const std::optional<std::filesystem::path>& deferred) {
  namespace fs = std::filesystem;
  auto rules = std::make_shared<OpRules>();
  const auto builtin = builtin_schemas_dir();
  for (const auto& folder : folders) {
    // Diagnostics name a shipped rule as schemas/..., a user's as the folder given.
    std::error_code same_ec;
    const fs::path shown = builtin && fs::equivalent(folder, *builtin, same_ec) ? fs::path("schemas") : folder;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      return Diagnostic::error("schemas folder '" + folder.string() + "' does not exist or is not a folder");
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->path().extension() == ".rule" && it->is_regular_file(ec)) files.push_back(it->path());
    if (ec) return Diagnostic::error("cannot list schemas folder '" + folder.string() + "': " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<std::unique_ptr<OpRules::File>> read;
    for (const auto& file : files) {
      auto f = std::make_unique<OpRules::File>();
      // (Lexically: each file was found under `folder`, by that path.)
      f->name = (shown / file.lexically_relative(folder)).generic_string();
      // By read() into its string (io's reader): every run reads the 28 shipped files, and
      // an ifstream, an ostringstream and their locales made half of that.
      auto text = read_input(file, Limits{});
      if (!text) return Diagnostic::error("cannot read rule file (" + text.error().message + ")").in_file(f->name);
      f->text = std::move(*text);
      read.push_back(std::move(f));
    }
    // Deferred: indexed by the files' `op` lines, when they index every file and name no
    // op twice; otherwise read here (where a second rule for an op is reported).
    std::error_code deferred_ec;
    bool index = deferred && fs::equivalent(folder, *deferred, deferred_ec);
    std::set<OpRules::Key> indexed;
    for (auto& f : read) {
      if (!index) break;
      auto keys = schemas::scan_rule_ops(f->text);
      if (!keys) index = false;
      for (const auto& key : keys ? *keys : std::vector<OpRules::Key>())
        if (!indexed.insert(key).second) index = false;
      if (keys) f->keys = std::move(*keys);
    }
    if (index) {
      for (auto& f : read) {
        for (const auto& key : f->keys) rules->rules_[key] = OpRules::Entry{nullptr, f.get()};
        rules->files_.push_back(std::move(f));
      }
      continue;
    }
    std::map<OpRules::Key, std::string> in_this_folder;  // op -> where
    for (const auto& f : read) {
      auto parsed = schemas::parse_rules(f->text, f->name);
      if (!parsed) return parsed.error();
      for (auto& rule : *parsed) {
        OpRules::Key key{rule.domain, rule.op, rule.since};
        auto [seen, fresh] = in_this_folder.try_emplace(key, rule.where.str());
        if (!fresh)
          return Diagnostic::error("a second rule for " + rule.versioned_name() + " (the first is at " + seen->second + ")")
              .in_file(rule.where.file, rule.where.line, rule.where.column);
        rules->rules_[key] = OpRules::Entry{std::make_shared<const schemas::OpRule>(std::move(rule)), nullptr};
      }
    }
  }
  return std::shared_ptr<const OpRules>(std::move(rules));
}

std::shared_ptr<const OpRules> builtin_op_rules() {
  static std::once_flag once;
  static std::shared_ptr<const OpRules> builtin;
  std::call_once(once, [] {
    builtin = std::make_shared<const OpRules>();
    if (auto dir = builtin_schemas_dir())
      if (auto loaded = load_op_rules({*dir})) builtin = *loaded;
  });
  return builtin;
}

}  // namespace shapeprop
