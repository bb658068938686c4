#!/bin/sh
# Builds su_saturation.cc against the ns-3 3.44 wheel from PyPI (`pip install ns3==3.44.post0`)
# (and he_cell.cc, the speed comparison's cell, which it does not run) and runs every case of
# cases.csv, writing su_saturation.csv (bench/ns3/README.md); with `amsdu`, every case of
# amsdu_cases.csv (A-MSDU inside A-MPDU), writing amsdu.csv instead.
#   NS3_VENV=/path/to/venv sh bench/ns3/run_ns3.sh [amsdu]
set -eu
what=${1:-su}
here=$(cd "$(dirname "$0")" && pwd)
venv=${NS3_VENV:-$here/.venv}
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q "ns3==3.44.post0"; }
ns=$("$venv/bin/python" -c 'import os, importlib.util as u; print(os.path.dirname(u.find_spec("ns3").origin or u.find_spec("ns3").submodule_search_locations[0]))' 2>/dev/null || true)
[ -d "$ns/include" ] || ns=$(echo "$venv"/lib/python3*/site-packages/ns3)
bin=$here/su_saturation
libs=""
for m in core network internet applications mobility wifi propagation spectrum antenna energy stats bridge traffic-control point-to-point; do
    libs="$libs $ns/lib64/libns3.44-$m.so"
done
for prog in su_saturation he_cell; do
    g++ -O2 -std=c++20 -I"$ns/include" "$here/$prog.cc" -o "$here/$prog" -Wl,-rpath,"$ns/lib64" $libs
done
if [ "$what" = amsdu ]; then
    out=$here/amsdu.csv
    echo "standard,mcs,nss,width,gi_ns,window,max_tx_fragments,max_amsdu_len,ns3_ap_amsdu,ns3_sta_amsdu,phy_mbps,ns3_goodput_mbps,ns3_mpdus_per_ppdu,ns3_msdus_per_mpdu,ns3_max_msdus,ns3_ppdu_us" > "$out"
    tail -n +2 "$here/amsdu_cases.csv" | while IFS=, read -r std mcs nss width gi window frags len ap sta; do
        # A WifiMacQueue of 4000 packets: ns-3 keeps the MPDUs in flight in it, and an A-MPDU
        # of A-MSDUs takes up to ~1100 MSDUs here (ns-3's default 500 would cap the aggregates).
        line=$("$bin" --standard="$std" --mcs="$mcs" --nss="$nss" --width="$width" --gi="$gi" --window="$window" \
            --amsdu="$ap" --staAmsdu="$sta" --macQueue=4000 --counts=1 --duration=3 --warmup=1 | tr '\n' ' ')
        field() { echo "$line" | sed "s/.* $1=\([0-9.]*\).*/\1/"; }
        echo "$std,$mcs,$nss,$width,$gi,$window,$frags,$len,$ap,$sta,$(field phy_mbps),$(field goodput_mbps),$(field mpdus_per_ppdu),$(field msdus_per_mpdu),$(field max_msdus),$(field ppdu_us)" | tee -a "$out"
    done
    exit 0
fi
out=$here/su_saturation.csv
echo "standard,mcs,nss,width,gi_ns,window,phy_mbps,ns3_goodput_mbps" > "$out"
tail -n +2 "$here/cases.csv" | while IFS=, read -r std mcs nss width gi window; do
    line=$("$bin" --standard="$std" --mcs="$mcs" --nss="$nss" --width="$width" --gi="$gi" --window="$window" --duration=3 --warmup=1)
    phy=$(echo "$line" | sed 's/.*phy_mbps=\([0-9.]*\).*/\1/')
    good=$(echo "$line" | sed 's/.*goodput_mbps=\([0-9.]*\).*/\1/')
    echo "$std,$mcs,$nss,$width,$gi,$window,$phy,$good" | tee -a "$out"
done
