/// @file
/// Settings as text and back: a struct of plain values (a model's config, a
/// run's training options) written as "key=value key=value ..." and read back
/// through one table of its fields. Each field knows its key, how to print its
/// value and how to read it (strictly: base/parse.h), so a struct of
/// settings is described once, and every such struct reads and fails the same
/// way:
///
///   op: malformed entry "dim" in "dim layers=2"         (no '=')
///   op: unknown key "depth"
///   op: bad value "sixty" for dim (expected ...)         (a number that is not one)
///   op: positional must be learned or sinusoidal, got rotary   (a choice)
///
/// The table says what the struct is; nothing else needs to: printing,
/// reading and comparing two structs field by field all walk it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/parse.h"

namespace ember {

/// One field of a struct S: its key, its value as text, and its value read
/// from text (an ember::Error naming op and the key when the text is bad).
template <typename S>
struct TextField {
  std::string key;
  std::function<std::string(const S&)> print;
  std::function<void(S&, const std::string& text, const char* op)> read;
};

/// "key=value" entries of text, split at whitespace, in order; an entry
/// without '=' is an error naming op, the entry and the text.
std::vector<std::pair<std::string, std::string>> key_values(const std::string& text, const char* op);
/// A number as the shortest text that reads back as exactly the same double
/// ("0.1", "3e-05", "1000", "0.00030000000000000003" for 0.003 / 10, "-0",
/// "5e-324"): what is stored is what is read, to the last bit.
std::string real_text(double v);
/// The names of a choice as a list: "a", "a or b", "a, b or c".
std::string one_of(const std::vector<std::string>& names);

// ---- the kinds of field ----

template <typename S>
TextField<S> int_field(std::string key, int64_t S::*member) {
  return {key, [member](const S& s) { return std::to_string(s.*member); },
          [member, key](S& s, const std::string& text, const char* op) { s.*member = parse_int64(text, op, key); }};
}

template <typename S>
TextField<S> uint_field(std::string key, uint64_t S::*member) {
  return {key, [member](const S& s) { return std::to_string(s.*member); },
          [member, key](S& s, const std::string& text, const char* op) { s.*member = parse_uint64(text, op, key); }};
}

/// A double, printed by real_text: it reads back bit for bit (a resumed run
/// must compute with the very numbers the saved one did).
template <typename S>
TextField<S> real_field(std::string key, double S::*member) {
  return {key, [member](const S& s) { return real_text(s.*member); },
          [member, key](S& s, const std::string& text, const char* op) { s.*member = parse_double(text, op, key); }};
}

/// One of a few named values (an enum, a bool, a dtype): printed as its name,
/// read back from it. A value outside the list prints as "?", which no read
/// accepts.
template <typename S, typename T>
TextField<S> choice_field(std::string key, T S::*member, std::vector<std::pair<std::string, T>> choices) {
  auto print = [member, choices](const S& s) -> std::string {
    for (const auto& [name, value] : choices)
      if (s.*member == value) return name;
    return "?";
  };
  auto read = [member, key, choices](S& s, const std::string& text, const char* op) {
    std::vector<std::string> names;
    for (const auto& [name, value] : choices) {
      if (text == name) {
        s.*member = value;
        return;
      }
      names.push_back(name);
    }
    EMBER_FAIL(op, key << " must be " << one_of(names) << ", got " << text);
  };
  return {key, print, read};
}

// ---- the table ----

/// Every field of S, in the order they are printed. `op` names S in errors
/// ("GPTConfig", "TrainOptions").
template <typename S>
class TextFields {
 public:
  TextFields(const char* op, std::vector<TextField<S>> fields) : op_(op), fields_(std::move(fields)) {}

  /// "key=value key=value ...": every field, in the table's order, except
  /// one that prints nothing (an option added later, at its default: the
  /// text stays what it was before the option existed).
  std::string to_string(const S& s) const {
    std::string out;
    for (const TextField<S>& f : fields_) {
      std::string value = f.print(s);
      if (!value.empty()) out += (out.empty() ? "" : " ") + f.key + "=" + value;
    }
    return out;
  }
  /// S{} with the fields that `text` gives (in any order; a key given twice:
  /// the last wins). An unknown key or a bad value is an error naming it.
  S from_string(const std::string& text) const {
    S s{};
    for (const auto& [key, value] : key_values(text, op_)) field(key).read(s, value, op_);
    return s;
  }
  /// The field with this key; an error naming it when there is none.
  const TextField<S>& field(const std::string& key) const {
    for (const TextField<S>& f : fields_)
      if (f.key == key) return f;
    EMBER_FAIL(op_, "unknown key \"" << key << "\"");
  }
  const std::vector<TextField<S>>& fields() const { return fields_; }

 private:
  const char* op_;
  std::vector<TextField<S>> fields_;
};

}  // namespace ember
