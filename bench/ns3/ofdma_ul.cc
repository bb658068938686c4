// SPDX-License-Identifier: Apache-2.0
//
// The ns-3 3.44 side of airsched's uplink OFDMA comparison (docs/model-ofdma.md,
// bench/ns3/README.md): the cell of ofdma_cell.h, 80 MHz, 1.6 us GI (HE TB PPDUs allow 1.6 and
// 3.2 us only), one spatial stream. The AP runs ns-3's RrMultiUserScheduler with
// NStations = --nsta (at most 74), EnableUlOfdma = true, EnableBsrp = --bsrp (default false:
// with a TXOP limit of zero and no downlink frames, ns-3 3.44's scheduler answers every access
// with a BSRP Trigger and never a Basic one), AccessReqInterval = --access us (the AP asks for
// the medium that often when it has no downlink frames; default 0 would never trigger), UlPsduSize
// 500 B (default), and the stations set the Queue Size of their QoS Data frames
// (QosFrameExchangeManager::SetQueueSize = true), from which the AP learns their buffer status.
// Per station a UdpClient on the station sends 1472-byte datagrams (1538-byte MPDUs) at --rate
// Mb/s to a UdpServer on the AP (start staggered by 0.1 ms per station), which counts bytes and
// the one-way delay from the SeqTsHeader's timestamp over [warmup, duration] (and the delay to the
// end of the PPDU that carried the packet, as airsched delivers). Prints one line per station and
// one summary line; with --trace=K the first K Trigger frames after warmup with the HE TB PPDUs
// and the Multi-STA BlockAck that follow each ("tf", "tb", "ba" lines: start and duration in us,
// the stations' association ranks (AID - 1), RU widths in MHz, MPDUs).
//
//   ofdma_ul --n=9 --mcs=7 --rate=50 [--nsta=9] [--access=1000] [--bsrp=0] [--duration=3]
//            [--warmup=1] [--trace=0]

#include "ofdma_cell.h"

#include <algorithm>
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
std::vector<double> g_ppduEndDelaySumUs;
// Per station: the end of the PPDU it is sending (the AP passes each MPDU up as it ends).
std::vector<double> g_ppduEndUs;
// Whether each station's last PPDU was an HE TB PPDU, and the delays to PPDU end of the
// packets received by path ([0] TB, [1] single-user): count and sum (us).
std::vector<bool> g_lastTb;
uint64_t g_pathPkts[2] = {0, 0};
double g_pathDelayUs[2] = {0, 0};
std::map<Mac48Address, uint32_t> g_rank;
std::vector<uint32_t> g_rankOf;
uint32_t g_trace = 0;
bool g_tracing = false;
// Print every single-user station PPDU after warmup (start, duration, station, MPDUs).
bool g_traceSu = false;
// --traceBsr: at every Basic Trigger after warmup, per solicited station the buffer status the
// AP holds for it (ApWifiMac::GetMaxBufferStatus) and what the station's MAC queue then holds;
// and the Queue Size every station PSDU carries. Reads state only: the simulation is unchanged.
bool g_traceBsr = false;
Ptr<ApWifiMac> g_apMac;
std::vector<Ptr<WifiMac>> g_staMacs;
std::map<Mac48Address, uint32_t> g_staIdx;
// With --traceState: append the station's CW and its BE queue length (MPDUs in the MAC queue,
// in flight included) to each "su" and "tb" line (printing only; the simulation is unchanged).
bool g_traceState = false;
// --traceAck: print every single-user Ack and BlockAck the AP sends after warmup ("ack t= dur=";
// printing only), so that a trace shows which single-user PPDUs were decoded.
bool g_traceAck = false;
// --traceAssoc: print every (re)association the AP accepts ("assoc t= aid="; printing only).
bool g_traceAssoc = false;
std::vector<Ptr<WifiMacQueue>> g_beQueue;
uint64_t g_basicTfs = 0;
uint64_t g_bsrpTfs = 0;
uint64_t g_tbPpdus = 0;
uint64_t g_tbMpdus = 0;
uint64_t g_suPpdus = 0;
uint64_t g_suMpdus = 0;
uint64_t g_msBas = 0;
double g_tbAirUs = 0;
uint64_t g_dlMu = 0;
// Single-user contention (--su): every station PPDU after warm-up (start, end, station, kind:
// 0 data, 1 BlockAckReq, 2 other; data MPDUs), the AP's BlockAck responses, and per station the
// CW each backoff was drawn with.
struct StaTx
{
    double start;
    double end;
    uint32_t sta;
    int kind;
    std::size_t mpdus;
};
std::vector<StaTx> g_staTx;
uint64_t g_apBas = 0;
std::vector<uint32_t> g_cw;
std::map<uint32_t, uint64_t> g_cwHist;
// The AP's single-user responses (BlockAck or Ack) after warm-up: duration (ns) -> count.
std::map<int64_t, uint64_t> g_respHist;
// Gaps (us, rounded) between busy periods, after a success and after a collision.
std::map<int64_t, uint64_t> g_gapOkHist;
std::map<int64_t, uint64_t> g_gapCollHist;

double
NowUs()
{
    return Simulator::Now().GetNanoSeconds() / 1e3;
}

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
    g_delaySumUs[sta] += NowUs() - ts.GetTs().GetNanoSeconds() / 1e3;
    g_ppduEndDelaySumUs[sta] += g_ppduEndUs[sta] - ts.GetTs().GetNanoSeconds() / 1e3;
    g_pathPkts[g_lastTb[sta] ? 0 : 1]++;
    g_pathDelayUs[g_lastTb[sta] ? 0 : 1] += g_ppduEndUs[sta] - ts.GetTs().GetNanoSeconds() / 1e3;
}

void
OnStaTx(uint32_t sta, WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    const double dur =
        WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    g_ppduEndUs[sta] = NowUs() + dur;
    g_lastTb[sta] = tx.IsUlMu();
    Ptr<const WifiPsdu> psdu = psdus.begin()->second;
    std::size_t data = 0;
    for (const auto& mpdu : *PeekPointer(psdu))
    {
        data += mpdu->GetHeader().IsQosData() && mpdu->GetPacket()->GetSize() > 0 ? 1 : 0;
    }
    if (g_measuring && !tx.IsUlMu())
    {
        const WifiMacHeader& h = psdu->GetHeader(0);
        const int kind = h.IsQosData() ? 0 : (h.IsBlockAckReq() ? 1 : 2);
        g_staTx.push_back({NowUs(), NowUs() + dur, sta, kind, data});
        if (g_traceSu)
        {
            std::printf("su t=%.1f dur=%.1f sta=%u mpdus=%zu", NowUs(), dur, g_rankOf[sta], data);
            if (g_traceState)
            {
                std::printf(" cw=%u queue=%u", g_cw[sta], g_beQueue[sta]->GetNPackets());
            }
            std::printf("\n");
        }
    }
    if (g_measuring && g_traceBsr)
    {
        const WifiMacHeader& h = psdu->GetHeader(0);
        if (h.IsQosData())
        {
            std::printf("qs t=%.1f sta=%u tb=%d qs=%u mpdus=%zu\n",
                        NowUs(),
                        g_rankOf[sta],
                        tx.IsUlMu() ? 1 : 0,
                        static_cast<unsigned>(h.GetQosQueueSize()),
                        data);
        }
    }
    if (g_tracing && tx.IsUlMu())
    {
        std::printf("tb t=%.1f dur=%.1f sta=%u mpdus=%zu size=%u",
                    NowUs(),
                    dur,
                    g_rankOf[sta],
                    data,
                    psdu->GetSize());
        if (g_traceState)
        {
            std::printf(" cw=%u queue=%u", g_cw[sta], g_beQueue[sta]->GetNPackets());
        }
        std::printf("\n");
    }
    if (!g_measuring)
    {
        return;
    }
    if (tx.IsUlMu())
    {
        g_tbPpdus++;
        g_tbMpdus += data;
        g_tbAirUs += dur;
    }
    else if (data > 0)
    {
        g_suPpdus++;
        g_suMpdus += data;
    }
}

void
OnApTx(WifiConstPsduMap psdus, WifiTxVector tx, double)
{
    const double dur =
        WifiPhy::CalculateTxDuration(psdus, tx, WIFI_PHY_BAND_5GHZ).GetNanoSeconds() / 1e3;
    if (tx.IsDlMu())
    {
        g_dlMu += g_measuring;
        return;
    }
    Ptr<const WifiPsdu> psdu = psdus.begin()->second;
    const WifiMacHeader& hdr = psdu->GetHeader(0);
    if (g_measuring && (hdr.IsAck() || hdr.IsBlockAck()) && !tx.IsMu())
    {
        g_respHist[std::llround(dur * 1000)]++;
        if (g_traceAck)
        {
            std::printf("ack t=%.1f dur=%.1f\n", NowUs(), dur);
        }
    }
    if (hdr.IsTrigger())
    {
        CtrlTriggerHeader trigger;
        Ptr<Packet> copy = psdu->GetPayload(0)->Copy();
        copy->RemoveHeader(trigger);
        if (g_measuring)
        {
            (trigger.IsBasic() ? g_basicTfs : g_bsrpTfs) += 1;
        }
        if (g_measuring && g_traceBsr && trigger.IsBasic())
        {
            std::printf("bsr t=%.1f ul_length=%u", NowUs(), trigger.GetUlLength());
            for (const auto& ui : trigger)
            {
                auto addr = g_apMac->GetMldOrLinkAddressByAid(ui.GetAid12());
                const uint32_t i = g_staIdx[*addr];
                const WifiContainerQueueId id{WIFI_QOSDATA_QUEUE,
                                              WIFI_UNICAST,
                                              g_apMac->GetAddress(),
                                              0};
                Ptr<WifiMacQueue> q = g_staMacs[i]->GetQosTxop(AC_BE)->GetWifiMacQueue();
                uint32_t inflight = 0;
                for (Ptr<WifiMpdu> m = q->PeekByQueueId(id); m; m = q->PeekByQueueId(id, m))
                {
                    inflight += m->IsInFlight() ? m->GetSize() : 0;
                }
                std::printf(" %u:%u:%u:%u",
                            ui.GetAid12() - 1,
                            static_cast<unsigned>(g_apMac->GetMaxBufferStatus(*addr)),
                            q->GetNBytes(id),
                            inflight);
            }
            std::printf("\n");
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
                std::printf(" %u:%u",
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
        if (!ba.IsMultiSta())
        {
            g_apBas += g_measuring;
        }
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

void
OnCw(uint32_t sta, uint32_t cw, uint8_t)
{
    g_cw[sta] = cw;
}

// The AP's best-effort backoff draws after warm-up (with --traceSu): time and slots.
void
OnApBackoff(uint32_t slots, uint8_t)
{
    if (g_measuring && g_traceSu)
    {
        std::printf("apbo t=%.1f slots=%u\n", NowUs(), slots);
    }
}

// The AP's best-effort CW after warm-up (with --traceSu): time and CW (printing only).
void
OnApCw(uint32_t cw, uint8_t)
{
    if (g_measuring && g_traceSu)
    {
        std::printf("apcw t=%.1f cw=%u\n", NowUs(), cw);
    }
}

void
OnBackoff(uint32_t sta, uint32_t, uint8_t)
{
    if (g_measuring)
    {
        g_cwHist[g_cw[sta]]++;
    }
}

// The single-user contention summary (see g_staTx): busy periods are runs of overlapping
// station PPDUs; one of two or more PPDUs is a collision.
void
PrintContention()
{
    std::sort(g_staTx.begin(), g_staTx.end(), [](const StaTx& a, const StaTx& b) {
        return a.start < b.start;
    });
    uint64_t att[3] = {0, 0, 0};
    uint64_t coll[3] = {0, 0, 0};
    uint64_t periods = 0;
    uint64_t collPeriods = 0;
    uint64_t dataMpdus = 0;
    double okDataUs = 0;
    double maxGap = 0;
    double collUs = 0;
    double gapAfterColl = 0;
    double gapAfterOk = 0;
    uint64_t nGapColl = 0;
    uint64_t nGapOk = 0;
    std::size_t i = 0;
    double prevEnd = -1;
    bool prevColl = false;
    while (i < g_staTx.size())
    {
        std::size_t j = i + 1;
        double end = g_staTx[i].end;
        while (j < g_staTx.size() && g_staTx[j].start < end)
        {
            end = std::max(end, g_staTx[j].end);
            j++;
        }
        const bool collided = j - i > 1;
        if (prevEnd >= 0)
        {
            (prevColl ? gapAfterColl : gapAfterOk) += g_staTx[i].start - prevEnd;
            (prevColl ? g_gapCollHist : g_gapOkHist)[std::llround(g_staTx[i].start - prevEnd)]++;
            (prevColl ? nGapColl : nGapOk) += 1;
            maxGap = std::max(maxGap, g_staTx[i].start - prevEnd);
        }
        for (std::size_t k = i; k < j; k++)
        {
            att[g_staTx[k].kind]++;
            coll[g_staTx[k].kind] += collided;
            if (g_staTx[k].kind == 0 && !collided)
            {
                dataMpdus += g_staTx[k].mpdus;
                okDataUs += g_staTx[k].end - g_staTx[k].start;
            }
        }
        periods++;
        if (collided)
        {
            collPeriods++;
            collUs += end - g_staTx[i].start;
        }
        prevEnd = end;
        prevColl = collided;
        i = j;
    }
    const uint64_t all = att[0] + att[1] + att[2];
    const uint64_t allColl = coll[0] + coll[1] + coll[2];
    std::printf("contention data_attempts=%lu bar_attempts=%lu other_attempts=%lu collided_data=%lu "
                "collided_bar=%lu p_collision=%.4f busy_periods=%lu collision_periods=%lu "
                "mean_collision_us=%.1f mpdus_per_ok_data_ppdu=%.1f gap_after_ok_us=%.1f "
                "gap_after_collision_us=%.1f ap_block_acks=%lu ok_data_ppdu_us=%.1f max_gap_us=%.1f "
                "first_us=%.1f last_us=%.1f\n",
                static_cast<unsigned long>(att[0]),
                static_cast<unsigned long>(att[1]),
                static_cast<unsigned long>(att[2]),
                static_cast<unsigned long>(coll[0]),
                static_cast<unsigned long>(coll[1]),
                all ? static_cast<double>(allColl) / all : 0.0,
                static_cast<unsigned long>(periods),
                static_cast<unsigned long>(collPeriods),
                collPeriods ? collUs / collPeriods : 0.0,
                att[0] > coll[0] ? static_cast<double>(dataMpdus) / (att[0] - coll[0]) : 0.0,
                nGapOk ? gapAfterOk / nGapOk : 0.0,
                nGapColl ? gapAfterColl / nGapColl : 0.0,
                static_cast<unsigned long>(g_apBas),
                att[0] > coll[0] ? okDataUs / (att[0] - coll[0]) : 0.0,
                maxGap,
                g_staTx.empty() ? 0.0 : g_staTx.front().start,
                prevEnd);
    // The most frequent gaps and every response duration.
    for (const auto& [name, hist] : {std::pair{"gaps_after_ok", &g_gapOkHist},
                                     std::pair{"gaps_after_collision", &g_gapCollHist},
                                     std::pair{"ap_responses_ns", &g_respHist}})
    {
        std::vector<std::pair<uint64_t, int64_t>> top;
        for (const auto& [v, c] : *hist)
        {
            top.emplace_back(c, v);
        }
        std::sort(top.rbegin(), top.rend());
        std::printf("%s", name);
        for (std::size_t k = 0; k < std::min<std::size_t>(top.size(), 12); k++)
        {
            std::printf(" %ld:%lu", static_cast<long>(top[k].second), static_cast<unsigned long>(top[k].first));
        }
        std::printf("\n");
    }
    std::printf("cw_at_backoff");
    for (const auto& [cw, count] : g_cwHist)
    {
        std::printf(" %u:%lu", cw, static_cast<unsigned long>(count));
    }
    std::printf("\n");
}

void
OnAssociated(uint16_t aid, Mac48Address address)
{
    g_rank[address] = aid - 1;
    if (g_traceAssoc)
    {
        std::printf("assoc t=%.1f aid=%u\n", NowUs(), static_cast<unsigned>(aid));
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
    uint32_t n = 4;
    uint32_t nsta = 0;
    uint32_t mcs = 7;
    double rateMbps = 50;
    double duration = 3.0;
    double warmup = 1.0;
    uint32_t seed = 1;
    uint32_t width = 80;
    uint32_t accessUs = 1000;
    bool bsrp = false;
    bool su = false;
    bool explicitBar = true;
    bool ownGi = false;
    bool colocated = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("n", "stations", n);
    cmd.AddValue("nsta", "RrMultiUserScheduler::NStations (0: n, at most 74)", nsta);
    cmd.AddValue("mcs", "HE MCS of every link", mcs);
    cmd.AddValue("width", "channel width in MHz", width);
    cmd.AddValue("rate", "offered UDP load per station in Mb/s", rateMbps);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "seconds before measuring", warmup);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("access", "MultiUserScheduler::AccessReqInterval in us", accessUs);
    cmd.AddValue("bsrp", "RrMultiUserScheduler::EnableBsrp", bsrp);
    cmd.AddValue("su", "single-user: no multi-user scheduler on the AP", su);
    cmd.AddValue("explicitBar",
                 "QosTxop::UseExplicitBarAfterMissedBlockAck (ns-3's default true)",
                 explicitBar);
    cmd.AddValue("ownGi",
                 "single-user data at the configured 1.6 us guard interval (ns-3 uses 3.2 us)",
                 ownGi);
    cmd.AddValue("trace", "print the first K Trigger frames after warmup", g_trace);
    cmd.AddValue("traceSu",
                 "print every single-user station PPDU and every AP backoff draw after warmup",
                 g_traceSu);
    cmd.AddValue("traceBsr",
                 "print at every Basic Trigger the AP's stored buffer status and the stations' "
                 "queues (\"bsr t= ul_length= rank:queue_size:queued_bytes:in_flight_bytes\"), and "
                 "the Queue Size of every station PSDU (\"qs\")",
                 g_traceBsr);
    cmd.AddValue("traceState",
                 "with traceSu/trace: each su and tb line also prints the station's CW and BE queue",
                 g_traceState);
    cmd.AddValue("traceAck", "print every single-user Ack and BlockAck the AP sends", g_traceAck);
    cmd.AddValue("traceAssoc", "print every (re)association the AP accepts", g_traceAssoc);
    cmd.AddValue("colocated",
                 "all stations at one point 1 m from the AP (no capture between them)",
                 colocated);
    cmd.Parse(argc, argv);
    if (nsta == 0)
    {
        nsta = std::min<uint32_t>(n, 74);
    }

    Config::SetDefault("ns3::QosFrameExchangeManager::SetQueueSize", BooleanValue(true));
    Config::SetDefault("ns3::QosTxop::UseExplicitBarAfterMissedBlockAck", BooleanValue(explicitBar));
    auto cell = airsched::BuildOfdmaCell(n, width, mcs, 1600, seed, [&](WifiMacHelper& mac) {
        if (su)
        {
            return;
        }
        mac.SetMultiUserScheduler("ns3::RrMultiUserScheduler",
                                  "NStations",
                                  UintegerValue(nsta),
                                  "EnableUlOfdma",
                                  BooleanValue(true),
                                  "EnableBsrp",
                                  BooleanValue(bsrp),
                                  "AccessReqInterval",
                                  TimeValue(MicroSeconds(accessUs)));
    }, ownGi);
    if (colocated)
    {
        // Every station at the same point (1, 0, 0): LogDistancePropagationLossModel returns the
        // reference loss at any distance up to its reference distance (1 m), so a station's PPDU
        // reaches every other station exactly as strongly as the AP's, and no receiver finds one
        // of two overlapping PPDUs 4 dB above the other (ThresholdPreambleDetectionModel): every
        // overlap is lost at every receiver, as in airsched's medium.
        for (uint32_t i = 0; i < n; i++)
        {
            cell.staNodes.Get(i)->GetObject<MobilityModel>()->SetPosition(Vector(1.0, 0.0, 0.0));
        }
    }

    g_rxBytes.assign(n, 0);
    g_rxPkts.assign(n, 0);
    g_delaySumUs.assign(n, 0);
    g_ppduEndDelaySumUs.assign(n, 0);
    g_ppduEndUs.assign(n, 0);
    g_lastTb.assign(n, false);
    g_rankOf.assign(n, 0);
    g_cw.assign(n, 15);
    g_beQueue.assign(n, nullptr);
    const double interval = 1472.0 * 8 / (rateMbps * 1e6);
    for (uint32_t i = 0; i < n; i++)
    {
        const uint16_t port = 1000 + i;
        UdpServerHelper server(port);
        ApplicationContainer s = server.Install(cell.apNode.Get(0));
        s.Start(Seconds(0.0));
        s.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, i));
        UdpClientHelper client(cell.apIf.GetAddress(0), port);
        client.SetAttribute("MaxPackets", UintegerValue(0));
        client.SetAttribute("Interval", TimeValue(Seconds(interval)));
        client.SetAttribute("PacketSize", UintegerValue(1472));
        ApplicationContainer c = client.Install(cell.staNodes.Get(i));
        c.Start(Seconds(0.1) + MicroSeconds(100 * i));
        c.Stop(Seconds(duration));
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(cell.staDevs.Get(i));
        dev->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeBoundCallback(&OnStaTx, i));
        Ptr<QosTxop> be = dev->GetMac()->GetQosTxop(AC_BE);
        g_beQueue[i] = be->GetWifiMacQueue();
        be->TraceConnectWithoutContext("CwTrace", MakeBoundCallback(&OnCw, i));
        be->TraceConnectWithoutContext("BackoffTrace", MakeBoundCallback(&OnBackoff, i));
    }

    Ptr<WifiNetDevice> apWifi = DynamicCast<WifiNetDevice>(cell.apDev.Get(0));
    g_apMac = DynamicCast<ApWifiMac>(apWifi->GetMac());
    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<WifiNetDevice> dev = DynamicCast<WifiNetDevice>(cell.staDevs.Get(i));
        g_staMacs.push_back(dev->GetMac());
        g_staIdx[dev->GetMac()->GetAddress()] = i;
    }
    apWifi->GetPhy()->TraceConnectWithoutContext("PhyTxPsduBegin", MakeCallback(&OnApTx));
    apWifi->GetMac()->TraceConnectWithoutContext("AssociatedSta", MakeCallback(&OnAssociated));
    apWifi->GetMac()->GetQosTxop(AC_BE)->TraceConnectWithoutContext("BackoffTrace",
                                                                     MakeCallback(&OnApBackoff));
    apWifi->GetMac()->GetQosTxop(AC_BE)->TraceConnectWithoutContext("CwTrace",
                                                                     MakeCallback(&OnApCw));
    Simulator::Schedule(Seconds(warmup), &StartMeasuring);
    Simulator::Schedule(Seconds(0.5), [&]() {
        for (uint32_t i = 0; i < n; i++)
        {
            g_rankOf[i] = g_rank[Mac48Address::ConvertFrom(cell.staDevs.Get(i)->GetAddress())];
        }
    });
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
                "basic_tfs=%lu bsrp_tfs=%lu tb_ppdus=%lu tb_mpdus=%lu su_ppdus=%lu su_mpdus=%lu "
                "multi_sta_bas=%lu tb_ppdu_us=%.1f dl_mu=%lu\n",
                n,
                nsta,
                mcs,
                width,
                rateMbps,
                total,
                pkts ? delaySum / pkts / 1e3 : 0.0,
                static_cast<unsigned long>(g_basicTfs),
                static_cast<unsigned long>(g_bsrpTfs),
                static_cast<unsigned long>(g_tbPpdus),
                static_cast<unsigned long>(g_tbMpdus),
                static_cast<unsigned long>(g_suPpdus),
                static_cast<unsigned long>(g_suMpdus),
                static_cast<unsigned long>(g_msBas),
                g_tbPpdus ? g_tbAirUs / g_tbPpdus : 0.0,
                static_cast<unsigned long>(g_dlMu));
    std::printf("delay_by_path tb_pkts=%lu tb_ppdu_end_delay_ms=%.4f su_pkts=%lu su_ppdu_end_delay_ms=%.4f\n",
                static_cast<unsigned long>(g_pathPkts[0]),
                g_pathPkts[0] ? g_pathDelayUs[0] / g_pathPkts[0] / 1e3 : 0.0,
                static_cast<unsigned long>(g_pathPkts[1]),
                g_pathPkts[1] ? g_pathDelayUs[1] / g_pathPkts[1] / 1e3 : 0.0);
    PrintContention();
    g_apMac = nullptr;
    g_staMacs.clear();
    Simulator::Destroy();
    return 0;
}
