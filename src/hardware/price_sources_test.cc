// Price sources (include/chalk/hardware/price_sources.h): keys read off the catalog's own
// source strings, and the warning a comparison across sources carries (review 5 M3).
#include "chalk/hardware/price_sources.h"

#include <gtest/gtest.h>

#include "chalk/io/io.h"

namespace chalk {
namespace {

TEST(PriceSources, KeyIsTheReferenceTagElseTheSourcesFirstWords) {
  EXPECT_EQ(price_source_key("SemiAnalysis H100 rental index, Mar 2026 [compux]"), "[compux]");
  EXPECT_EQ(price_source_key("Spheron $9.08/h per GB200 superchip (2 GPUs), 2026-03-17 [spheron]"), "[spheron]");
  // No tag at the end: up to " (" then three words.
  EXPECT_EQ(price_source_key("RunPod on-demand L4 $0.78/h (spot $0.44), Deploybase RunPod pricing guide"), "RunPod on-demand L4");
  EXPECT_EQ(price_source_key("Median MI300X rental across providers, $1.50 (TensorWave)"), "Median MI300X rental");
  EXPECT_EQ(price_source_key("TensorWave"), "TensorWave");
  EXPECT_EQ(price_source_key(""), "");
}

TEST(PriceSources, WarnsWhereAChoiceBetweenChipsReadsTwoSources) {
  // data/hardware: h100-sxm $2.35 [compux]; h200 $4.54 and b200 $6.03 [spheron].
  const SystemSpec h100 = load_system("h100-sxm"), h200 = load_system("h200"), b200 = load_system("b200");
  EXPECT_EQ(mixed_price_sources_warning({h200, b200}), "");  // one source
  EXPECT_EQ(mixed_price_sources_warning({h100}), "");
  const std::string w = mixed_price_sources_warning({h100, h200, b200});
  EXPECT_NE(w.find("come from 2 sources"), std::string::npos) << w;
  EXPECT_NE(w.find("[compux] h100-sxm $2.35; [spheron] h200 $4.54, b200 $6.03"), std::string::npos) << w;
  // A system without a price is not a source.
  SystemSpec unpriced = h100;
  unpriced.price_per_chip.reset();
  EXPECT_EQ(mixed_price_sources_warning({unpriced, h200}), "");
}

}  // namespace
}  // namespace chalk
