#include "chalk/io/json_util.h"

#include <cmath>

#include "chalk/base/error.h"

namespace chalk::detail {

json parse_json(std::string_view text, const std::string& where) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    const auto pos = msg.find("parse error");
    throw InputError(where, "malformed JSON: " + (pos == std::string::npos ? msg : msg.substr(pos)));
  }
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
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9e15) return static_cast<int64_t>(x);
  }
  throw InputError(field(key), "expected an integer, got " + v.dump());
}

int64_t Obj::integer(const char* key) const {
  auto v = opt_integer(key);
  if (!v) throw InputError(field(key), "missing required field");
  return *v;
}

std::optional<double> Obj::opt_number(const char* key) const {
  if (!has(key)) return std::nullopt;
  const json& v = j_.at(key);
  if (!v.is_number()) throw InputError(field(key), "expected a number, got " + v.dump());
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
  if (!v.is_string()) throw InputError(field(key), "expected a string, got " + v.dump());
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
  if (!v.is_boolean()) throw InputError(field(key), "expected true or false, got " + v.dump());
  return v.get<bool>();
}

Obj Obj::object(const char* key) const { return Obj(raw(key), path_ + key + "."); }

std::optional<Obj> Obj::opt_object(const char* key) const {
  if (!has(key)) return std::nullopt;
  return Obj(j_.at(key), path_ + key + ".");
}

}  // namespace chalk::detail
