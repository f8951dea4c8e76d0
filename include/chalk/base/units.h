// Dimensioned quantities for chalk (DESIGN.md section 3, "Units").
//
// A Quantity<D> is a double in SI base units (seconds, bytes, FLOPs, US dollars,
// tokens) tagged at compile time with its dimension D, so that a time cannot be
// added to a byte count and a bandwidth times a time is a byte count. Constructors
// from other units (GB, TB/s, TFLOP/s, $/hour, ms) are the named helpers below;
// GB = 1e9 bytes (GiB only where written so).
#pragma once

#include <compare>

namespace chalk {

/// Exponents of the five base dimensions.
struct Dim {
  int time = 0;   ///< seconds
  int bytes = 0;  ///< bytes
  int flop = 0;   ///< floating-point operations (1 multiply-add = 2 FLOPs)
  int usd = 0;    ///< US dollars
  int token = 0;  ///< tokens

  constexpr Dim operator+(Dim o) const {
    return {time + o.time, bytes + o.bytes, flop + o.flop, usd + o.usd, token + o.token};
  }
  constexpr Dim operator-(Dim o) const {
    return {time - o.time, bytes - o.bytes, flop - o.flop, usd - o.usd, token - o.token};
  }
  constexpr bool operator==(const Dim&) const = default;
};

/// A value in SI base units with dimension D.
template <Dim D>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value_in_si_units) : value_(value_in_si_units) {}
  /// The value in SI base units (s, byte, FLOP, USD, token and their products).
  constexpr double value() const { return value_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity& operator+=(Quantity o) { value_ += o.value_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value_ -= o.value_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k); }
  constexpr Quantity& operator*=(double k) { value_ *= k; return *this; }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double value_ = 0.0;
};

template <Dim D>
constexpr Quantity<D> operator*(double k, Quantity<D> q) { return q * k; }

template <Dim A, Dim B>
constexpr auto operator*(Quantity<A> a, Quantity<B> b) {
  if constexpr (A + B == Dim{}) return a.value() * b.value();
  else return Quantity<A + B>(a.value() * b.value());
}

template <Dim A, Dim B>
constexpr auto operator/(Quantity<A> a, Quantity<B> b) {
  if constexpr (A - B == Dim{}) return a.value() / b.value();
  else return Quantity<A - B>(a.value() / b.value());
}

template <Dim D>
constexpr auto operator/(double k, Quantity<D> q) { return Quantity<Dim{} - D>(k / q.value()); }

template <Dim D>
constexpr Quantity<D> max(Quantity<D> a, Quantity<D> b) { return a < b ? b : a; }
template <Dim D>
constexpr Quantity<D> min(Quantity<D> a, Quantity<D> b) { return a < b ? a : b; }

using Seconds = Quantity<Dim{.time = 1}>;
using Bytes = Quantity<Dim{.bytes = 1}>;
using Flops = Quantity<Dim{.flop = 1}>;
using Usd = Quantity<Dim{.usd = 1}>;
using Tokens = Quantity<Dim{.token = 1}>;
using FlopsPerSecond = Quantity<Dim{.time = -1, .flop = 1}>;
using BytesPerSecond = Quantity<Dim{.time = -1, .bytes = 1}>;
using UsdPerSecond = Quantity<Dim{.time = -1, .usd = 1}>;
using TokensPerSecond = Quantity<Dim{.time = -1, .token = 1}>;
using UsdPerToken = Quantity<Dim{.usd = 1, .token = -1}>;
using BytesPerToken = Quantity<Dim{.bytes = 1, .token = -1}>;
using FlopsPerToken = Quantity<Dim{.flop = 1, .token = -1}>;
using FlopsPerByte = Quantity<Dim{.bytes = -1, .flop = 1}>;
using UsdPerByteSecond = Quantity<Dim{.time = -1, .bytes = -1, .usd = 1}>;

// Constructors from the units people write. GB = 1e9 bytes.
constexpr Seconds seconds(double s) { return Seconds(s); }
constexpr Seconds milliseconds(double ms) { return Seconds(ms * 1e-3); }
constexpr Seconds microseconds(double us) { return Seconds(us * 1e-6); }
constexpr Seconds hours(double h) { return Seconds(h * 3600.0); }
constexpr Bytes bytes(double b) { return Bytes(b); }
constexpr Bytes gigabytes(double gb) { return Bytes(gb * 1e9); }
constexpr Bytes gibibytes(double gib) { return Bytes(gib * 1073741824.0); }
constexpr Flops flops(double f) { return Flops(f); }
constexpr Tokens tokens(double t) { return Tokens(t); }
constexpr Usd usd(double d) { return Usd(d); }
constexpr FlopsPerSecond teraflops_per_second(double tf) { return FlopsPerSecond(tf * 1e12); }
constexpr BytesPerSecond gigabytes_per_second(double gbs) { return BytesPerSecond(gbs * 1e9); }
constexpr BytesPerSecond terabytes_per_second(double tbs) { return BytesPerSecond(tbs * 1e12); }
constexpr UsdPerSecond usd_per_hour(double d) { return UsdPerSecond(d / 3600.0); }
constexpr UsdPerToken usd_per_million_tokens(double d) { return UsdPerToken(d / 1e6); }

// Readers into the units people read.
constexpr double to_ms(Seconds t) { return t.value() * 1e3; }
constexpr double to_us(Seconds t) { return t.value() * 1e6; }
constexpr double to_gb(Bytes b) { return b.value() / 1e9; }
constexpr double to_tflop_per_s(FlopsPerSecond f) { return f.value() / 1e12; }
constexpr double to_gb_per_s(BytesPerSecond b) { return b.value() / 1e9; }
constexpr double to_tb_per_s(BytesPerSecond b) { return b.value() / 1e12; }
constexpr double to_usd_per_hour(UsdPerSecond d) { return d.value() * 3600.0; }
constexpr double to_usd_per_mtok(UsdPerToken d) { return d.value() * 1e6; }

}  // namespace chalk
