// The per-thread links of a system (system_links.h) against fresh ones, system after system.
#include "system_links.h"

#include <gtest/gtest.h>

#include "chalk/io/io.h"

namespace chalk {
namespace {

TEST(SystemLinks, EachSystemGetsItsOwnLinksInAnyOrder) {
  // Alternating systems: a key that missed a field would hand one system's links to the next.
  for (const char* name : {"h100-sxm", "tpu-v4", "mi300x", "h100-sxm", "b200", "tpu-v4"}) {
    const SystemSpec sys = load_system(name);
    const detail::SystemLinks& l = detail::system_links(sys);
    const LinkModel up = scale_up_link(sys);
    EXPECT_EQ(l.up.name, up.name) << name;
    EXPECT_EQ(l.up.bandwidth.value(), up.bandwidth.value()) << name;
    EXPECT_EQ(l.up.torus_dimensions, up.torus_dimensions) << name;
    EXPECT_EQ(l.up.protocols.size(), up.protocols.size()) << name;
    EXPECT_EQ(l.up.peer_to_peer, up.peer_to_peer) << name;
    EXPECT_EQ(l.has_out, sys.scale_out_bandwidth_per_direction.value() > 0) << name;
    if (l.has_out) {
      EXPECT_EQ(l.out.bandwidth.value(), scale_out_link(sys).bandwidth.value()) << name;
    }
  }
  // By hand: H100 SXM's NVLink, 450 GB/s per direction x 0.8 achieved = 360 GB/s over a switch
  // (peer to peer); its 50 GB/s NIC x 39 x 15/16 / 50 achieved = 36.5625 GB/s.
  SystemSpec h100 = load_system("h100-sxm");
  EXPECT_DOUBLE_EQ(detail::system_links(h100).up.bandwidth.value(), 360e9);
  EXPECT_TRUE(detail::system_links(h100).up.peer_to_peer);
  EXPECT_DOUBLE_EQ(detail::system_links(h100).out.bandwidth.value(), 36.5625e9);
  // The same system with another NIC (25 GB/s: 18.28125 GB/s achieved), then with none.
  h100.scale_out_bandwidth_per_direction = BytesPerSecond(25e9);
  EXPECT_DOUBLE_EQ(detail::system_links(h100).out.bandwidth.value(), 18.28125e9);
  h100.scale_out_bandwidth_per_direction = BytesPerSecond(0);
  EXPECT_FALSE(detail::system_links(h100).has_out);
  // TPU v4's ICI is a 3D torus; MI300X's Infinity Fabric mesh is not peer to peer here.
  EXPECT_EQ(detail::system_links(load_system("tpu-v4")).up.torus_dimensions, 3);
  EXPECT_FALSE(detail::system_links(load_system("mi300x")).up.peer_to_peer);
  // The collective line is part of the key: the same system with and without its own
  // fraction and call time (MI300X: 0.706 x 448 = 316.288 GB/s; unstated: 0.8 x 448 = 358.4).
  SystemSpec mi300x = load_system("mi300x");
  EXPECT_DOUBLE_EQ(detail::system_links(mi300x).up.bandwidth.value(), 316.288e9);
  mi300x.collective_efficiency = 0;
  EXPECT_DOUBLE_EQ(detail::system_links(mi300x).up.bandwidth.value(), 358.4e9);
  EXPECT_NEAR(detail::system_links(mi300x).up.protocols.back().base_latency.value(), 69e-6, 1e-15);
  mi300x.collective_latency.reset();
  EXPECT_NEAR(detail::system_links(mi300x).up.protocols.back().base_latency.value(), 8.4e-6, 1e-15);
}

}  // namespace
}  // namespace chalk
