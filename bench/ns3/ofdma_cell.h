// SPDX-License-Identifier: Apache-2.0
//
// The cell both OFDMA comparison programs of docs/model-ofdma.md build (ofdma_dl.cc,
// ofdma_ul.cc): one 802.11ax AP and N stations on a circle 1 m away (no frame errors), 5 GHz,
// a SpectrumWifiPhy (ns-3's OFDMA examples use it; the Yans channel does not model RUs), a fixed
// HE MCS (ConstantRateWifiManager), BlockAck window 256, A-MPDUs up to 6 500 631 B (aPPDUMaxTime
// bounds them), no RTS/CTS, beacons on, static ARP. The AP runs ns-3's RrMultiUserScheduler; the
// caller sets its attributes (`scheduler`).

#ifndef AIRSCHED_OFDMA_CELL_H
#define AIRSCHED_OFDMA_CELL_H

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/spectrum-module.h"
#include "ns3/wifi-module.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

namespace airsched
{
using namespace ns3;

// ConstantRateWifiManager, but single-user data go out with the device's own HE guard interval.
// ns-3 3.44 sends HE SU data with the guard interval it learns from the peer's HE Capabilities:
// 0.8 us if the peer sets "HE SU PPDU with 1x HE-LTF and 0.8 us GI", else 3.2 us
// (WifiRemoteStationManager::AddStationHeCapabilities, "todo: Using 3200ns"), so two devices
// configured with 1.6 us exchange data at 3.2 us; the element has no bit for 2x HE-LTF with
// 1.6 us because every HE station must support it. With this manager a 1.6 us cell sends its
// single-user data at 1.6 us, as its HE TB PPDUs (the Trigger's GI and HE-LTF type) already are.
class OwnGiConstantRateManager : public ConstantRateWifiManager
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("airsched::OwnGiConstantRateManager")
                                .SetParent<ConstantRateWifiManager>()
                                .AddConstructor<OwnGiConstantRateManager>();
        return tid;
    }

  private:
    WifiTxVector DoGetDataTxVector(WifiRemoteStation* st, MHz_u allowedWidth) override
    {
        WifiModeValue v;
        GetAttribute("DataMode", v);
        const WifiMode mode = v.Get();
        const uint8_t nss = std::min(GetMaxNumberOfTransmitStreams(), GetNumberOfSupportedStreams(st));
        return WifiTxVector(
            mode,
            GetDefaultTxPowerLevel(),
            GetPreambleForTransmission(mode.GetModulationClass(), GetShortPreambleEnabled()),
            GetGuardInterval(),
            GetNumberOfAntennas(),
            nss,
            0,
            GetPhy()->GetTxBandwidth(mode, std::min(allowedWidth, GetChannelWidth(st))),
            GetAggregation(st));
    }
};

struct OfdmaCell
{
    NodeContainer apNode;
    NodeContainer staNodes;
    NetDeviceContainer apDev;
    NetDeviceContainer staDevs;
    Ipv4InterfaceContainer apIf;
    Ipv4InterfaceContainer staIf;
};

// `giNs`: the HE guard interval (HE TB PPDUs allow 1600 and 3200 only); `scheduler` sets the
// RrMultiUserScheduler on the AP's MAC helper; `ownGi`: single-user data at the configured guard
// interval (OwnGiConstantRateManager) rather than ns-3's choice from the peer's capabilities.
inline OfdmaCell
BuildOfdmaCell(uint32_t n,
               uint32_t width,
               uint32_t mcs,
               uint32_t giNs,
               uint32_t seed,
               const std::function<void(WifiMacHelper&)>& scheduler,
               bool ownGi = false)
{
    OfdmaCell c;
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    Config::SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", UintegerValue(4692480));

    c.apNode.Create(1);
    c.staNodes.Create(n);

    Ptr<MultiModelSpectrumChannel> spectrum = CreateObject<MultiModelSpectrumChannel>();
    spectrum->AddPropagationLossModel(CreateObject<LogDistancePropagationLossModel>());
    spectrum->SetPropagationDelayModel(CreateObject<ConstantSpeedPropagationDelayModel>());
    SpectrumWifiPhyHelper phy;
    phy.SetChannel(spectrum);
    phy.Set("ChannelSettings", StringValue("{0, " + std::to_string(width) + ", BAND_5GHZ, 0}"));

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211ax);
    wifi.SetRemoteStationManager(ownGi ? OwnGiConstantRateManager::GetTypeId().GetName()
                                       : std::string("ns3::ConstantRateWifiManager"),
                                 "DataMode",
                                 StringValue("HeMcs" + std::to_string(mcs)),
                                 "ControlMode",
                                 StringValue("HeMcs0"));
    wifi.ConfigHeOptions("GuardInterval", TimeValue(NanoSeconds(giNs)));

    WifiMacHelper mac;
    Ssid ssid("ofdma");
    const uint32_t maxAmpdu = 6500631;
    mac.SetType("ns3::StaWifiMac",
                "Ssid",
                SsidValue(ssid),
                "BE_MaxAmpduSize",
                UintegerValue(maxAmpdu),
                "MpduBufferSize",
                UintegerValue(256));
    c.staDevs = wifi.Install(phy, mac, c.staNodes);
    mac.SetType("ns3::ApWifiMac",
                "Ssid",
                SsidValue(ssid),
                "BE_MaxAmpduSize",
                UintegerValue(maxAmpdu),
                "MpduBufferSize",
                UintegerValue(256));
    scheduler(mac);
    c.apDev = wifi.Install(phy, mac, c.apNode);

    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0.0, 0.0, 0.0));
    for (uint32_t i = 0; i < n; i++)
    {
        const double a = 2 * M_PI * i / n;
        pos->Add(Vector(std::cos(a), std::sin(a), 0.0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(c.apNode);
    mobility.Install(c.staNodes);

    InternetStackHelper stack;
    stack.Install(c.apNode);
    stack.Install(c.staNodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    c.apIf = addr.Assign(c.apDev);
    c.staIf = addr.Assign(c.staDevs);
    NeighborCacheHelper().PopulateNeighborCache();
    return c;
}
} // namespace airsched

#endif
