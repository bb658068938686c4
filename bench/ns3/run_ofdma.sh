#!/bin/sh
# Builds ofdma_dl.cc and ofdma_ul.cc against the ns-3 3.44 wheel (as run_ns3.sh does) and runs
# the OFDMA comparisons of docs/model-ofdma.md: 4, 9 and 18 stations, HE MCS 7, 1 SS, 80 MHz.
#   NS3_VENV=/path/to/venv sh bench/ns3/run_ofdma.sh [dl|ul|su|seeds|colocated|credits|both]
# dl (about 23 min): downlink, saturated (700/N Mb/s offered per station) and half loaded
#   (120/N Mb/s); writes ofdma_dl.csv (one row per station) and ofdma_dl_ppdus.txt (the first 12
#   DL MU PPDUs after warm-up).
# credits (about 4 min): the downlink with 9 and 18 stations, half loaded and saturated, 1.5 s
#   from the start (--warmup=0), every DL MU PPDU (duration, users, RU widths) and every
#   association; writes ofdma_dl_credits.txt, the history that the unit tests of
#   crates/airsched-core/src/wifi/ht/ofdma.rs (mod ns3_history) replay through airsched's credit
#   rule (RrMultiUserScheduler::UpdateCredits).
# ul (about 5 min): uplink from every station, saturated (700/N Mb/s) and half loaded (120/N),
#   AccessReqInterval 1 ms; writes ofdma_ul.csv and ofdma_ul_trace.txt (the first 12 Trigger
#   frames after warm-up with their HE TB PPDUs and Multi-STA BlockAcks).
# su (about 12 min): the same uplink without the multi-user scheduler (single-user contention);
#   writes su_ul.csv and su_ul_contention.txt (attempts, collision probability, CW at each
#   backoff draw: bench/ns3/bianchi_ul.py is the analytic referee).
# seeds (about 90 min): both half-load uplinks again with the run numbers 2..$SEEDS (default 5),
#   for the mean delay over stations and seeds (one 2-s run's per-station delays spread 3-10x);
#   writes ul_half_seeds.csv (mode su|ofdma, n, seed, then the per-station columns), seed 1
#   taken from su_ul.csv and ofdma_ul.csv.
# colocated (about 1 min a 4-station run, several minutes an 18-station one): both half-load
#   uplinks with every station at one point 1 m from the AP (--colocated=1: no capture between
#   overlapping PPDUs, as in airsched's medium), run numbers 1..$SEEDS (default 12) for each of
#   $NS (default "4 9 18"), seed by seed; each finished run's rows are appended to $OUT (default
#   ul_half_colocated.csv, ul_half_seeds.csv's columns; the header is written when the file does
#   not exist) and its summary lines (counts, contention) to $OUT without .csv plus _summary.txt
#   (a run ns-3 aborts leaves a line "# mode=M n=N seed=S aborted: ..." there and no rows).
# ul and su run ns-3 like for like with airsched (docs/model-ofdma.md): single-user data at the
# configured 1.6 us guard interval (--ownGi=1; ns-3 3.44 would use 3.2 us) and the A-MPDU sent
# again after a missed BlockAck (--explicitBar=0; ns-3's default sends a BlockAckReq first).
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
    [ "$dir" = su ] && dir=ul
    [ "$here/ofdma_$dir" -nt "$here/ofdma_$dir.cc" ] && [ "$here/ofdma_$dir" -nt "$here/ofdma_cell.h" ] || g++ -O2 -std=c++20 -I"$ns/include" "$here/ofdma_$dir.cc" -o "$here/ofdma_$dir" -Wl,-rpath,"$ns/lib64" $libs
    out=$here/ofdma_$dir.csv
    if [ "$dir" = dl ]; then trace=$here/ofdma_dl_ppdus.txt; opt=--ppdus=12; keep='^ppdu'
    elif [ "$1" = su ]; then out=$here/su_ul.csv; trace=$here/su_ul_contention.txt; opt="--su=1 --ownGi=1 --explicitBar=0"; keep='^contention\|^cw_at\|^gaps_after\|^ap_responses'
    else trace=$here/ofdma_ul_trace.txt; opt="--trace=12 --ownGi=1 --explicitBar=0"; keep='^t[fb] \|^ba '; fi
    echo "n,load,rate_mbps,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms" > "$out"
    : > "$trace"
    for n in 4 9 18; do
        for load in half saturated; do
            if [ "$load" = saturated ]; then total=700; else total=120; fi
            rate=$(echo "$total $n" | awk '{printf "%.4f", $1 / $2}')
            tmp=$here/.ofdma_run_$1.txt
            # shellcheck disable=SC2086
            "$here/ofdma_$dir" --n="$n" --rate="$rate" --duration=3 --warmup=1 $opt > "$tmp"
            { echo "# n=$n load=$load"; grep "$keep" "$tmp"; } >> "$trace"
            grep '^n=' "$tmp"
            grep '^sta=' "$tmp" | sed 's/sta=[0-9]* rank=\([0-9]*\) goodput_mbps=\([0-9.]*\) mean_delay_ms=\([0-9.]*\) ppdu_end_delay_ms=\([0-9.]*\)/\1,\2,\3,\4/' \
                | sort -t, -k1n | sed "s/^/$n,$load,$rate,/" >> "$out"
        done
    done
    rm -f "$tmp"
}
# seeds: the half-load cases of su and ul again with run numbers 2..$SEEDS.
seeds() {
    [ "$here/ofdma_ul" -nt "$here/ofdma_ul.cc" ] && [ "$here/ofdma_ul" -nt "$here/ofdma_cell.h" ] || g++ -O2 -std=c++20 -I"$ns/include" "$here/ofdma_ul.cc" -o "$here/ofdma_ul" -Wl,-rpath,"$ns/lib64" $libs
    out=$here/ul_half_seeds.csv
    echo "mode,n,seed,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms" > "$out"
    for mode in su ofdma; do
        if [ $mode = su ]; then src=$here/su_ul.csv; opt="--su=1"; else src=$here/ofdma_ul.csv; opt=""; fi
        for n in 4 9 18; do
            grep "^$n,half," "$src" | cut -d, -f4- | sed "s/^/$mode,$n,1,/" >> "$out"
            rate=$(echo "120 $n" | awk '{printf "%.4f", $1 / $2}')
            for seed in $(seq 2 "${SEEDS:-5}"); do
                # shellcheck disable=SC2086
                "$here/ofdma_ul" --n="$n" --rate="$rate" --duration=3 --warmup=1 --ownGi=1 --explicitBar=0 --seed="$seed" $opt \
                    | grep '^sta=' \
                    | sed 's/sta=[0-9]* rank=\([0-9]*\) goodput_mbps=\([0-9.]*\) mean_delay_ms=\([0-9.]*\) ppdu_end_delay_ms=\([0-9.]*\)/\1,\2,\3,\4/' \
                    | sort -t, -k1n | sed "s/^/$mode,$n,$seed,/" >> "$out"
            done
        done
    done
}
# colocated: the half-load cases of su and ul with --colocated=1, run numbers 1..$SEEDS.
colocated() {
    [ "$here/ofdma_ul" -nt "$here/ofdma_ul.cc" ] && [ "$here/ofdma_ul" -nt "$here/ofdma_cell.h" ] || g++ -O2 -std=c++20 -I"$ns/include" "$here/ofdma_ul.cc" -o "$here/ofdma_ul" -Wl,-rpath,"$ns/lib64" $libs
    out=${OUT:-$here/ul_half_colocated.csv}
    summary=${out%.csv}_summary.txt
    [ -f "$out" ] || echo "mode,n,seed,sta,goodput_mbps,mean_delay_ms,ppdu_end_delay_ms" > "$out"
    tmp=$out.run.txt
    for seed in $(seq 1 "${SEEDS:-12}"); do
        for n in ${NS:-4 9 18}; do
            rate=$(echo "120 $n" | awk '{printf "%.4f", $1 / $2}')
            for mode in su ofdma; do
                if [ $mode = su ]; then opt="--su=1"; else opt=""; fi
                # shellcheck disable=SC2086
                if ! "$here/ofdma_ul" --n="$n" --rate="$rate" --duration=3 --warmup=1 --ownGi=1 --explicitBar=0 --colocated=1 --seed="$seed" $opt > "$tmp" 2> "$tmp.err"; then
                    # A run ns-3 aborts (an NS_ASSERT) leaves no rows, only this line.
                    echo "# mode=$mode n=$n seed=$seed aborted: $(head -1 "$tmp.err")" >> "$summary"
                    continue
                fi
                grep '^sta=' "$tmp" \
                    | sed 's/sta=[0-9]* rank=\([0-9]*\) goodput_mbps=\([0-9.]*\) mean_delay_ms=\([0-9.]*\) ppdu_end_delay_ms=\([0-9.]*\)/\1,\2,\3,\4/' \
                    | sort -t, -k1n | sed "s/^/$mode,$n,$seed,/" >> "$out"
                { echo "# mode=$mode n=$n seed=$seed"; grep -v '^sta=' "$tmp"; } >> "$summary"
            done
        done
    done
    rm -f "$tmp" "$tmp.err"
}
# credits: the scheduler's whole history for ofdma_dl_credits.txt.
credits() {
    [ "$here/ofdma_dl" -nt "$here/ofdma_dl.cc" ] && [ "$here/ofdma_dl" -nt "$here/ofdma_cell.h" ] || g++ -O2 -std=c++20 -I"$ns/include" "$here/ofdma_dl.cc" -o "$here/ofdma_dl" -Wl,-rpath,"$ns/lib64" $libs
    trace=$here/ofdma_dl_credits.txt
    : > "$trace"
    for n in 9 18; do
        for load in half saturated; do
            if [ "$load" = saturated ]; then total=700; else total=120; fi
            rate=$(echo "$total $n" | awk '{printf "%.4f", $1 / $2}')
            { echo "# n=$n load=$load"; "$here/ofdma_dl" --n="$n" --rate="$rate" --duration=1.5 --warmup=0 --ppdus=100000 | grep '^assoc\|^ppdu'; } >> "$trace"
        done
    done
}
case $what in
dl) run dl ;;
ul) run ul ;;
su) run su ;;
seeds) seeds ;;
colocated) colocated ;;
credits) credits ;;
both) run dl; run ul ;;
*) echo "usage: run_ofdma.sh [dl|ul|su|seeds|colocated|credits|both]" >&2; exit 2 ;;
esac
