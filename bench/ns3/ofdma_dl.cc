// SPDX-License-Identifier: Apache-2.0
//
// The ns-3 3.44 side of airsched's downlink OFDMA comparison (docs/model-ofdma.md,
// bench/ns3/README.md): the cell of ofdma_cell.h, 80 MHz, 0.8 us GI, one spatial stream. The
// AP runs ns-3's RrMultiUserScheduler with NStations = --nsta (at most 74),
// UL OFDMA off (a DL-only comparison), the default DL MU acknowledgement
// (DL_MU_BAR_BA_SEQUENCE). Per station a UdpClient on the AP sends 1472-byte datagrams
// (1538-byte MPDUs) at --rate Mb/s (start staggered by 0.1 ms per station); the station's
// UdpServer counts bytes and the one-way delay from the SeqTsHeader's timestamp over
// [warmup, duration] (and the delay up to the end of the PPDU that carried the packet, as
// airsched delivers). Prints one line per station and one summary line, and with --ppdus=K the
// first K DL MU PPDUs after warmup (the served stations' association ranks (AID - 1), RU widths in MHz and MPDUs).
// While PPDUs are still to be printed it also prints each association ("assoc t=... rank=...":
// the scheduler appends the station to its list with no credits), so that --warmup=0 gives the
// whole history of RrMultiUserScheduler's station list (run_ofdma.sh credits).
//
//   ofdma_dl --n=9 --mcs=7 --rate=50 [--nsta=9] [--duration=3] [--warmup=1] [--ppdus=0]

#include "ofdma_cell.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

namespace
{
bool g_measuring = false;
std::vector<uint64_t> g_rxBytes;
std::vector<uint64_t> g_rxPkts;
std::vector<double> g_delaySumUs;
// The same delay up to the end of the PPDU that carried the packet: ns-3 passes each MPDU of an
// A-MPDU up as it ends, airsched at the end of the PPDU.
std::vector<double> g_ppduEndDelaySumUs;
double g_lastPpduEndUs = 0;
std::map<Mac48Address, uint32_t> g_staIndex;
// Association order (AID - 1) of each station index: the RR scheduler's initial list order.
std::map<Mac48Address, uint32_t> g_rank;
std::vector<uint32_t> g_rankOf;
uint32_t g_ppdusToPrint = 0;
uint64_t g_muPpdus = 0;
uint64_t g_suPpdus = 0;
double g_muAirUs = 0;

void
OnRx(uint32_t sta, Ptr<const Packet> packet)
{
    if (!g_measuring)
    {
        return;
    }
    Ptr<Packet> copy = packet->Copy();
    SeqTsHeader ts;
    copy->RemoveHeader(ts);
    g_rxBytes[sta] += packet->GetSize();
    g_rxPkts[sta] += 1;
    g_delaySumUs[sta] += (Simulator::Now() - ts.GetTs()).GetNanoSeconds() / 1e3;
    g_ppduEndDelaySumUs[sta] += g_lastPpduEndUs - ts.GetTs().GetNanoSeconds() / 1e3;
}

void
OnApTx(WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    g_lastPpduEndUs = Simulator::Now().GetNanoSeconds() / 1e3 +
                      WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    if (!g_measuring)
    {
        return;
    }
    if (!tx.IsDlMu())
    {
        if (psdus.begin()->second->GetHeader(0).IsQosData())
        {
            g_suPpdus++;
        }
        return;
    }
    g_muPpdus++;
    g_muAirUs +=
        WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    if (g_ppdusToPrint == 0)
    {
        return;
    }
    g_ppdusToPrint--;
    std::printf("ppdu t=%.1fus dur=%.1fus users",
                Simulator::Now().GetNanoSeconds() / 1e3,
                WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() /
                    1e3);
    for (const auto& [staId, psdu] : psdus)
    {
        const auto& info = tx.GetHeMuUserInfo(staId);
        std::printf(" %u:%u:%zu",
                    g_rank[psdu->GetAddr1()],
                    static_cast<unsigned>(HeRu::GetBandwidth(info.ru.GetRuType())),
                    psdu->GetNMpdus());
    }
    std::printf("\n");
}

void
OnAssociated(uint16_t aid, Mac48Address address)
{
    g_rank[address] = aid - 1;
    if (g_ppdusToPrint > 0)
    {
        std::printf("assoc t=%.1fus rank=%u\n", Simulator::Now().GetNanoSeconds() / 1e3, aid - 1);
    }
    g_rankOf[g_staIndex[address]] = aid - 1;
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
    uint32_t n = 4;
    uint32_t nsta = 0;
    uint32_t mcs = 7;
    double rateMbps = 50;
    double duration = 3.0;
    double warmup = 1.0;
    uint32_t seed = 1;
    uint32_t width = 80;

    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "stations", n);
    cmd.AddValue("nsta", "RrMultiUserScheduler::NStations (0: n, at most 74)", nsta);
    cmd.AddValue("mcs", "HE MCS of every link", mcs);
    cmd.AddValue("width", "channel width in MHz", width);
    cmd.AddValue("rate", "offered UDP load per station in Mb/s", rateMbps);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", warmup);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("ppdus", "print the first K DL MU PPDUs after warmup", g_ppdusToPrint);
    cmd.Parse(argc, argv);
    if (nsta == 0)
    {
        nsta = std::min<uint32_t>(n, 74);
    }

    auto cell = airsched::BuildOfdmaCell(n, width, mcs, 800, seed, [nsta](WifiMacHelper& mac) {
        mac.SetMultiUserScheduler("ns3::RrMultiUserScheduler",
                                  "NStations",
                                  UintegerValue(nsta),
                                  "EnableUlOfdma",
                                  BooleanValue(false),
                                  "EnableBsrp",
                                  BooleanValue(false));
    });
    NodeContainer& apNode = cell.apNode;
    NodeContainer& staNodes = cell.staNodes;
    NetDeviceContainer& apDev = cell.apDev;
    NetDeviceContainer& staDevs = cell.staDevs;
    Ipv4InterfaceContainer& staIf = cell.staIf;

    g_rxBytes.assign(n, 0);
    g_rxPkts.assign(n, 0);
    g_delaySumUs.assign(n, 0);
    g_rankOf.assign(n, 0);
    g_ppduEndDelaySumUs.assign(n, 0);
    const double interval = 1472.0 * 8 / (rateMbps * 1e6);
    for (uint32_t i = 0; i < n; i++)
    {
        g_staIndex[Mac48Address::ConvertFrom(staDevs.Get(i)->GetAddress())] = i;
        const uint16_t port = 9;
        UdpServerHelper server(port);
        ApplicationContainer s = server.Install(staNodes.Get(i));
        s.Start(Seconds(0.0));
        s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
        UdpClientHelper client(staIf.GetAddress(i), port);
        client.SetAttribute("MaxPackets", UintegerValue(0));
        client.SetAttribute("Interval", TimeValue(Seconds(interval)));
        client.SetAttribute("PacketSize", UintegerValue(1472));
        ApplicationContainer c = client.Install(apNode.Get(0));
        c.Start(Seconds(0.1) + MicroSeconds(100 * i));
        c.Stop(Seconds(duration));
    }

    Ptr<WifiNetDevice> apWifi = DynamicCast<WifiNetDevice>(apDev.Get(0));
    apWifi->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeCallback(&OnApTx));
    apWifi->GetMac()->TraceConnectWithoutContext("AssociatedSta", MakeCallback(&OnAssociated));
    Simulator::Schedule(Seconds(warmup), &StartMeasuring);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    double total = 0;
    double delaySum = 0;
    uint64_t pkts = 0;
    for (uint32_t i = 0; i < n; i++)
    {
        const double mbps = g_rxBytes[i] * 8.0 / (duration - warmup) / 1e6;
        total += mbps;
        delaySum += g_delaySumUs[i];
        pkts += g_rxPkts[i];
        std::printf("sta=%u rank=%u goodput_mbps=%.3f mean_delay_ms=%.4f ppdu_end_delay_ms=%.4f\n",
                    i,
                    g_rankOf[i],
                    mbps,
                    g_rxPkts[i] ? g_delaySumUs[i] / g_rxPkts[i] / 1e3 : 0.0,
                    g_rxPkts[i] ? g_ppduEndDelaySumUs[i] / g_rxPkts[i] / 1e3 : 0.0);
    }
    std::printf("n=%u nsta=%u mcs=%u width=%u rate=%.3f goodput_mbps=%.3f mean_delay_ms=%.4f "
                "mu_ppdus=%lu su_ppdus=%lu mu_ppdu_us=%.1f\n",
                n,
                nsta,
                mcs,
                width,
                rateMbps,
                total,
                pkts ? delaySum / pkts / 1e3 : 0.0,
                static_cast<unsigned long>(g_muPpdus),
                static_cast<unsigned long>(g_suPpdus),
                g_muPpdus ? g_muAirUs / g_muPpdus : 0.0);
    Simulator::Destroy();
    return 0;
}
