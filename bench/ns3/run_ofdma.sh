#!/bin/sh
# Builds ofdma_dl.cc and ofdma_ul.cc against the ns-3 3.44 wheel (as run_ns3.sh does) and runs
# the OFDMA comparisons of docs/model-ofdma.md: 4, 9 and 18 stations, HE MCS 7, 1 SS, 80 MHz.
#   NS3_VENV=/path/to/venv sh bench/ns3/run_ofdma.sh [dl|ul|both]
# dl (about 23 min): downlink, saturated (700/N Mb/s offered per station) and half loaded
#   (120/N Mb/s); writes ofdma_dl.csv (one row per station) and ofdma_dl_ppdus.txt (the first 12
#   DL MU PPDUs after warm-up).
# ul (about 1 min): uplink from every station, saturated (700/N Mb/s) and half loaded (120/N),
#   AccessReqInterval 1 ms; writes ofdma_ul.csv and ofdma_ul_trace.txt (the first 12 Trigger
#   frames after warm-up with their HE TB PPDUs and Multi-STA BlockAcks).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-both}
venv=${NS3_VENV:-$here/.venv}
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q "ns3==3.44.post0"; }
ns=$(echo "$venv"/lib/python3*/site-packages/ns3)
libs=""
for m in core network internet applications mobility wifi propagation spectrum antenna energy stats bridge traffic-control point-to-point; do
    libs="$libs $ns/lib64/libns3.44-$m.so"
done
# run DIR: both load levels of each station count; DIR's summary lines to stdout.
run() {
    dir=$1
    g++ -O2 -std=c++20 -I"$ns/include" "$here/ofdma_$dir.cc" -o "$here/ofdma_$dir" -Wl,-rpath,"$ns/lib64" $libs
    out=$here/ofdma_$dir.csv
    if [ "$dir" = dl ]; then trace=$here/ofdma_dl_ppdus.txt; opt=--ppdus=12; keep='^ppdu'; else trace=$here/ofdma_ul_trace.txt; opt=--trace=12; keep='^t[fb] \|^ba '; fi
    echo "n,load,rate_mbps,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms" > "$out"
    : > "$trace"
    for n in 4 9 18; do
        for load in half saturated; do
            if [ "$load" = saturated ]; then total=700; else total=120; fi
            rate=$(echo "$total $n" | awk '{printf "%.4f", $1 / $2}')
            "$here/ofdma_$dir" --n="$n" --rate="$rate" --duration=3 --warmup=1 "$opt" > "$here/.ofdma_run.txt"
            { echo "# n=$n load=$load"; grep "$keep" "$here/.ofdma_run.txt"; } >> "$trace"
            grep '^n=' "$here/.ofdma_run.txt"
            grep '^sta=' "$here/.ofdma_run.txt" | sed 's/sta=[0-9]* rank=\([0-9]*\) goodput_mbps=\([0-9.]*\) mean_delay_ms=\([0-9.]*\) ppdu_end_delay_ms=\([0-9.]*\)/\1,\2,\3,\4/' \
                | sort -t, -k1n | sed "s/^/$n,$load,$rate,/" >> "$out"
        done
    done
    rm -f "$here/.ofdma_run.txt"
}
case $what in
dl) run dl ;;
ul) run ul ;;
both) run dl; run ul ;;
*) echo "usage: run_ofdma.sh [dl|ul|both]" >&2; exit 2 ;;
esac
