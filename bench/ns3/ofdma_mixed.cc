// SPDX-License-Identifier: Apache-2.0
//
// The ns-3 3.44 side of airsched's mixed downlink + uplink OFDMA comparison
// (docs/model-ofdma.md, "Downlink and uplink together, with BSRP"; bench/ns3/README.md): the
// cell of ofdma_cell.h, 80 MHz, 1.6 us GI (HE TB PPDUs allow 1.6 and 3.2 us only), one spatial
// stream, HE MCS 7, single-user data at the configured GI (OwnGiConstantRateManager) and the
// A-MPDU sent again after a missed BlockAck (UseExplicitBarAfterMissedBlockAck false), as the
// uplink comparison runs ns-3 like for like. The AP runs ns-3's RrMultiUserScheduler with
// NStations = --nsta (at most 74), EnableUlOfdma true, EnableBsrp = --bsrp (ns-3's default,
// true: SelectTxFormat then sends DL MU PPDU, BSRP Trigger, Basic Trigger, one per access),
// AccessReqInterval = --access us, UlPsduSize 500 B (default); the stations set the Queue Size
// of their QoS Data and QoS Null frames (QosFrameExchangeManager::SetQueueSize true). With
// --muEdcaTimer > 0 the AP advertises an MU EDCA Parameter Set with the same AIFSN, CWmin,
// CWmax and timer for every AC (HeConfiguration's Mu*Aifsn, Mu*CwMin, Mu*CwMax, *MuEdcaTimer).
//
// Traffic: per station a UdpClient on the AP sending 1472-byte datagrams at --dl Mb/s to a
// UdpServer on the station, and one on the station sending at --ul Mb/s to a UdpServer on the
// AP (starts staggered by 0.1 ms per station and direction). Over [warmup, duration] each server
// counts bytes and the one-way delay from the SeqTsHeader's timestamp, and the delay to the end
// of the PPDU that carried the packet (airsched delivers at the PPDU's end). Prints one line per
// station and direction, a summary line with the frame counts, and with --trace=K the first K
// multi-user frames after warmup ("dlmu", "tf" with its type, "tb", "ba" lines).
//
//   ofdma_mixed --n=9 --dl=6.667 --ul=6.667 [--nsta=9] [--bsrp=1] [--access=1000]
//               [--muEdcaTimer=0 --muAifsn=0 --muCwMin=15 --muCwMax=1023]
//               [--duration=3] [--warmup=1] [--seed=1] [--trace=0]

#include "ofdma_cell.h"

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace ns3;

namespace
{
bool g_measuring = false;
// Per direction (0 downlink, 1 uplink) and station.
std::vector<uint64_t> g_rxBytes[2];
std::vector<uint64_t> g_rxPkts[2];
std::vector<double> g_delaySumUs[2];
std::vector<double> g_ppduEndDelaySumUs[2];
// The end of the AP's last PPDU (downlink) and of each station's last PPDU (uplink).
double g_apPpduEndUs = 0;
std::vector<double> g_staPpduEndUs;
std::map<Mac48Address, uint32_t> g_rank;
std::vector<uint32_t> g_rankOf;
uint32_t g_trace = 0;
bool g_tracing = false;
uint64_t g_dlMu = 0;
uint64_t g_dlMuUsers = 0;
// The MPDUs the DL MU PPDUs carried, and the AP's response timeouts by WifiTxTimer::Reason
// (a DL MU PPDU or Trigger that collided, a BlockAck lost).
uint64_t g_dlMuMpdus = 0;
std::map<uint8_t, uint64_t> g_apTimeouts;
// The DL MU PPDU on the air (start and end, us), the stations that passed up at least one of
// its MPDUs, and over the measured DL MU PPDUs: how many had k such stations (k = index), the
// MPDUs the stations passed up and those they dropped (PhyRxEnd, PhyRxDrop).
double g_dlMuStartUs = -1;
double g_dlMuEndUs = -1;
std::set<uint32_t> g_dlMuGot;
std::vector<uint64_t> g_dlMuGotHist(75, 0);
uint64_t g_dlMuRxOk = 0;
uint64_t g_dlMuRxDrop = 0;
Mac48Address g_apAddress;
// The Trigger on the air (0 none, 1 Basic, 2 BSRP), the HE TB PPDUs that answered it and the
// stations it solicited; per kind, how many measured Triggers had each answered/solicited
// ("8/16:23"); and the DL MU PPDUs by what the AP sent before (0 anything else, 1 a Basic
// Trigger some station answered, 2 one none answered): [sent, none served].
int g_tfOpen = 0;
uint32_t g_tfAnswers = 0;
uint32_t g_tfSolicited = 0;
std::map<std::string, uint64_t> g_tfAnswered[3];
int g_prevKind = 0;
int g_dlMuPrev = 0;
uint64_t g_dlMuAfter[3][2] = {{0, 0}, {0, 0}, {0, 0}};
uint64_t g_dlSu = 0;
uint64_t g_basicTfs = 0;
uint64_t g_bsrpTfs = 0;
uint64_t g_tbPpdus = 0;
uint64_t g_tbNull = 0;
uint64_t g_tbMpdus = 0;
uint64_t g_staSu = 0;
uint64_t g_staSuMpdus = 0;
uint64_t g_msBas = 0;
// --traceCol: every station PPDU that overlaps a Trigger or DL MU PPDU of the AP, printed as
// `col t= ap= ap_dur= sta= off= dur= mpdus=` (off: the station PPDU's start less the AP's).
bool g_traceCol = false;
double g_apStartUs = -1;
const char* g_apKind = "";
std::vector<double> g_staStartUs;
std::vector<double> g_staDurUs;
std::vector<std::size_t> g_staMpdus;

double
NowUs()
{
    return Simulator::Now().GetNanoSeconds() / 1e3;
}

void
OnRx(uint32_t dir, uint32_t sta, Ptr<const Packet> packet)
{
    if (!g_measuring)
    {
        return;
    }
    Ptr<Packet> copy = packet->Copy();
    SeqTsHeader ts;
    copy->RemoveHeader(ts);
    const double sent = ts.GetTs().GetNanoSeconds() / 1e3;
    g_rxBytes[dir][sta] += packet->GetSize();
    g_rxPkts[dir][sta] += 1;
    g_delaySumUs[dir][sta] += NowUs() - sent;
    g_ppduEndDelaySumUs[dir][sta] += (dir == 0 ? g_apPpduEndUs : g_staPpduEndUs[sta]) - sent;
}

void
OnStaTx(uint32_t sta, WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    const double dur =
        WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    g_staPpduEndUs[sta] = NowUs() + dur;
    Ptr<const WifiPsdu> psdu = psdus.begin()->second;
    std::size_t data = 0;
    for (const auto& mpdu : *PeekPointer(psdu))
    {
        data += mpdu->GetHeader().IsQosData() && mpdu->GetPacket()->GetSize() > 0 ? 1 : 0;
    }
    if (g_traceCol && g_measuring && !tx.IsUlMu())
    {
        g_staStartUs[sta] = NowUs();
        g_staDurUs[sta] = dur;
        g_staMpdus[sta] = data;
        if (*g_apKind != 0 && NowUs() < g_apPpduEndUs)
        {
            std::printf("col t=%.1f ap=%s ap_dur=%.1f sta=%u off=%.1f dur=%.1f mpdus=%zu\n",
                        g_apStartUs,
                        g_apKind,
                        g_apPpduEndUs - g_apStartUs,
                        g_rankOf[sta],
                        NowUs() - g_apStartUs,
                        dur,
                        data);
        }
    }
    if (g_tracing && tx.IsUlMu())
    {
        std::printf("tb t=%.1f dur=%.1f sta=%u mpdus=%zu size=%u\n",
                    NowUs(),
                    dur,
                    g_rankOf[sta],
                    data,
                    psdu->GetSize());
    }
    if (!g_measuring)
    {
        return;
    }
    if (tx.IsUlMu())
    {
        g_tfAnswers++;
        g_tbPpdus++;
        g_tbNull += data == 0;
        g_tbMpdus += data;
    }
    else if (data > 0)
    {
        g_staSu++;
        g_staSuMpdus += data;
    }
}

void
OnApTx(WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    const double dur =
        WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    g_apPpduEndUs = NowUs() + dur;
    if (g_traceCol && g_measuring)
    {
        g_apStartUs = NowUs();
        g_apKind = "";
        if (tx.IsDlMu())
        {
            g_apKind = "dlmu";
        }
        else if (psdus.begin()->second->GetHeader(0).IsTrigger())
        {
            CtrlTriggerHeader trigger;
            Ptr<Packet> copy = psdus.begin()->second->GetPayload(0)->Copy();
            copy->RemoveHeader(trigger);
            g_apKind = trigger.IsBasic() ? "basic" : (trigger.IsBsrp() ? "bsrp" : "");
        }
        for (std::size_t i = 0; *g_apKind != 0 && i < g_staStartUs.size(); i++)
        {
            if (g_staStartUs[i] + g_staDurUs[i] > NowUs())
            {
                std::printf("col t=%.1f ap=%s ap_dur=%.1f sta=%u off=%.1f dur=%.1f mpdus=%zu\n",
                            NowUs(),
                            g_apKind,
                            dur,
                            g_rankOf[i],
                            g_staStartUs[i] - NowUs(),
                            g_staDurUs[i],
                            g_staMpdus[i]);
            }
        }
    }
    if (g_tfOpen > 0)
    {
        g_tfAnswered[g_tfOpen][std::to_string(g_tfAnswers) + "/" + std::to_string(g_tfSolicited)]++;
        g_prevKind = g_tfOpen == 1 ? (g_tfAnswers > 0 ? 1 : 2) : 0;
        g_tfOpen = 0;
        g_tfAnswers = 0;
    }
    if (g_dlMuStartUs >= 0)
    {
        g_dlMuAfter[g_dlMuPrev][0]++;
        g_dlMuAfter[g_dlMuPrev][1] += g_dlMuGot.empty();
        g_prevKind = 0;
        g_dlMuGotHist[g_dlMuGot.size()]++;
        g_dlMuGot.clear();
        g_dlMuStartUs = -1;
    }
    if (tx.IsDlMu())
    {
        if (g_measuring)
        {
            g_dlMuPrev = g_prevKind;
            g_dlMuStartUs = NowUs();
            g_dlMuEndUs = NowUs() + dur;
            g_dlMu++;
            g_dlMuUsers += psdus.size();
            for (const auto& [staId, psdu] : psdus)
            {
                g_dlMuMpdus += psdu->GetNMpdus();
            }
        }
        g_tracing = false;
        if (g_measuring && g_trace > 0)
        {
            g_trace--;
            std::printf("dlmu t=%.1f dur=%.1f users", NowUs(), dur);
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
        return;
    }
    Ptr<const WifiPsdu> psdu = psdus.begin()->second;
    const WifiMacHeader& hdr = psdu->GetHeader(0);
    if (hdr.IsQosData())
    {
        g_dlSu += g_measuring;
        return;
    }
    if (hdr.IsTrigger())
    {
        CtrlTriggerHeader trigger;
        Ptr<Packet> copy = psdu->GetPayload(0)->Copy();
        copy->RemoveHeader(trigger);
        if (g_measuring)
        {
            (trigger.IsBasic() ? g_basicTfs : g_bsrpTfs) += 1;
            g_tfOpen = trigger.IsBasic() ? 1 : 2;
            g_tfAnswers = 0;
            g_tfSolicited = 0;
            for (const auto& ui : trigger)
            {
                g_tfSolicited += ui.GetAid12() > 0;
            }
        }
        g_tracing = false;
        if (g_measuring && g_trace > 0)
        {
            g_trace--;
            g_tracing = true;
            std::printf("tf t=%.1f dur=%.1f type=%s size=%u rate=%s ul_length=%u users",
                        NowUs(),
                        dur,
                        trigger.IsBasic() ? "basic" : (trigger.IsBsrp() ? "bsrp" : "other"),
                        psdu->GetSize(),
                        tx.GetMode().GetUniqueName().c_str(),
                        trigger.GetUlLength());
            for (const auto& ui : trigger)
            {
                std::printf(
                    " %u:%u",
                    ui.GetAid12() - 1,
                    static_cast<unsigned>(HeRu::GetBandwidth(ui.GetRuAllocation().GetRuType())));
            }
            std::printf("\n");
        }
        return;
    }
    if (hdr.IsBlockAck())
    {
        CtrlBAckResponseHeader ba;
        Ptr<Packet> copy = psdu->GetPayload(0)->Copy();
        copy->RemoveHeader(ba);
        if (ba.IsMultiSta())
        {
            g_msBas += g_measuring;
            if (g_tracing)
            {
                std::printf("ba t=%.1f dur=%.1f size=%u rate=%s\n",
                            NowUs(),
                            dur,
                            psdu->GetSize(),
                            tx.GetMode().GetUniqueName().c_str());
            }
        }
    }
}

/// An MPDU of the DL MU PPDU on the air, passed up (`ok`) or dropped by station `sta`'s PHY.
void
OnStaRx(uint32_t sta, bool ok, Ptr<const Packet> packet)
{
    if (g_dlMuStartUs < 0 || NowUs() > g_dlMuEndUs + 1)
    {
        return;
    }
    WifiMacHeader hdr;
    packet->PeekHeader(hdr);
    if (!hdr.IsQosData() || hdr.GetAddr2() != g_apAddress)
    {
        return;
    }
    (ok ? g_dlMuRxOk : g_dlMuRxDrop) += 1;
    if (ok)
    {
        g_dlMuGot.insert(sta);
    }
}

void
OnApTimeout(uint8_t reason)
{
    g_apTimeouts[reason] += g_measuring;
}

void
OnAssociated(uint16_t aid, Mac48Address address)
{
    g_rank[address] = aid - 1;
}

std::string
hist(const std::map<std::string, uint64_t>& h)
{
    std::string s;
    for (const auto& [k, c] : h)
    {
        s += (s.empty() ? "" : ",") + k + ":" + std::to_string(c);
    }
    return s;
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
    double dlMbps = 15;
    double ulMbps = 15;
    double duration = 3.0;
    double warmup = 1.0;
    uint32_t seed = 1;
    uint32_t width = 80;
    uint32_t accessUs = 1000;
    bool bsrp = true;
    uint32_t muEdcaTimerUs = 0;
    uint32_t muAifsn = 0;
    uint32_t muCwMin = 15;
    uint32_t muCwMax = 1023;
    bool colocated = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "stations", n);
    cmd.AddValue("nsta", "RrMultiUserScheduler::NStations (0: n, at most 74)", nsta);
    cmd.AddValue("mcs", "HE MCS of every link", mcs);
    cmd.AddValue("width", "channel width in MHz", width);
    cmd.AddValue("dl", "offered downlink UDP load per station in Mb/s", dlMbps);
    cmd.AddValue("ul", "offered uplink UDP load per station in Mb/s", ulMbps);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", warmup);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("access", "MultiUserScheduler::AccessReqInterval in us", accessUs);
    cmd.AddValue("bsrp", "RrMultiUserScheduler::EnableBsrp (ns-3's default true)", bsrp);
    cmd.AddValue("muEdcaTimer", "MU EDCA Timer of every AC in us (0: no MU EDCA)", muEdcaTimerUs);
    cmd.AddValue("muAifsn", "MU EDCA AIFSN of every AC (0: EDCA disabled)", muAifsn);
    cmd.AddValue("muCwMin", "MU EDCA CWmin of every AC", muCwMin);
    cmd.AddValue("muCwMax", "MU EDCA CWmax of every AC", muCwMax);
    cmd.AddValue("trace", "print the first K multi-user frames after warmup", g_trace);
    cmd.AddValue("traceCol",
                 "print every station PPDU that overlaps a Trigger or DL MU PPDU (after warmup)",
                 g_traceCol);
    cmd.AddValue("colocated",
                 "all stations at one point 1 m from the AP (no capture between them)",
                 colocated);
    cmd.Parse(argc, argv);
    if (nsta == 0)
    {
        nsta = std::min<uint32_t>(n, 74);
    }

    Config::SetDefault("ns3::QosFrameExchangeManager::SetQueueSize", BooleanValue(true));
    Config::SetDefault("ns3::QosTxop::UseExplicitBarAfterMissedBlockAck", BooleanValue(false));
    for (const char* ac : {"Be", "Bk", "Vi", "Vo"})
    {
        const std::string he = "ns3::HeConfiguration::";
        Config::SetDefault(he + ac + "MuEdcaTimer", TimeValue(MicroSeconds(muEdcaTimerUs)));
        Config::SetDefault(he + "Mu" + ac + "Aifsn", UintegerValue(muAifsn));
        Config::SetDefault(he + "Mu" + ac + "CwMin", UintegerValue(muCwMin));
        Config::SetDefault(he + "Mu" + ac + "CwMax", UintegerValue(muCwMax));
    }
    auto cell = airsched::BuildOfdmaCell(
        n,
        width,
        mcs,
        1600,
        seed,
        [&](WifiMacHelper& mac) {
            mac.SetMultiUserScheduler("ns3::RrMultiUserScheduler",
                                      "NStations",
                                      UintegerValue(nsta),
                                      "EnableUlOfdma",
                                      BooleanValue(true),
                                      "EnableBsrp",
                                      BooleanValue(bsrp),
                                      "AccessReqInterval",
                                      TimeValue(MicroSeconds(accessUs)));
        },
        true);

    if (colocated)
    {
        // A station's frame then reaches every other station as strongly as the AP's (the
        // log-distance model holds the loss at 1 m below its reference distance): no frame
        // survives an overlap, as in airsched's medium.
        for (uint32_t i = 0; i < n; i++)
        {
            cell.staNodes.Get(i)->GetObject<MobilityModel>()->SetPosition(Vector(1.0, 0.0, 0.0));
        }
    }
    for (int dir = 0; dir < 2; dir++)
    {
        g_rxBytes[dir].assign(n, 0);
        g_rxPkts[dir].assign(n, 0);
        g_delaySumUs[dir].assign(n, 0);
        g_ppduEndDelaySumUs[dir].assign(n, 0);
    }
    g_staPpduEndUs.assign(n, 0);
    g_rankOf.assign(n, 0);
    g_staStartUs.assign(n, -1e12);
    g_staDurUs.assign(n, 0);
    g_staMpdus.assign(n, 0);
    for (uint32_t i = 0; i < n; i++)
    {
        for (uint32_t dir = 0; dir < 2; dir++)
        {
            const double mbps = dir == 0 ? dlMbps : ulMbps;
            if (mbps <= 0)
            {
                continue;
            }
            const uint16_t port = (dir == 0 ? 2000 : 1000) + i;
            Ptr<Node> rx = dir == 0 ? cell.staNodes.Get(i) : cell.apNode.Get(0);
            Ptr<Node> tx = dir == 0 ? cell.apNode.Get(0) : cell.staNodes.Get(i);
            const Ipv4Address to = dir == 0 ? cell.staIf.GetAddress(i) : cell.apIf.GetAddress(0);
            UdpServerHelper server(port);
            ApplicationContainer s = server.Install(rx);
            s.Start(Seconds(0.0));
            s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, dir, i));
            UdpClientHelper client(to, port);
            client.SetAttribute("MaxPackets", UintegerValue(0));
            client.SetAttribute("Interval", TimeValue(Seconds(1472.0 * 8 / (mbps * 1e6))));
            client.SetAttribute("PacketSize", UintegerValue(1472));
            ApplicationContainer c = client.Install(tx);
            c.Start(Seconds(0.1) + MicroSeconds(100 * (2 * i + dir)));
            c.Stop(Seconds(duration));
        }
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(cell.staDevs.Get(i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeBoundCallback(&OnStaTx, i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyRxEnd",
                                                  MakeBoundCallback(&OnStaRx, i, true));
        dev->GetPhy()->TraceConnectWithoutContext(
            "PhyRxDrop",
            MakeBoundCallback(
                +[](uint32_t sta, Ptr<const Packet> p, WifiPhyRxfailureReason) {
                    OnStaRx(sta, false, p);
                },
                i));
    }

    Ptr<WifiNetDevice> apWifi = DynamicCast<WifiNetDevice>(cell.apDev.Get(0));
    g_apAddress = apWifi->GetMac()->GetAddress();
    apWifi->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeCallback(&OnApTx));
    apWifi->GetMac()->TraceConnectWithoutContext("AssociatedSta", MakeCallback(&OnAssociated));
    // --traceCol: every QoS Null (a BSRP answer) and QoS Data the AP's PHY passes up from a
    // station, `rxq t= from= null=` (the station's PPDU start unknown here: its end).
    apWifi->GetPhy()->TraceConnectWithoutContext(
        "PhyRxEnd",
        MakeCallback(+[](Ptr<const Packet> p) {
            if (!g_traceCol || !g_measuring)
            {
                return;
            }
            WifiMacHeader hdr;
            p->PeekHeader(hdr);
            if (hdr.IsQosData() && hdr.GetAddr1() == g_apAddress)
            {
                std::printf("rxq t=%.1f from=%u null=%d\n",
                            NowUs(),
                            g_rank[hdr.GetAddr2()],
                            hdr.HasData() ? 0 : 1);
            }
        }));
    apWifi->GetMac()->TraceConnectWithoutContext(
        "PsduResponseTimeout",
        MakeCallback(+[](uint8_t r, Ptr<const WifiPsdu>, const WifiTxVector&) { OnApTimeout(r); }));
    apWifi->GetMac()->TraceConnectWithoutContext(
        "PsduMapResponseTimeout",
        MakeCallback(+[](uint8_t r, WifiPsduMap*, const std::set<Mac48Address>*, std::size_t) {
            OnApTimeout(r);
        }));
    Simulator::Schedule(Seconds(warmup), &StartMeasuring);
    // Association ranks (AID - 1) as they stand when measuring starts (with 18 stations and
    // traffic from 0.1 s some associate after 0.5 s).
    Simulator::Schedule(Seconds(warmup), [&]() {
        for (uint32_t i = 0; i < n; i++)
        {
            g_rankOf[i] = g_rank[Mac48Address::ConvertFrom(cell.staDevs.Get(i)->GetAddress())];
        }
    });
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    double total[2] = {0, 0};
    for (uint32_t dir = 0; dir < 2; dir++)
    {
        for (uint32_t i = 0; i < n; i++)
        {
            const double mbps = g_rxBytes[dir][i] * 8.0 / (duration - warmup) / 1e6;
            const uint64_t k = g_rxPkts[dir][i];
            total[dir] += mbps;
            std::printf("sta=%u dir=%s rank=%u goodput_mbps=%.3f mean_delay_ms=%.4f "
                        "ppdu_end_delay_ms=%.4f\n",
                        i,
                        dir == 0 ? "dl" : "ul",
                        g_rankOf[i],
                        mbps,
                        k ? g_delaySumUs[dir][i] / k / 1e3 : 0.0,
                        k ? g_ppduEndDelaySumUs[dir][i] / k / 1e3 : 0.0);
        }
    }
    // WifiTxTimer::Reason: count, e.g. "3:12,7:40" (ns-3.44's wifi-tx-timer.h: 3
    // WAIT_BLOCK_ACK, 7 WAIT_TB_PPDU_AFTER_BASIC_TF, 8 WAIT_QOS_NULL_AFTER_BSRP_TF).
    std::string timeouts;
    // "k:count" for the DL MU PPDUs of which k stations passed up at least one MPDU.
    std::string served;
    for (std::size_t k = 0; k < g_dlMuGotHist.size(); k++)
    {
        if (g_dlMuGotHist[k] > 0)
        {
            served += (served.empty() ? "" : ",") + std::to_string(k) + ":" +
                      std::to_string(g_dlMuGotHist[k]);
        }
    }
    for (const auto& [r, c] : g_apTimeouts)
    {
        timeouts += (timeouts.empty() ? "" : ",") + std::to_string(r) + ":" + std::to_string(c);
    }
    std::printf("n=%u nsta=%u bsrp=%d mu_edca_timer_us=%u dl=%.3f ul=%.3f dl_goodput_mbps=%.3f "
                "ul_goodput_mbps=%.3f dl_mu=%lu dl_mu_users=%lu dl_su=%lu bsrp_tfs=%lu "
                "basic_tfs=%lu tb_ppdus=%lu tb_null=%lu tb_mpdus=%lu sta_su=%lu sta_su_mpdus=%lu "
                "multi_sta_bas=%lu dl_mu_mpdus=%lu ap_timeouts=%s dl_mu_rx_ok=%lu dl_mu_rx_drop=%lu "
                "dl_mu_stations_served=%s basic_answered=%s bsrp_answered=%s "
                "dl_mu_after_basic_answered=%lu/%lu dl_mu_after_basic_unanswered=%lu/%lu "
                "dl_mu_after_other=%lu/%lu\n",
                n,
                nsta,
                bsrp,
                muEdcaTimerUs,
                dlMbps,
                ulMbps,
                total[0],
                total[1],
                static_cast<unsigned long>(g_dlMu),
                static_cast<unsigned long>(g_dlMuUsers),
                static_cast<unsigned long>(g_dlSu),
                static_cast<unsigned long>(g_bsrpTfs),
                static_cast<unsigned long>(g_basicTfs),
                static_cast<unsigned long>(g_tbPpdus),
                static_cast<unsigned long>(g_tbNull),
                static_cast<unsigned long>(g_tbMpdus),
                static_cast<unsigned long>(g_staSu),
                static_cast<unsigned long>(g_staSuMpdus),
                static_cast<unsigned long>(g_msBas),
                static_cast<unsigned long>(g_dlMuMpdus),
                timeouts.c_str(),
                static_cast<unsigned long>(g_dlMuRxOk),
                static_cast<unsigned long>(g_dlMuRxDrop),
                served.c_str(),
                hist(g_tfAnswered[1]).c_str(),
                hist(g_tfAnswered[2]).c_str(),
                static_cast<unsigned long>(g_dlMuAfter[1][1]),
                static_cast<unsigned long>(g_dlMuAfter[1][0]),
                static_cast<unsigned long>(g_dlMuAfter[2][1]),
                static_cast<unsigned long>(g_dlMuAfter[2][0]),
                static_cast<unsigned long>(g_dlMuAfter[0][1]),
                static_cast<unsigned long>(g_dlMuAfter[0][0]));
    Simulator::Destroy();
    return 0;
}
