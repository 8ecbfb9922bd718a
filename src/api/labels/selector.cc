#include "api/labels/selector.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "api/validation/names.h"

namespace batchd::api::labels {
namespace {

// ---- Requirement construction (Kubernetes' NewRequirement) -----------------

std::string JoinSemicolon(const validation::Messages& msgs) {
  std::string out;
  for (size_t i = 0; i < msgs.size(); ++i) out += (i ? "; " : "") + msgs[i];
  return out;
}

bool ParseInt64(std::string_view s, int64_t* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// Validates a requirement; `path` is the field prefix ("" prints as "<nil>",
// reproducing Kubernetes' messages for query-string selectors).
ErrorList ValidateRequirement(const Requirement& r, const std::string& path) {
  ErrorList errs;
  auto child = [&path](std::string_view name) {
    return path.empty() ? Path(std::string(name)) : Path(path).Child(name);
  };
  validation::Messages key_errs = validation::IsQualifiedName(r.key);
  if (!key_errs.empty()) errs.push_back(Invalid(child("key"), r.key, JoinSemicolon(key_errs)));
  Path values = child("values");
  Json vals = r.values;
  switch (r.op) {
    case Operator::kIn:
    case Operator::kNotIn:
      if (r.values.empty()) {
        errs.push_back(
            Invalid(values, vals, "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case Operator::kEquals:
    case Operator::kDoubleEquals:
    case Operator::kNotEquals:
      if (r.values.size() != 1) {
        errs.push_back(
            Invalid(values, vals, "exact-match compatibility requires one single value"));
      }
      break;
    case Operator::kExists:
    case Operator::kDoesNotExist:
      if (!r.values.empty()) {
        errs.push_back(
            Invalid(values, vals, "values set must be empty for exists and does not exist"));
      }
      break;
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      if (r.values.size() != 1) {
        errs.push_back(
            Invalid(values, vals, "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (size_t i = 0; i < r.values.size(); ++i) {
        int64_t v = 0;
        if (!ParseInt64(r.values[i], &v)) {
          errs.push_back(Invalid(values.Index(i), r.values[i],
                                 "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
    }
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    validation::Messages v_errs = validation::IsValidLabelValue(r.values[i]);
    if (!v_errs.empty()) {
      errs.push_back(Invalid(values.Index(i).Key(r.key), r.values[i], JoinSemicolon(v_errs)));
    }
  }
  return errs;
}

void SortByKey(std::vector<Requirement>& reqs) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
}

void SortUnique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// ---- Lexer -------------------------------------------------------------------

enum class Token {
  kError,
  kEnd,
  kClosePar,
  kComma,
  kNot,
  kDoubleEquals,
  kEquals,
  kGreater,
  kIdentifier,
  kIn,
  kLess,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Item {
  Token tok;
  std::string literal;
};

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsSpecial(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::optional<Token> KnownToken(std::string_view s) {
  static const std::pair<std::string_view, Token> kTokens[] = {
      {")", Token::kClosePar},      {",", Token::kComma},   {"!", Token::kNot},
      {"==", Token::kDoubleEquals}, {"=", Token::kEquals},  {">", Token::kGreater},
      {"in", Token::kIn},           {"<", Token::kLess},    {"!=", Token::kNotEquals},
      {"notin", Token::kNotIn},     {"(", Token::kOpenPar},
  };
  for (const auto& [text, tok] : kTokens) {
    if (s == text) return tok;
  }
  return std::nullopt;
}

std::vector<Item> Lex(std::string_view s) {
  std::vector<Item> items;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && IsWhitespace(s[pos])) ++pos;
    if (pos >= s.size()) break;
    if (IsSpecial(s[pos])) {
      // Longest run of special characters that still forms a known token.
      std::string buf;
      std::optional<Item> last;
      while (pos < s.size() && IsSpecial(s[pos])) {
        buf += s[pos];
        if (std::optional<Token> t = KnownToken(buf)) {
          last = Item{*t, buf};
        } else if (last) {
          break;
        }
        ++pos;
      }
      items.push_back(last ? *last
                           : Item{Token::kError, "error expected: keyword found '" + buf + "'"});
      continue;
    }
    size_t start = pos;
    while (pos < s.size() && !IsSpecial(s[pos]) && !IsWhitespace(s[pos])) ++pos;
    std::string word(s.substr(start, pos - start));
    std::optional<Token> t = KnownToken(word);
    items.push_back(Item{t ? *t : Token::kIdentifier, word});
  }
  items.push_back(Item{Token::kEnd, ""});
  return items;
}

// ---- Parser (recursive descent over the token list) -------------------------

enum class Context { kKeyAndOperator, kValues };

class Parser {
 public:
  explicit Parser(std::string_view s) : items_(Lex(s)) {}

  absl::StatusOr<std::vector<Requirement>> Parse();

 private:
  // In the values context `in` / `notin` are plain identifiers.
  Item Peek(Context ctx) const { return Adjust(items_[pos_], ctx); }
  Item Next(Context ctx) { return Adjust(items_[pos_++], ctx); }
  static Item Adjust(Item it, Context ctx) {
    if (ctx == Context::kValues && (it.tok == Token::kIn || it.tok == Token::kNotIn)) {
      it.tok = Token::kIdentifier;
    }
    return it;
  }

  absl::StatusOr<Requirement> ParseRequirement();
  absl::StatusOr<Operator> ParseOperator();
  absl::StatusOr<std::vector<std::string>> ParseValues();
  absl::StatusOr<std::vector<std::string>> ParseIdentifiersList();
  absl::StatusOr<std::vector<std::string>> ParseExactValue();

  std::vector<Item> items_;
  size_t pos_ = 0;
};

absl::Status Error(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

absl::StatusOr<std::vector<Requirement>> Parser::Parse() {
  std::vector<Requirement> reqs;
  while (true) {
    Item it = Peek(Context::kValues);
    if (it.tok == Token::kEnd) return reqs;
    if (it.tok != Token::kIdentifier && it.tok != Token::kNot) {
      return Error("found '" + it.literal + "', expected: !, identifier, or 'end of string'");
    }
    absl::StatusOr<Requirement> r = ParseRequirement();
    if (!r.ok()) return Error("unable to parse requirement: " + std::string(r.status().message()));
    reqs.push_back(*std::move(r));
    Item sep = Next(Context::kValues);
    if (sep.tok == Token::kEnd) return reqs;
    if (sep.tok != Token::kComma) {
      return Error("found '" + sep.literal + "', expected: ',' or 'end of string'");
    }
    Item after = Peek(Context::kValues);
    if (after.tok != Token::kIdentifier && after.tok != Token::kNot) {
      return Error("found '" + after.literal + "', expected: identifier after ','");
    }
  }
}

absl::StatusOr<Requirement> Parser::ParseRequirement() {
  Requirement r;
  Item it = Next(Context::kValues);
  bool negated = it.tok == Token::kNot;
  if (negated) it = Next(Context::kValues);
  if (it.tok != Token::kIdentifier)
    return Error("found '" + it.literal + "', expected: identifier");
  validation::Messages key_errs = validation::IsQualifiedName(it.literal);
  if (!key_errs.empty()) {
    return Error(Invalid(Path("<nil>"), it.literal, JoinSemicolon(key_errs)).Message());
  }
  r.key = it.literal;
  Token ahead = Peek(Context::kValues).tok;
  if (negated || ahead == Token::kEnd || ahead == Token::kComma) {
    r.op = negated ? Operator::kDoesNotExist : Operator::kExists;
  } else {
    absl::StatusOr<Operator> op = ParseOperator();
    if (!op.ok()) return op.status();
    r.op = *op;
    absl::StatusOr<std::vector<std::string>> values =
        (r.op == Operator::kIn || r.op == Operator::kNotIn) ? ParseValues() : ParseExactValue();
    if (!values.ok()) return values.status();
    r.values = *std::move(values);
  }
  ErrorList errs = ValidateRequirement(r, "");
  if (!errs.empty()) return Error(JoinMessages(errs));
  return r;
}

absl::StatusOr<Operator> Parser::ParseOperator() {
  Item it = Next(Context::kKeyAndOperator);
  switch (it.tok) {
    case Token::kIn:
      return Operator::kIn;
    case Token::kNotIn:
      return Operator::kNotIn;
    case Token::kEquals:
      return Operator::kEquals;
    case Token::kDoubleEquals:
      return Operator::kDoubleEquals;
    case Token::kNotEquals:
      return Operator::kNotEquals;
    case Token::kGreater:
      return Operator::kGreaterThan;
    case Token::kLess:
      return Operator::kLessThan;
    default:
      return Error("found '" + it.literal + "', expected: in, notin, =, ==, !=, gt, lt");
  }
}

absl::StatusOr<std::vector<std::string>> Parser::ParseValues() {
  Item open = Next(Context::kValues);
  if (open.tok != Token::kOpenPar) return Error("found '" + open.literal + "' expected: '('");
  Item it = Peek(Context::kValues);
  if (it.tok == Token::kClosePar) {
    Next(Context::kValues);
    return std::vector<std::string>{""};
  }
  if (it.tok != Token::kIdentifier && it.tok != Token::kComma) {
    return Error("found '" + it.literal + "', expected: ',', ')' or identifier");
  }
  absl::StatusOr<std::vector<std::string>> values = ParseIdentifiersList();
  if (!values.ok()) return values;
  if (Next(Context::kValues).tok != Token::kClosePar) {
    return Error("found '" + it.literal + "', expected: ')'");
  }
  return values;
}

absl::StatusOr<std::vector<std::string>> Parser::ParseIdentifiersList() {
  std::vector<std::string> values;
  while (true) {
    Item it = Next(Context::kValues);
    if (it.tok == Token::kIdentifier) {
      values.push_back(it.literal);
      Item ahead = Peek(Context::kValues);
      if (ahead.tok == Token::kComma) continue;
      if (ahead.tok == Token::kClosePar) break;
      return Error("found '" + ahead.literal + "', expected: ',' or ')'");
    }
    if (it.tok != Token::kComma) {
      return Error("found '" + it.literal + "', expected: ',', or identifier");
    }
    // A comma with nothing before/after it stands for the empty value.
    if (values.empty()) values.push_back("");
    Token ahead = Peek(Context::kValues).tok;
    if (ahead == Token::kClosePar || ahead == Token::kComma) values.push_back("");
    if (ahead == Token::kClosePar) break;
  }
  SortUnique(values);
  return values;
}

absl::StatusOr<std::vector<std::string>> Parser::ParseExactValue() {
  Token ahead = Peek(Context::kValues).tok;
  if (ahead == Token::kEnd || ahead == Token::kComma) return std::vector<std::string>{""};
  Item it = Next(Context::kValues);
  if (it.tok == Token::kIdentifier) return std::vector<std::string>{it.literal};
  return Error("found '" + it.literal + "', expected: identifier");
}

// ---- Matching -------------------------------------------------------------------

template <typename Lookup>
bool RequirementMatches(const Requirement& r, const Lookup& lookup) {
  std::optional<std::string_view> v = lookup(r.key);
  auto has = [&r](std::string_view x) {
    return std::find(r.values.begin(), r.values.end(), x) != r.values.end();
  };
  switch (r.op) {
    case Operator::kIn:
    case Operator::kEquals:
    case Operator::kDoubleEquals:
      return v && has(*v);
    case Operator::kNotIn:
    case Operator::kNotEquals:
      return !v || !has(*v);
    case Operator::kExists:
      return v.has_value();
    case Operator::kDoesNotExist:
      return !v.has_value();
    case Operator::kGreaterThan:
    case Operator::kLessThan: {
      int64_t have = 0, want = 0;
      if (!v || r.values.size() != 1 || !ParseInt64(*v, &have) || !ParseInt64(r.values[0], &want)) {
        return false;
      }
      return r.op == Operator::kGreaterThan ? have > want : have < want;
    }
  }
  return false;
}

std::optional<std::string_view> LookupMap(const std::map<std::string, std::string>& m,
                                          std::string_view key) {
  auto it = m.find(std::string(key));
  if (it == m.end()) return std::nullopt;
  return std::string_view(it->second);
}

}  // namespace

bool Requirement::Matches(const std::map<std::string, std::string>& labels) const {
  return RequirementMatches(*this, [&labels](std::string_view k) { return LookupMap(labels, k); });
}

std::string Requirement::String() const {
  std::string out = op == Operator::kDoesNotExist ? "!" + key : key;
  switch (op) {
    case Operator::kExists:
    case Operator::kDoesNotExist:
      return out;
    case Operator::kEquals:
      out += "=";
      break;
    case Operator::kDoubleEquals:
      out += "==";
      break;
    case Operator::kNotEquals:
      out += "!=";
      break;
    case Operator::kIn:
      out += " in (";
      break;
    case Operator::kNotIn:
      out += " notin (";
      break;
    case Operator::kGreaterThan:
      out += ">";
      break;
    case Operator::kLessThan:
      out += "<";
      break;
  }
  std::vector<std::string> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) out += (i ? "," : "") + sorted[i];
  if (op == Operator::kIn || op == Operator::kNotIn) out += ")";
  return out;
}

LabelSelector LabelSelector::Nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

LabelSelector LabelSelector::FromSet(const std::map<std::string, std::string>& set) {
  LabelSelector s;
  for (const auto& [k, v] : set) s.requirements_.push_back(Requirement{k, Operator::kEquals, {v}});
  return s;
}

absl::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view selector) {
  Parser parser(selector);
  absl::StatusOr<std::vector<Requirement>> reqs = parser.Parse();
  if (!reqs.ok()) return reqs.status();
  LabelSelector s;
  s.requirements_ = *std::move(reqs);
  SortByKey(s.requirements_);
  return s;
}

absl::StatusOr<LabelSelector> LabelSelector::FromJson(const Json& selector) {
  if (selector.is_null()) return Nothing();
  ErrorList errs = ValidateLabelSelector(selector, Path());
  if (!errs.empty()) return absl::InvalidArgumentError(JoinMessages(errs));
  LabelSelector s;
  if (auto it = selector.find("matchLabels"); it != selector.end() && it->is_object()) {
    for (auto kv = it->begin(); kv != it->end(); ++kv) {
      s.requirements_.push_back(Requirement{kv.key(), Operator::kEquals, {kv->get<std::string>()}});
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && it->is_array()) {
    for (const Json& e : *it) {
      Requirement r;
      r.key = e.value("key", "");
      std::string op = e.value("operator", "");
      r.op = op == "In"       ? Operator::kIn
             : op == "NotIn"  ? Operator::kNotIn
             : op == "Exists" ? Operator::kExists
                              : Operator::kDoesNotExist;
      if (auto v = e.find("values"); v != e.end() && v->is_array()) {
        for (const Json& x : *v) r.values.push_back(x.get<std::string>());
      }
      s.requirements_.push_back(std::move(r));
    }
  }
  SortByKey(s.requirements_);
  return s;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  if (nothing_) return false;
  for (const Requirement& r : requirements_) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

bool LabelSelector::Matches(const Json& labels_object) const {
  if (nothing_) return false;
  auto lookup = [&labels_object](std::string_view k) -> std::optional<std::string_view> {
    if (!labels_object.is_object()) return std::nullopt;
    auto it = labels_object.find(k);
    if (it == labels_object.end() || !it->is_string()) return std::nullopt;
    return std::string_view(it->get_ref<const std::string&>());
  };
  for (const Requirement& r : requirements_) {
    if (!RequirementMatches(r, lookup)) return false;
  }
  return true;
}

std::string LabelSelector::String() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    out += (i ? "," : "") + requirements_[i].String();
  }
  return out;
}

std::optional<std::string> LabelSelector::RequiresExactMatch(std::string_view key) const {
  for (const Requirement& r : requirements_) {
    if (r.key != key) continue;
    bool exact =
        r.op == Operator::kEquals || r.op == Operator::kDoubleEquals || r.op == Operator::kIn;
    if (exact && r.values.size() == 1) return r.values[0];
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace batchd::api::labels
