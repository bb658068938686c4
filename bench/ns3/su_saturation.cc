// SPDX-License-Identifier: Apache-2.0
//
// The ns-3 3.44 side of airsched's single-user 802.11ac/ax saturation anchor
// (docs/model-vht-he.md, bench/ns3/README.md): one AP and one station 1 m apart, the AP sends
// UDP datagrams of 1472 bytes (1538-byte MPDUs) as fast as its queue takes them, a fixed MCS
// (ConstantRateWifiManager), A-MPDU up to the standard's length and the given BlockAck window,
// no RTS/CTS; prints the station's goodput over [warmup, duration] in Mb/s.
//
//   su_saturation --standard=ac|ax --mcs=9 --nss=2 --width=80 --gi=400 --window=64
//                 [--duration=3] [--warmup=1] [--maxAmpduTime=0]
//                 [--amsdu=0 --staAmsdu=0 --macQueue=0]
//
// --gi is the guard interval in ns: 800 or 400 for 802.11ac, 800/1600/3200 for 802.11ax.
//
// A-MSDU inside A-MPDU (off unless --amsdu is given; bench/ns3/amsdu_cases.csv, amsdu.csv):
// --amsdu is the AP's BE_MaxAmsduSize in bytes (0: no A-MSDU, as before), --staAmsdu the
// station's BE_MaxAmsduSize, from which ns-3 derives the maximum MPDU length the station
// advertises in its VHT Capabilities (up to 3839: 3895, up to 7935: 7991, else 11454; the AP
// then caps its A-MSDUs at that length - 56), and --macQueue the WifiMacQueue's size in packets
// (0: ns-3's 500; an A-MPDU of 256 A-MSDUs needs more MSDUs than 500). With --amsdu the
// program also prints the AP's data PPDUs while measuring (so does --counts=1 without it):
// their count, MPDUs per PPDU, MSDUs per MPDU, the most MSDUs in an MPDU and mean duration.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/wifi-module.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ns3;

namespace
{
uint64_t g_rxBytes = 0;
bool g_measuring = false;

void
OnRx(Ptr<const Packet> packet, const Address&)
{
    if (g_measuring)
    {
        g_rxBytes += packet->GetSize();
    }
}

void
StartMeasuring()
{
    g_measuring = true;
}

// --verbose: what the AP and the station put on the air while measuring.
struct AirLog
{
    uint64_t ppdus = 0;
    uint64_t mpdus = 0;
    double airtimeUs = 0;
    double lastStartUs = -1;
    double gapSumUs = 0;
    uint64_t gaps = 0;
};

AirLog g_ap;
AirLog g_sta;
double g_apEndUs = 0;

// --amsdu: the AP's QoS data PPDUs while measuring.
struct DataLog
{
    uint64_t ppdus = 0;
    uint64_t mpdus = 0;
    uint64_t msdus = 0;
    uint64_t maxMsdus = 0;
    double airtimeUs = 0;
};

DataLog g_data;

void
OnApData(WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    const auto& psdu = psdus.begin()->second;
    if (!g_measuring || !psdu->GetHeader(0).IsQosData())
    {
        return;
    }
    g_data.ppdus++;
    g_data.mpdus += psdu->GetNMpdus();
    for (const auto& mpdu : *psdu)
    {
        const uint64_t n =
            mpdu->GetHeader().IsQosAmsdu() ? std::distance(mpdu->begin(), mpdu->end()) : 1;
        g_data.msdus += n;
        g_data.maxMsdus = std::max(g_data.maxMsdus, n);
    }
    g_data.airtimeUs +=
        WifiPhy::CalculateTxDuration(psdu->GetSize(), tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
}

void
OnTx(AirLog* log, bool isAp, WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    if (!g_measuring)
    {
        return;
    }
    const double now = Simulator::Now().GetNanoSeconds() / 1e3;
    const auto& psdu = psdus.begin()->second;
    const double dur =
        WifiPhy::CalculateTxDuration(psdu->GetSize(), tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    log->ppdus++;
    log->mpdus += psdu->GetNMpdus();
    log->airtimeUs += dur;
    if (isAp)
    {
        if (g_apEndUs > 0)
        {
            log->gapSumUs += now - g_apEndUs;
            if (std::getenv("GAPS"))
            {
                std::printf("gap %.1f %u at %.0f\n", now - g_apEndUs, psdu->GetNMpdus(), now);
            }
            log->gaps++;
        }
        g_apEndUs = now + dur;
    }
}
} // namespace

int
main(int argc, char* argv[])
{
    std::string standard = "ac";
    uint32_t mcs = 9;
    uint32_t nss = 2;
    uint32_t width = 80;
    uint32_t giNs = 400;
    uint32_t window = 64;
    double duration = 3.0;
    double warmup = 1.0;
    uint32_t seed = 1;
    bool verbose = false;
    uint32_t amsdu = 0;
    uint32_t staAmsdu = 0;
    uint32_t macQueue = 0;
    bool counts = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("standard", "ac (VHT) or ax (HE)", standard);
    cmd.AddValue("mcs", "MCS index", mcs);
    cmd.AddValue("nss", "spatial streams", nss);
    cmd.AddValue("width", "channel width in MHz", width);
    cmd.AddValue("gi", "guard interval in ns", giNs);
    cmd.AddValue("window", "BlockAck window (MpduBufferSize)", window);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", warmup);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("verbose", "print the PPDUs' counts and durations", verbose);
    cmd.AddValue("amsdu", "the AP's BE_MaxAmsduSize in bytes (0: no A-MSDU)", amsdu);
    cmd.AddValue("staAmsdu", "the station's BE_MaxAmsduSize (its advertised max MPDU)", staAmsdu);
    cmd.AddValue("macQueue", "WifiMacQueue size in packets (0: ns-3's default)", macQueue);
    cmd.AddValue("counts", "print the AP's data PPDUs (always with --amsdu)", counts);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    // No RTS/CTS for any A-MPDU (the default threshold would protect every aggregate).
    Config::SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", UintegerValue(4692480));
    if (macQueue > 0)
    {
        Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                           QueueSizeValue(QueueSize(std::to_string(macQueue) + "p")));
    }

    const bool he = standard == "ax";
    NodeContainer nodes;
    nodes.Create(2);
    Ptr<Node> ap = nodes.Get(0);
    Ptr<Node> sta = nodes.Get(1);

    YansWifiChannelHelper channel = YansWifiChannelHelper::Default();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    phy.Set("ChannelSettings",
            StringValue("{0, " + std::to_string(width) + ", BAND_5GHZ, 0}"));
    phy.Set("Antennas", UintegerValue(nss));
    phy.Set("MaxSupportedTxSpatialStreams", UintegerValue(nss));
    phy.Set("MaxSupportedRxSpatialStreams", UintegerValue(nss));

    WifiHelper wifi;
    wifi.SetStandard(he ? WIFI_STANDARD_80211ax : WIFI_STANDARD_80211ac);
    const std::string mode = (he ? "HeMcs" : "VhtMcs") + std::to_string(mcs);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue(mode),
                                 "ControlMode",
                                 StringValue(he ? "HeMcs0" : "VhtMcs0"));
    if (he)
    {
        wifi.ConfigHeOptions("GuardInterval", TimeValue(NanoSeconds(giNs)));
    }
    else
    {
        wifi.ConfigHtOptions("ShortGuardIntervalSupported", BooleanValue(giNs == 400));
    }

    WifiMacHelper mac;
    Ssid ssid("anchor");
    const uint32_t maxAmpdu = he ? 6500631 : 1048575;
    // The station's and the AP's MAC take the same A-MPDU length and BlockAck window.
    auto install = [&](const std::string& type, NodeContainer nodes, uint32_t maxAmsdu) {
        if (maxAmsdu > 0)
        {
            mac.SetType(type,
                        "Ssid",
                        SsidValue(ssid),
                        "BE_MaxAmpduSize",
                        UintegerValue(maxAmpdu),
                        "MpduBufferSize",
                        UintegerValue(window),
                        "BE_MaxAmsduSize",
                        UintegerValue(maxAmsdu));
        }
        else
        {
            mac.SetType(type,
                        "Ssid",
                        SsidValue(ssid),
                        "BE_MaxAmpduSize",
                        UintegerValue(maxAmpdu),
                        "MpduBufferSize",
                        UintegerValue(window));
        }
        return wifi.Install(phy, mac, nodes);
    };
    NetDeviceContainer staDev = install("ns3::StaWifiMac", sta, staAmsdu);
    NetDeviceContainer apDev = install("ns3::ApWifiMac", ap, amsdu);

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0.0, 0.0, 0.0));
    pos->Add(Vector(1.0, 0.0, 0.0));
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(NetDeviceContainer(apDev, staDev));
    // Static ARP entries: an ARP request sent before the station has associated is lost and
    // retried only a second later (ArpCache::WaitReplyTimeout), which would eat the window.
    NeighborCacheHelper().PopulateNeighborCache();

    const uint16_t port = 9;
    PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApp = sink.Install(sta);
    sinkApp.Start(Seconds(0.0));
    sinkApp.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));

    // Offered load: twice the PHY rate of the link, so the AP's queue never runs dry.
    Ptr<WifiNetDevice> apWifi = DynamicCast<WifiNetDevice>(apDev.Get(0));
    WifiMode dataMode(mode);
    const uint64_t phyRate =
        dataMode.GetDataRate(static_cast<uint16_t>(width), NanoSeconds(giNs), static_cast<uint8_t>(nss));
    OnOffHelper onoff("ns3::UdpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    onoff.SetAttribute("PacketSize", UintegerValue(1472));
    onoff.SetAttribute("DataRate", DataRateValue(DataRate(2 * phyRate)));
    onoff.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=1000]"));
    onoff.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=0]"));
    ApplicationContainer src = onoff.Install(ap);
    src.Start(Seconds(0.1));
    src.Stop(Seconds(duration));

    counts = counts || amsdu > 0;
    if (counts)
    {
        apWifi->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeCallback(&OnApData));
    }
    if (verbose)
    {
        Ptr<WifiNetDevice> staWifi = DynamicCast<WifiNetDevice>(staDev.Get(0));
        apWifi->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin",
                                                      MakeBoundCallback(&OnTx, &g_ap, true));
        staWifi->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin",
                                                       MakeBoundCallback(&OnTx, &g_sta, false));
    }
    Simulator::Schedule(Seconds(warmup), &StartMeasuring);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    const double goodput = g_rxBytes * 8.0 / (duration - warmup) / 1e6;
    Ptr<WifiMac> apMac = apWifi->GetMac();
    std::printf("standard=%s mcs=%u nss=%u width=%u gi=%u window=%u phy_mbps=%.1f "
                "max_ampdu=%u buffer=%u goodput_mbps=%.3f\n",
                standard.c_str(),
                mcs,
                nss,
                width,
                giNs,
                window,
                phyRate / 1e6,
                apMac->GetMaxAmpduSize(AC_BE),
                apMac->GetMpduBufferSize(),
                goodput);
    if (counts)
    {
        std::printf("amsdu=%u sta_amsdu=%u data_ppdus=%lu mpdus_per_ppdu=%.3f msdus_per_mpdu=%.3f "
                    "max_msdus=%lu ppdu_us=%.1f\n",
                    amsdu,
                    staAmsdu,
                    static_cast<unsigned long>(g_data.ppdus),
                    g_data.mpdus / double(g_data.ppdus),
                    g_data.msdus / double(g_data.mpdus),
                    static_cast<unsigned long>(g_data.maxMsdus),
                    g_data.airtimeUs / g_data.ppdus);
    }
    if (verbose)
    {
        std::printf("ap: %lu PPDUs, %.2f MPDUs and %.1f us each, %.1f us from a PPDU's end to "
                    "the next; station: %lu PPDUs of %.1f us\n",
                    static_cast<unsigned long>(g_ap.ppdus),
                    g_ap.mpdus / double(g_ap.ppdus),
                    g_ap.airtimeUs / g_ap.ppdus,
                    g_ap.gapSumUs / g_ap.gaps,
                    static_cast<unsigned long>(g_sta.ppdus),
                    g_sta.airtimeUs / g_sta.ppdus);
    }
    Simulator::Destroy();
    return 0;
}
