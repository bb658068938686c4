#!/bin/sh
# Builds ofdma_dl.cc against the ns-3 3.44 wheel (as run_ns3.sh does) and runs the downlink
# OFDMA comparison of docs/model-ofdma.md: 4, 9 and 18 stations, HE MCS 7, 1 SS, 80 MHz,
# saturated (700/N Mb/s offered per station) and half loaded (120/N Mb/s); writes ofdma_dl.csv
# (one row per station) and ofdma_dl_ppdus.txt (the first 12 DL MU PPDUs after warm-up).
#   NS3_VENV=/path/to/venv sh bench/ns3/run_ofdma.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv=${NS3_VENV:-$here/.venv}
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q "ns3==3.44.post0"; }
ns=$(echo "$venv"/lib/python3*/site-packages/ns3)
libs=""
for m in core network internet applications mobility wifi propagation spectrum antenna energy stats bridge traffic-control point-to-point; do
    libs="$libs $ns/lib64/libns3.44-$m.so"
done
g++ -O2 -std=c++20 -I"$ns/include" "$here/ofdma_dl.cc" -o "$here/ofdma_dl" -Wl,-rpath,"$ns/lib64" $libs
out=$here/ofdma_dl.csv
ppdus=$here/ofdma_dl_ppdus.txt
echo "n,load,rate_mbps,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms" > "$out"
: > "$ppdus"
for n in 4 9 18; do
    for load in half saturated; do
        if [ "$load" = saturated ]; then total=700; else total=120; fi
        rate=$(echo "$total $n" | awk '{printf "%.4f", $1 / $2}')
        "$here/ofdma_dl" --n="$n" --rate="$rate" --duration=3 --warmup=1 --ppdus=12 > "$here/.ofdma_run.txt"
        { echo "# n=$n load=$load"; grep '^ppdu' "$here/.ofdma_run.txt"; } >> "$ppdus"
        grep '^n=' "$here/.ofdma_run.txt"
        grep '^sta=' "$here/.ofdma_run.txt" | sed 's/sta=[0-9]* rank=\([0-9]*\) goodput_mbps=\([0-9.]*\) mean_delay_ms=\([0-9.]*\) ppdu_end_delay_ms=\([0-9.]*\)/\1,\2,\3,\4/' \
            | sort -t, -k1n | sed "s/^/$n,$load,$rate,/" >> "$out"
    done
done
rm -f "$here/.ofdma_run.txt"
