// fmt's compiled part, built into chalk_core from the Debian package's own implementation
// header (libfmt-dev's <fmt/format-inl.h>, the file its libfmt.so is built from), instead
// of linking libfmt.so. Why: Debian ships fmt only as a shared library, and a shared
// libfmt pulls in libstdc++.so, so `chalk` could not be linked statically; dynamic loading
// alone costs about 5 ms of every run on the 2-core CI machine (issue 11: `chalk decode`
// end to end within 10 ms; bench/bench_roofline.cc). Every other fmt function is a template
// or inline in the headers; the two instantiations below are the ones chalk's formatting
// needs from the compiled library (the linker names them when this file lacks them).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
