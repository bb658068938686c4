// SPDX-License-Identifier: Apache-2.0
//
// The ns-3 3.44 side of airsched's speed comparison on a 20-station WiFi 6 cell
// (bench/wifi6-20-stations.toml, bench/README.md "802.11ax cell against ns-3"): an 802.11ax AP,
// 5 GHz, 80 MHz, 2 x 2, 0.8 us GI, HE SU PPDUs at a fixed MCS 7 with 2 streams to and from every
// station (ConstantRateWifiManager), BlockAck window 256, no RTS/CTS; a server behind the AP on a
// 1 Gbit/s, 0.1 ms link. Traffic per station: a 10 Mbit/s UDP download of 1472-byte datagrams
// and a VoIP-like upload of 160-byte datagrams every 20 ms. Prints the total goodput of each
// direction over [warmup, duration] and the wall time of Simulator::Run().
//
//   he_cell [--stations=20] [--duration=60] [--warmup=2]

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace ns3;

namespace
{
uint64_t g_down = 0;
uint64_t g_up = 0;
bool g_measuring = false;

void
CountDown(Ptr<const Packet> p, const Address&)
{
    if (g_measuring)
    {
        g_down += p->GetSize();
    }
}

void
CountUp(Ptr<const Packet> p, const Address&)
{
    if (g_measuring)
    {
        g_up += p->GetSize();
    }
}

void
StartMeasuring()
{
    g_measuring = true;
}
} // namespace

int
main(int argc, char* argv[])
{
    uint32_t nSta = 20;
    double duration = 60.0;
    double warmup = 2.0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("stations", "number of stations", nSta);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", warmup);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", UintegerValue(4692480));

    NodeContainer server;
    server.Create(1);
    NodeContainer apNode;
    apNode.Create(1);
    NodeContainer stas;
    stas.Create(nSta);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    p2p.SetChannelAttribute("Delay", StringValue("0.1ms"));
    NetDeviceContainer wired = p2p.Install(server.Get(0), apNode.Get(0));

    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    phy.Set("ChannelSettings", StringValue("{0, 80, BAND_5GHZ, 0}"));
    phy.Set("Antennas", UintegerValue(2));
    phy.Set("MaxSupportedTxSpatialStreams", UintegerValue(2));
    phy.Set("MaxSupportedRxSpatialStreams", UintegerValue(2));

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211ax);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("HeMcs7"),
                                 "ControlMode",
                                 StringValue("HeMcs0"));
    wifi.ConfigHeOptions("GuardInterval", TimeValue(NanoSeconds(800)));

    WifiMacHelper mac;
    Ssid ssid("speed");
    // The station's and the AP's MAC take the same A-MPDU length and BlockAck window.
    auto install = [&](const std::string& type, NodeContainer nodes) {
        mac.SetType(type,
                    "Ssid",
                    SsidValue(ssid),
                    "BE_MaxAmpduSize",
                    UintegerValue(6500631),
                    "MpduBufferSize",
                    UintegerValue(256));
        return wifi.Install(phy, mac, nodes);
    };
    NetDeviceContainer staDevs = install("ns3::StaWifiMac", stas);
    NetDeviceContainer apDev = install("ns3::ApWifiMac", apNode);

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0.0, 0.0, 0.0));
    for (uint32_t i = 0; i < nSta; i++)
    {
        pos->Add(Vector(1.0 + 0.1 * i, 0.0, 0.0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(apNode);
    mobility.Install(stas);

    InternetStackHelper stack;
    stack.Install(server);
    stack.Install(apNode);
    stack.Install(stas);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer wiredIfs = addr.Assign(wired);
    addr.SetBase("10.1.0.0", "255.255.255.0");
    addr.Assign(apDev);
    Ipv4InterfaceContainer staIfs = addr.Assign(staDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    NeighborCacheHelper().PopulateNeighborCache();

    for (uint32_t i = 0; i < nSta; i++)
    {
        const uint16_t downPort = 9000 + i;
        PacketSinkHelper downSink("ns3::UdpSocketFactory",
                                  InetSocketAddress(Ipv4Address::GetAny(), downPort));
        ApplicationContainer ds = downSink.Install(stas.Get(i));
        ds.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&CountDown));
        OnOffHelper down("ns3::UdpSocketFactory", InetSocketAddress(staIfs.GetAddress(i), downPort));
        down.SetConstantRate(DataRate("10Mbps"), 1472);
        ApplicationContainer da = down.Install(server.Get(0));
        da.Start(Seconds(0.5 + 0.001 * i));

        const uint16_t upPort = 10000 + i;
        PacketSinkHelper upSink("ns3::UdpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), upPort));
        ApplicationContainer us = upSink.Install(server.Get(0));
        us.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&CountUp));
        OnOffHelper up("ns3::UdpSocketFactory", InetSocketAddress(wiredIfs.GetAddress(0), upPort));
        up.SetConstantRate(DataRate("64kbps"), 160);
        ApplicationContainer ua = up.Install(stas.Get(i));
        ua.Start(Seconds(0.5 + 0.001 * i));
    }

    Simulator::Schedule(Seconds(warmup), &StartMeasuring);
    Simulator::Stop(Seconds(duration));
    const auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double measured = duration - warmup;
    std::printf("stations=%u duration=%.0f down_mbps=%.3f up_mbps=%.4f run_wall_s=%.2f\n",
                nSta,
                duration,
                g_down * 8.0 / measured / 1e6,
                g_up * 8.0 / measured / 1e6,
                wall);
    Simulator::Destroy();
    return 0;
}
