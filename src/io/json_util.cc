#include "chalk/io/json_util.h"

#include <cmath>
#include <limits>
#include <vector>

#include "chalk/base/error.h"

namespace chalk::detail {

namespace {

/// The path of the value the parser is at, kept from the callback's events: one entry per
/// open object or array, holding the last key (objects) or the next index (arrays).
class PathTracker {
 public:
  bool on_event(int depth, json::parse_event_t event, json& parsed, const std::string& where) {
    using E = json::parse_event_t;
    switch (event) {
      case E::object_start:
      case E::array_start:
        if (depth >= max_json_depth) {
          std::string field = path();  // the field holding the deep value, without its [0][0]...
          while (!field.empty() && field.back() == ']') field.erase(field.rfind('['));
          throw InputError(field.empty() ? where : where + ": " + field, "JSON nested deeper than " + std::to_string(max_json_depth) +
                                                      " levels; chalk's formats nest at most 4");
        }
        frames_.push_back({event == E::array_start, "", 0});
        break;
      case E::key:
        if (!frames_.empty()) frames_.back().key = parsed.get<std::string>();
        break;
      case E::object_end:
      case E::array_end:
        if (!frames_.empty()) frames_.pop_back();
        advance();
        break;
      case E::value:
        advance();
        break;
    }
    return true;
  }

  /// "hidden_size", "layers[2].attention.head_dim"; "" at the top level.
  std::string path() const {
    std::string p;
    for (const auto& f : frames_) {
      // Appended piece by piece: GCC 12 misreports `"[" + std::to_string(...)` under
      // -Wrestrict once this function is inlined (-fno-semantic-interposition).
      if (f.array) {
        p += '[';
        p += std::to_string(f.index);
        p += ']';
      } else if (!f.key.empty()) {
        if (!p.empty()) p += '.';
        p += f.key;
      }
    }
    return p;
  }

 private:
  struct Frame {
    bool array;
    std::string key;
    size_t index;
  };
  void advance() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json(std::string_view text, const std::string& where) {
  PathTracker tracker;
  try {
    return json::parse(text.begin(), text.end(), [&](int depth, json::parse_event_t event, json& parsed) {
      return tracker.on_event(depth, event, parsed, where);
    });
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    throw InputError(where, "malformed JSON: " + (pos == std::string::npos ? msg : msg.substr(pos)));
  } catch (const json::out_of_range& e) {
    // nlohmann rejects a number that overflows a double (1e400) as out_of_range 406.
    const std::string path = tracker.path();
    const std::string at = path.empty() ? where : where + ": " + path;
    if (e.id == 406) throw InputError(at, "number out of range of a double (|x| > 1.8e308)");
    throw InputError(at, std::string("malformed JSON: ") + e.what());
  } catch (const json::exception& e) {
    throw InputError(where, std::string("malformed JSON: ") + e.what());
  }
}

std::string describe(const json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "a list";
  // A scalar: no recursion. Invalid UTF-8 (never from parse_json, which checks it) is
  // replaced rather than thrown.
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr size_t kMax = 60;
  if (s.size() > kMax) s = s.substr(0, kMax) + "...";
  return s;
}

Obj::Obj(const json& j, std::string path) : j_(j), path_(std::move(path)) {
  if (!j_.is_object()) {
    std::string where = path_;
    while (!where.empty() && (where.back() == ' ' || where.back() == ':' || where.back() == '.')) where.pop_back();
    throw InputError(where.empty() ? "input" : where, "expected a JSON object, got " + std::string(j_.type_name()));
  }
}

bool Obj::has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

void Obj::only(std::initializer_list<std::string_view> allowed) const {
  for (auto it = j_.begin(); it != j_.end(); ++it) {
    bool ok = false;
    for (auto a : allowed) ok = ok || a == it.key();
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw InputError(path_ + it.key(), "unknown field; expected one of: " + list);
    }
  }
}

const json& Obj::raw(const char* key) const {
  if (!has(key)) throw InputError(field(key), "missing required field");
  return j_.at(key);
}

std::optional<int64_t> Obj::opt_integer(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = j_.at(key);
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw InputError(field(key), "integer out of range, got " + describe(v));
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9e15) return static_cast<int64_t>(x);
  }
  throw InputError(field(key), "expected an integer, got " + describe(v));
}

std::optional<int64_t> Obj::opt_integer_in(const char* key, int64_t lo, int64_t hi) const {
  const auto v = opt_integer(key);
  if (v && (*v < lo || *v > hi)) {
    throw InputError(field(key), "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(*v));
  }
  return v;
}

int64_t Obj::integer_in(const char* key, int64_t lo, int64_t hi) const {
  auto v = opt_integer_in(key, lo, hi);
  if (!v) throw InputError(field(key), "missing required field");
  return *v;
}

int64_t Obj::integer(const char* key) const {
  auto v = opt_integer(key);
  if (!v) throw InputError(field(key), "missing required field");
  return *v;
}

std::optional<double> Obj::opt_number(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = j_.at(key);
  if (!v.is_number()) throw InputError(field(key), "expected a number, got " + describe(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw InputError(field(key), "expected a finite number");
  return x;
}

double Obj::number(const char* key) const {
  auto v = opt_number(key);
  if (!v) throw InputError(field(key), "missing required field");
  return *v;
}

std::optional<std::string> Obj::opt_string(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = j_.at(key);
  if (!v.is_string()) throw InputError(field(key), "expected a string, got " + describe(v));
  return v.get<std::string>();
}

std::string Obj::string(const char* key) const {
  auto v = opt_string(key);
  if (!v) throw InputError(field(key), "missing required field");
  return *v;
}

std::optional<bool> Obj::opt_boolean(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = j_.at(key);
  if (!v.is_boolean()) throw InputError(field(key), "expected true or false, got " + describe(v));
  return v.get<bool>();
}

Obj Obj::object(const char* key) const { return Obj(raw(key), path_ + key + "."); }

std::optional<Obj> Obj::opt_object(const char* key) const {
  if (!has(key)) return std::nullopt;
  return Obj(j_.at(key), path_ + key + ".");
}

}  // namespace chalk::detail
