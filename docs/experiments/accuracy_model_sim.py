"""Scheme II's representation error against the policy's accuracy model, and three candidate models
(docs/PERF.md, issue 4 step 16). Not part of the crate: a numpy study of what a tighter model
could claim.

For each input family and moduli count p it prints the scaled bits of the emulated product
(error of the integer representation only: the CRT is exact, the output rounding left out)
measured over every entry, next to what a model predicts (measured / predicted):
  T    truncation toward zero at the fast shifts (the crate's split) / the crate's model: per row
       sigma + e_max - spread, combined over both operands with the 2-bit margin
  l1   the same measurement / the model with the row's mean magnitude in place of 2^(e_max - spread)
  R    round to nearest at the fast shifts of Lambda - 1 (so that |rint(y)| <= 2|y| keeps the CRT
       range) / the crate's model + 1 bit (half the quantum) + a cancellation credit
       max(0, log2(K_eff)/2 - 1.7) per side, K_eff = (sum |b|)^2 / sum b^2 of the other operand
  acc  truncation at the accurate shifts (coarse |A||B| bound, one more product) / no model
Each family: a = (u - 0.5) exp(phi randn) (mixed), its absolute value (nonneg; phi = 1 as a Gram
product), rows scaled by 2^+-200 (scaled), 0.2% of entries times 1e6 (huge), 90% zeros (sparse).

usage: python3 accuracy_model_sim.py K [n] [seed]    (numpy; K = 4096 and n = 256 take a minute)
"""
import math
import sys

import numpy as np

MODULI = [256, 255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193, 191, 181, 179, 173]


def lam(p):
    """src/scheme2.rs lambda: bits of the moduli product minus 3"""
    return math.prod(MODULI[:p]).bit_length() - 3


def exponent(x):
    return np.floor(np.log2(np.abs(x))).astype(np.int64)


def row_stats(a):
    """e_max, the norm bound T (2^32 sum (x / 2^e_max)^2, rounded up), spread, mean magnitude"""
    mag = np.abs(a)
    nz = mag > 0
    ex = np.where(nz, exponent(np.where(nz, a, 1.0)), -(10**6))
    e_max = ex.max(axis=1)
    t = np.ceil(2.0**32 * np.sum((mag / 2.0 ** e_max[:, None]) ** 2, axis=1))
    dist = np.where(nz, e_max[:, None] - ex, 10**6)
    spread = np.array([np.sort(r[r < 10**6])[(np.count_nonzero(r < 10**6) - 1) // 2] for r in dist])
    mean = mag.sum(axis=1) / np.count_nonzero(nz, axis=1)
    k_eff = mag.sum(axis=1) ** 2 / (mag * mag).sum(axis=1)
    return e_max, t, spread, mean, k_eff


def fast_shift(e_max, t, lam_p):
    return np.floor((lam_p + 32 - 2 * e_max - np.ceil(np.log2(t))) / 2).astype(np.int64)


def to_grid(a, s, rounding):
    return rounding(a * 2.0 ** s[:, None]) * 2.0 ** (-s[:, None])


def measured(a, b, sa, sb, rounding, den):
    at, bt = to_grid(a, sa, rounding), to_grid(b, sb, rounding)
    return -np.log2(np.max(np.abs((a - at) @ b.T + at @ (b - bt).T) / den))


def combine(x, y, margin=2.0):
    return -np.log2(2.0**-x + 2.0**-y) - margin


def family(rng, kind, phi, n, k):
    a = (rng.random((n, k)) - 0.5) * np.exp(phi * rng.standard_normal((n, k)))
    if kind == "nonneg":
        a = np.abs(a)
    elif kind == "scaled":
        a *= 2.0 ** rng.integers(-200, 200, (n, 1))
    elif kind == "huge":
        a[rng.random((n, k)) < 0.002] *= 1e6
    elif kind == "sparse":
        a[rng.random((n, k)) < 0.9] = 0
        a[:, 0] += 1.0  # no zero rows
    return a


def main():
    k = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    rng = np.random.default_rng(int(sys.argv[3]) if len(sys.argv) > 3 else 3)
    for kind in ["mixed", "nonneg", "scaled", "huge", "sparse"]:
        for phi in [0.5, 1, 2, 4]:
            a = family(rng, kind, phi, n, k)
            b = a.copy() if (kind, phi) == ("nonneg", 1) else family(rng, kind, phi, n, k)
            ea, ta, spa, ma, ka = row_stats(a)
            eb, tb, spb, mb, kb = row_stats(b)
            den = np.abs(a) @ np.abs(b).T
            credit_a = max(0.0, 0.5 * math.log2(ka.min()) - 1.7)
            credit_b = max(0.0, 0.5 * math.log2(kb.min()) - 1.7)
            s0a, s0b = 5 - exponent(np.abs(a).max(1)), 5 - exponent(np.abs(b).max(1))
            coarse = np.ceil(np.abs(a) * 2.0 ** s0a[:, None]) @ np.ceil(np.abs(b) * 2.0 ** s0b[:, None]).T
            cells = []
            for p in [14, 15, 16, 17]:
                lp = lam(p)
                sa, sb = fast_shift(ea, ta, lp), fast_shift(eb, tb, lp)
                t_bits = measured(a, b, sa, sb, np.trunc, den)
                model = combine(np.min(sa + ea - spa), np.min(sb + eb - spb))
                l1 = combine(np.min(sa + np.log2(ma)), np.min(sb + np.log2(mb)))
                ra, rb = fast_shift(ea, ta, lp - 1), fast_shift(eb, tb, lp - 1)
                r_bits = measured(a, b, ra, rb, np.rint, den)
                r_model = combine(np.min(ra + ea - spa) + 1 + credit_b, np.min(rb + eb - spb) + 1 + credit_a)
                acc_a = s0a + np.floor((lp - np.ceil(np.log2(coarse.max(1)))) / 2).astype(np.int64)
                acc_b = s0b + np.floor((lp - np.ceil(np.log2(coarse.max(0)))) / 2).astype(np.int64)
                acc = measured(a, b, acc_a, acc_b, np.trunc, den)
                cells.append(f"p{p}: T {t_bits:.1f}/{model:.1f} l1 /{l1:.1f} R {r_bits:.1f}/{r_model:.1f} acc {acc:.1f}")
            print(f"K={k} {kind:6s} phi={phi}: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
