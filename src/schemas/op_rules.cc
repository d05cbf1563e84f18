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

// The shipped folder, as load_op_rules found it: its domains by the names of its folders.
struct OpRules::Deferred {
  std::filesystem::path folder;
  std::filesystem::path shown;
  std::set<std::string> domains;  // canonical
  std::once_flag once;
  Folder rules;       // once listed
  std::string error;  // or why it did not list
  std::atomic<bool> listed{false};
};

const schemas::OpRule* OpRules::read(const Entry& entry, const Key& key) {
  if (!entry.file) return entry.rule.get();
  entry.file->read_rules();
  auto found = entry.file->rules.find(key);
  return found == entry.file->rules.end() ? nullptr : found->second.get();
}

namespace {

// The domain a folder of the shipped folder holds: its name, `onnx` the default domain.
std::string domain_of_folder(const std::string& name) {
  return name == "onnx" ? std::string() : FunctionId::canonical_domain(name);
}

// The domains of a folder that holds only folders, one per domain, and rule files in them:
// nullopt for a folder with a rule file of its own (whose domains only its text tells), or
// one that does not list (the listing at load reports why).
std::optional<std::set<std::string>> domain_folders(const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::set<std::string> domains;
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) {
      domains.insert(domain_of_folder(it->path().filename().string()));
    } else if (it->path().extension() == ".rule") {
      return std::nullopt;
    }
  }
  if (ec || domains.empty()) return std::nullopt;
  return domains;
}

}  // namespace

const OpRules::Folder* OpRules::deferred_rules() const {
  if (!deferred_) return nullptr;
  Deferred& d = *deferred_;
  std::call_once(d.once, [&d] {
    d.listed = true;
    auto loaded = load_folder(d.folder, d.shown, /*deferred=*/true);
    if (!loaded) {
      d.error = loaded.error().str();
      return;
    }
    // Each file states ops of its folder's domain only: a lookup of another domain would
    // not list the folder (the tests check the shipped files the same way).
    const std::string prefix = d.shown.generic_string() + "/";
    for (const auto& [key, entry] : loaded->rules) {
      const std::string& file = entry.file ? entry.file->name : entry.rule->where.file;
      const std::string top = file.substr(prefix.size(), file.find('/', prefix.size()) - prefix.size());
      if (std::get<0>(key) != domain_of_folder(top)) {
        d.error = file + " states an op of domain '" + std::get<0>(key) + "', outside its folder's";
        return;
      }
    }
    d.rules = std::move(*loaded);
  });
  if (!d.error.empty()) throw std::runtime_error("the shipped rules do not load: " + d.error);
  return &d.rules;
}

const schemas::OpRule* OpRules::rule_of(const Key& key) const {
  if (auto it = rules_.find(key); it != rules_.end()) return read(it->second, key);
  if (!deferred_ || !deferred_->domains.count(std::get<0>(key))) return nullptr;
  const Folder* shipped = deferred_rules();
  auto it = shipped->rules.find(key);
  return it == shipped->rules.end() ? nullptr : read(it->second, key);
}

const schemas::OpRule* OpRules::find(const std::string& domain, const std::string& op) const {
  return rule_of({FunctionId::canonical_domain(domain), op, 0});
}

const schemas::OpRule* OpRules::find_version(const std::string& op, int since) const {
  return rule_of({std::string(), op, since});
}

namespace {

template <class Map>
std::set<typename Map::key_type> keys_of(const Map& rules, const Map* deferred) {
  std::set<typename Map::key_type> keys;
  for (const auto& [key, entry] : rules) keys.insert(key);
  if (deferred)
    for (const auto& [key, entry] : *deferred) keys.insert(key);
  return keys;
}

}  // namespace

size_t OpRules::size() const {
  const Folder* shipped = deferred_rules();
  return keys_of(rules_, shipped ? &shipped->rules : nullptr).size();
}

std::vector<std::pair<std::string, std::string>> OpRules::list() const {
  const Folder* shipped = deferred_rules();
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& key : keys_of(rules_, shipped ? &shipped->rules : nullptr))
    if (const schemas::OpRule* rule = rule_of(key)) out.emplace_back(rule->versioned_name(), rule->where.file);
  return out;
}

bool OpRules::listed() const { return !deferred_ || deferred_->listed; }

size_t OpRules::unread_files() const {
  auto unread = [](const auto& files) {
    return static_cast<size_t>(std::count_if(files.begin(), files.end(), [](const auto& f) { return !f->read; }));
  };
  const Folder* shipped = deferred_rules();
  return unread(files_) + (shipped ? unread(shipped->files) : 0);
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

Result<OpRules::Folder> OpRules::load_folder(const std::filesystem::path& folder, const std::filesystem::path& shown,
                                             bool deferred) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().extension() == ".rule" && it->is_regular_file(ec)) paths.push_back(it->path());
  if (ec) return Diagnostic::error("cannot list schemas folder '" + folder.string() + "': " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<std::unique_ptr<File>> read;
  for (const auto& path : paths) {
    auto f = std::make_unique<File>();
    // (Lexically: each file was found under `folder`, by that path.)
    f->name = (shown / path.lexically_relative(folder)).generic_string();
    // By read() into its string (io's reader): an ifstream, an ostringstream and their
    // locales made half of reading the 28 shipped files.
    auto text = read_input(path, Limits{});
    if (!text) return Diagnostic::error("cannot read rule file (" + text.error().message + ")").in_file(f->name);
    f->text = std::move(*text);
    read.push_back(std::move(f));
  }
  Folder out;
  // Deferred: indexed by the files' `op` lines, when they index every file and name no
  // op twice; otherwise read here (where a second rule for an op is reported).
  bool index = deferred;
  std::set<Key> indexed;
  for (auto& f : read) {
    if (!index) break;
    auto keys = schemas::scan_rule_ops(f->text);
    if (!keys) index = false;
    for (const auto& key : keys ? *keys : std::vector<Key>())
      if (!indexed.insert(key).second) index = false;
    if (keys) f->keys = std::move(*keys);
  }
  if (index) {
    for (auto& f : read) {
      for (const auto& key : f->keys) out.rules[key] = Entry{nullptr, f.get()};
      out.files.push_back(std::move(f));
    }
    return out;
  }
  std::map<Key, std::string> in_this_folder;  // op -> where
  for (const auto& f : read) {
    auto parsed = schemas::parse_rules(f->text, f->name);
    if (!parsed) return parsed.error();
    for (auto& rule : *parsed) {
      Key key{rule.domain, rule.op, rule.since};
      auto [seen, fresh] = in_this_folder.try_emplace(key, rule.where.str());
      if (!fresh)
        return Diagnostic::error("a second rule for " + rule.versioned_name() + " (the first is at " + seen->second + ")")
            .in_file(rule.where.file, rule.where.line, rule.where.column);
      out.rules[key] = Entry{std::make_shared<const schemas::OpRule>(std::move(rule)), nullptr};
    }
  }
  return out;
}

Result<std::shared_ptr<const OpRules>> load_op_rules(const std::vector<std::filesystem::path>& folders,
                                                     const std::optional<std::filesystem::path>& deferred) {
  namespace fs = std::filesystem;
  auto rules = std::make_shared<OpRules>();
  const auto builtin = builtin_schemas_dir();
  for (size_t i = 0; i < folders.size(); ++i) {
    const fs::path& folder = folders[i];
    // Diagnostics name a shipped rule as schemas/..., a user's as the folder given.
    std::error_code same_ec;
    const bool shipped = builtin && fs::equivalent(folder, *builtin, same_ec);
    const fs::path shown = shipped ? fs::path("schemas") : folder;
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      return Diagnostic::error("schemas folder '" + folder.string() + "' does not exist or is not a folder");
    std::error_code deferred_ec;
    const bool is_deferred = deferred && fs::equivalent(folder, *deferred, deferred_ec);
    // The shipped folder first: its rules are the ones every later folder replaces, kept
    // apart and listed when a lookup needs them. (Its folders are named by the domains
    // their files state, which the tests check; another folder's names say nothing.)
    if (is_deferred && shipped && i == 0)
      if (auto domains = domain_folders(folder)) {
        rules->deferred_ = std::make_unique<OpRules::Deferred>();
        rules->deferred_->folder = folder;
        rules->deferred_->shown = shown;
        rules->deferred_->domains = std::move(*domains);
        continue;
      }
    auto loaded = OpRules::load_folder(folder, shown, is_deferred);
    if (!loaded) return loaded.error();
    for (auto& [key, entry] : loaded->rules) rules->rules_[key] = entry;  // over the folders before
    for (auto& f : loaded->files) rules->files_.push_back(std::move(f));
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
