#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Bianchi's saturation model of DCF (G. Bianchi, "Performance analysis of the IEEE 802.11
distributed coordination function", IEEE JSAC 18(3), 2000), with EDCA's AIFS in place of DIFS
and a retry limit (the chain stops after R attempts), for the single-user uplink cell of
bench/ns3/ofdma_ul.cc: n saturated 802.11ax stations sending A-MPDUs of 1538-byte MPDUs
(1472-byte UDP payloads) to the AP, 80 MHz, HE MCS 7, one stream, AC_BE (AIFSN 3, CWmin 15,
CWmax 1023), slot 9 us, SIFS 16 us, the 32-byte compressed BlockAck at 24 Mb/s.

Two retransmission rules:
  std  the A-MPDU is sent again after a missed BlockAck with CW doubled, CW reset on the
       BlockAck (IEEE 802.11-2020 10.23.2.2; what airsched and Linux drivers do);
  bar  ns-3 3.44's default QosTxop::UseExplicitBarAfterMissedBlockAck = true: after a missed
       BlockAck the next access sends a BlockAckReq (CW doubled); its BlockAck resets CW, and
       the A-MPDU goes again in a later access from CWmin. The attempt rate tau is the same
       fixed point (the BlockAckReq takes the stage the retransmission would have), but a
       fraction p of the successes carry a BlockAckReq, not data.

A success costs PPDU + SIFS + BlockAck + AIFS, a collision the longest PPDU + EIFS (SIFS +
the 44-us estimated ACK + AIFS); the backoff slots are the model's idle slots.

    python3 bench/ns3/bianchi_ul.py [--gi 1.6|3.2] [--mpdus N]
"""
import argparse
import math

SLOT, SIFS, AIFS = 9.0, 16.0, 43.0
T_BA = 20 + 4 * math.ceil((16 + 8 * 32 + 6) / 96)  # 32 us
T_BAR = 20 + 4 * math.ceil((16 + 8 * 24 + 6) / 96)  # 24-byte compressed BlockAckReq: 28 us
EIFS_EXTRA = SIFS + 44.0  # SIFS + EstimatedAckTxTime (an ACK at 6 Mb/s)
PAYLOAD_BITS = 1472 * 8
NDBPS = 980 * 6 * 5 // 6  # 980 data tones, 64-QAM 5/6: 4900 bits per symbol
PREAMBLE = 44.0  # L-STF, L-LTF, L-SIG, RL-SIG, HE-SIG-A, HE-STF, one HE-LTF (as ns-3 times it)


def ppdu_us(mpdus, gi):
    psdu = mpdus * 1544 - 2  # 4-byte delimiter, padded to 4 but the last
    return PREAMBLE + math.ceil((16 + 8 * psdu + 6) / NDBPS) * (12.8 + gi)


def max_mpdus(gi, limit_us=5484.0):
    n = 1
    while ppdu_us(n + 1, gi) <= limit_us:
        n += 1
    return n


def stages(r, w0=16, wmax=1024):
    return [min(w0 * 2**i, wmax) for i in range(r)]


def tau_of(p, r=7):
    w = stages(r)
    return sum(p**i for i in range(r)) / sum(p**i * (w[i] + 1) / 2 for i in range(r))


def fixed_point(n):
    lo, hi = 0.0, 1.0
    for _ in range(200):
        p = (lo + hi) / 2
        if 1 - (1 - tau_of(p)) ** (n - 1) > p:
            lo = p
        else:
            hi = p
    return p, tau_of(p)


def model(n, rule, mpdus, gi):
    p, tau = fixed_point(n)
    t_data = ppdu_us(mpdus, gi)
    p_idle = (1 - tau) ** n
    p_succ = n * tau * (1 - tau) ** (n - 1)
    p_coll = 1 - p_idle - p_succ
    q = p if rule == "bar" else 0.0  # share of attempts that are BlockAckReqs
    p_coll_bar = sum(math.comb(n, k) * (tau * q) ** k * (1 - tau) ** (n - k) for k in range(2, n + 1))
    ts_data = t_data + SIFS + T_BA + AIFS
    ts_bar = T_BAR + SIFS + T_BA + AIFS
    tc_data = t_data + EIFS_EXTRA + AIFS
    tc_bar = T_BAR + EIFS_EXTRA + AIFS
    mean_slot = (
        p_idle * SLOT
        + p_succ * ((1 - q) * ts_data + q * ts_bar)
        + (p_coll - p_coll_bar) * tc_data
        + p_coll_bar * tc_bar
    )
    goodput = p_succ * (1 - q) * mpdus * PAYLOAD_BITS / mean_slot
    return p, tau, goodput, t_data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gi", type=float, default=3.2, help="guard interval in us (1.6 or 3.2)")
    ap.add_argument("--mpdus", type=int, default=0, help="MPDUs per A-MPDU (0: as many as aPPDUMaxTime holds)")
    a = ap.parse_args()
    mpdus = a.mpdus or max_mpdus(a.gi)
    print(f"GI {a.gi} us, {mpdus} MPDUs per A-MPDU, PPDU {ppdu_us(mpdus, a.gi):.1f} us")
    print("| n | p (collision per attempt) | tau | goodput std, Mb/s | goodput bar, Mb/s |")
    print("|---|---|---|---|---|")
    for n in (1, 4, 9, 18):
        p, tau, std, _ = model(n, "std", mpdus, a.gi)
        _, _, bar, _ = model(n, "bar", mpdus, a.gi)
        print(f"| {n} | {p:.3f} | {tau:.4f} | {std:.1f} | {bar:.1f} |")


if __name__ == "__main__":
    main()
