#!/usr/bin/env python3
"""How much of O the L2 writes back to DRAM during a V3 launch, on two cards: a set-sampled LRU model
fitted on the H100's launches and scored on the H200's, which it never saw (issue 27: fa3 at d 128
N 4096 writes 14-15% of O during the launch on the H200); the simulator runs the same rule for V3's
launches (sim/include/flashlab/executor/l2_model.hpp, "early write-back"), its A and c this fit's.

    python3 scripts/check/v3_l2_writeback.py [--flashlab PATH] [--check] [--table]

Data: the staged kernel's Nsight Compute counters (caches flushed before each launch), every row a
checked launch — the H200: tests/data/gpu_v3/v3_bytes.json, v3_l2_share.json and v3_l2_footprint.json
(45 launches); the H100: v3_bytes_h100.json, v3_l2_share_h100.json and v3_l2_footprint_h100.json (45; the
footprint sets: fa3 fp16 d 128 N 4096 B 2 at H 1-8, so the bytes held cross the L2 in steps). The L2's size as each device reports it:
the H200 60 MiB (tests/data/gpu_ceilings/h200.json l2_bytes); the H100 50 MiB, its datasheet's 50 MB
read as the H200's 60 is (its runs did not record the device's figure; c absorbs a difference of scale).

The model (no counter of the launch enters it, only its shape):
- held bytes: Q read once and K, V read by the k = ceil(N / B_r) Q blocks of their head, each line kept
  by the partition it is homed in and copied into the other when a reader sits there (2 - 0.5^k
  copies a line, k readers on either side at random: Q 1.5, K and V ~2), O stored once;
  docs/model.md "The two partitions, measured alone" measured the copies;
- an O line written when a fraction x of the launch's held bytes is still to come leaves the L2 before
  the launch ends when at least A of the lines that follow land in its set (sets picked by address hash,
  A ways, c of the L2 usable): P(Poisson(A x held / (c L2)) >= A), averaged over x uniform on [0, 1]
  (O is written throughout the launch) — Smith's stochastic model of a set-associative LRU;
- A and c: the least squares of written / O over the H100's launches on a fixed grid (A 1-32, c
  0.30-1.20 by 0.02); the H200's launches are held out.
Measured: written / O = dram__bytes_write.sum / (B H N d x 2 bytes).

The page's section also shows the model beside the project's V2 kernel and PyTorch's FA2 on the H200
(tests/data/gpu_timing/h200.json), without a target: before the L2 is full V2 writes far less of O back,
FA2 more.

The simulator's figure for each launch: `flashlab count` with its shape, tile and scheduler (--gpu h100
or h200), DRAM written / O (O's and L's write-back: the measured counter has both).

--check asserts, from the raw counters: DRAM read within 2% of Q, K and V on every launch of both cards
(reads never miss twice, up to twice the L2 held), so O's write-back is the one capacity effect; the fit
within RMS 0.04 of O on the H100; on the held-out H200 an RMS within 0.03 of O and every launch within
0.07 — the read and held-out claims over the launches outside KNOWN_MISSES (each listed with its reason;
--check fails when one stops missing); the simulator's kWriteBack equal to the fit; the simulator's own
figures within RMS 0.04 of O on the fitted H100 and, on the held-out H200 outside KNOWN_MISSES, within
RMS 0.03 and every launch within 0.08 (its held counts L's bytes and writes L back too: at d 128 L is
1/64 of O's bytes). --table prints the page's section. Exit 1 when a claim fails, 2 when the data or
the CLI are missing.
"""

import json
import math
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import v3_kernel_sim as sim  # noqa: E402
from verdict import verdict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "gpu_v3"
MIB = 1 << 20
CARDS = {  # card: (its files, the L2's bytes as the device reports them)
    "H100": (("v3_bytes_h100.json", "v3_l2_share_h100.json", "v3_l2_footprint_h100.json"), 50 * MIB),
    "H200": (("v3_bytes.json", "v3_l2_share.json", "v3_l2_footprint.json"),
             json.loads((ROOT / "tests" / "data" / "gpu_ceilings" / "h200.json").read_text())["l2_bytes"]),
}
GPU = {"H100": ("--gpu", "h100"), "H200": ("--gpu", "h200")}  # the simulator's preset of each card
FIT_ON, HELD_OUT = "H100", "H200"
WAYS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32)
USABLE = tuple(x / 100 for x in range(30, 121, 2))
READ_TOL = 0.02
FIT_RMS, HELD_OUT_RMS, HELD_OUT_MAX = 0.04, 0.03, 0.07
# The simulator's own prediction (Launch::early_write_back: the same rule in its replay, held from
# the tiles it replays, L's write-back included: 1/64 of O's bytes at d 128) on the held-out launches
SIM_HELD_OUT_RMS, SIM_HELD_OUT_MAX = 0.03, 0.08
# Launches the model is known to miss, kept in the data and the fit, left out of the asserted read and
# held-out claims, each shown with its reason; --check fails when one of them stops missing (then it
# leaves this list). (file, mask, heads): reason.
KNOWN_MISSES = {
    ("v3_l2_footprint.json", "causal", 8): "causal at 8 heads, 1.7x the L2 held (H200 footprint set, 2026-12-06 "
    "20:20 UTC): written 0.627 of O against the model's 0.493, and DRAM read 1.023 of Q, K, V; the H100's same "
    "launch (fitted) misses the same way, 0.669 against 0.577. The model takes O as written evenly over the "
    "launch; causal's scheduler hands out the longest Q blocks first (not measured further)",
}
STEPS = 100  # x's midpoints
# The simulator's copy of the fit (Launch::early_write_back, l2_model.hpp kWriteBack{A, c})
RULE_HEADER = ROOT / "sim" / "include" / "flashlab" / "executor" / "l2_model.hpp"


def simulator_rule():
    """(A, c) as the simulator's L2 model has them (l2_model.hpp kWriteBack), None when not found."""
    m = re.search(r"kWriteBack\{(\d+),\s*([0-9.]+)\}", RULE_HEADER.read_text())
    return (int(m.group(1)), float(m.group(2))) if m else None


def simulated_all(cli, by_card):
    """Per card, the simulator's written / O of each launch (simulated)."""
    return {card: simulated(cli, rs) for card, rs in by_card.items()}


def simulated(cli, rs):
    """The simulator's DRAM written / O for each launch of `rs` (`flashlab count` with the launch's
    shape, tile and scheduler), in order."""
    def one(x):
        c = sim.count(cli, x["flags"])
        return c["memory"]["dram"]["total_write_bytes"] / x["o"]
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, rs))


def held_bytes(q, kv, q_blocks):
    """Bytes the L2 holds for a forward launch (Q `q` bytes, K and V `kv` bytes each, O as Q): Q 1.5
    copies, K and V 2 - 0.5^k with k = `q_blocks` Q blocks per head reading them, O once."""
    return 1.5 * q + (2 - 0.5 ** q_blocks) * 2 * kv + q


def launches(card):
    """The card's checked launches: shape, held bytes (the model's), measured DRAM bytes."""
    files, l2 = CARDS[card]
    out = []
    for name in files:
        path = DATA / name
        if not path.exists():
            return None
        for r in json.loads(path.read_text())["rows"]:
            k, run = (r.get("kernels") or [{}])[0], r.get("run")
            if not run or not run.get("check", {}).get("pass") or not isinstance(k.get("dram_wr"), float):
                continue
            one = r["batch"] * r["heads"] * r["n"] * r["d"] * 2
            readers = -(-r["n"] // run["b_r"])
            held = held_bytes(one, one, readers)
            flags = (sim.v3_flags(r, r["variant"]) or sim.v3_flags(r)) + GPU[card]  # static, dynamic: fa3's
            out.append({"card": card, "source": name, "variant": r["variant"], "dtype": r["dtype"], "d": r["d"],
                        "mask": r["mask"], "n": r["n"], "batch": r["batch"], "heads": r["heads"], "readers": readers,
                        "o": one, "held": held, "held_l2": held / l2, "dram_rd": k["dram_rd"],
                        "written_o": k["dram_wr"] / one, "flags": flags})
    return out


def p_at_least(lam, a):
    """P(Poisson(lam) >= a)."""
    term, below = math.exp(-lam), 0.0
    for i in range(a):
        below += term
        term *= lam / (i + 1)
    return max(0.0, 1.0 - below)


def written(held_l2, ways, usable):
    """The model's DRAM written / O at `held_l2` (held bytes over the L2's)."""
    return sum(p_at_least(ways * (i + 0.5) / STEPS * held_l2 / usable, ways) for i in range(STEPS)) / STEPS


def fit(rs):
    """(ways, usable) of least squares over `rs`."""
    return min(((a, c) for a in WAYS for c in USABLE),
               key=lambda p: sum((written(x["held_l2"], *p) - x["written_o"]) ** 2 for x in rs))


def scores(rs, params):
    errs = [written(x["held_l2"], *params) - x["written_o"] for x in rs]
    return math.sqrt(sum(e * e for e in errs) / len(errs)), max(abs(e) for e in errs)


def sim_scores(rs, sims):
    """RMS and max of the simulator's written / O against the measured, over `rs`."""
    errs = [s - x["written_o"] for s, x in zip(sims, rs)]
    return math.sqrt(sum(e * e for e in errs) / len(errs)), max(abs(e) for e in errs)


def known_miss(x):
    return KNOWN_MISSES.get((x["source"], x["mask"], x["heads"]))


def claims(by_card, params, sims):
    """What fails of the module's claims; `sims`: per card the simulator's written / O of each launch."""
    bad = []
    if simulator_rule() != params:
        bad.append(f"the simulator's rule {simulator_rule()} is not the fit {params}: set kWriteBack in {RULE_HEADER.name}")
    kept = [(s, x) for s, x in zip(sims[HELD_OUT], by_card[HELD_OUT]) if not known_miss(x)]
    errs = [s - x["written_o"] for s, x in kept]
    rms, most = math.sqrt(sum(e * e for e in errs) / len(errs)), max(abs(e) for e in errs)
    if rms > SIM_HELD_OUT_RMS or most > SIM_HELD_OUT_MAX:
        bad.append(f"the simulator on the held-out {HELD_OUT}: RMS {rms:.3f} (at most {SIM_HELD_OUT_RMS}), max {most:.3f} "
                   f"(at most {SIM_HELD_OUT_MAX})")
    rms, _ = sim_scores(by_card[FIT_ON], sims[FIT_ON])
    if rms > FIT_RMS:
        bad.append(f"the simulator on the {FIT_ON} (fitted): RMS {rms:.3f} of O above {FIT_RMS}")
    for card, rs in by_card.items():
        for x in rs:
            if known_miss(x):
                err = abs(written(x["held_l2"], *params) - x["written_o"])
                if err <= HELD_OUT_MAX and abs(x["dram_rd"] / (3 * x["o"]) - 1) <= READ_TOL:
                    bad.append(f"{card} {x['source']} {x['mask']} H {x['heads']}: a known miss that now holds "
                               f"(error {err:.3f}): take it out of KNOWN_MISSES")
                continue
            qkv = 3 * x["o"]
            if abs(x["dram_rd"] / qkv - 1) > READ_TOL:
                bad.append(f"{card} {x['source']} d {x['d']} {x['mask']} N {x['n']} H {x['heads']}: DRAM read "
                           f"{x['dram_rd'] / qkv:.3f} of Q, K, V")
    rms, _ = scores(by_card[FIT_ON], params)
    if rms > FIT_RMS:
        bad.append(f"fit on the {FIT_ON}: RMS {rms:.3f} of O above {FIT_RMS}")
    rms, most = scores([x for x in by_card[HELD_OUT] if not known_miss(x)], params)
    if rms > HELD_OUT_RMS or most > HELD_OUT_MAX:
        bad.append(f"held-out {HELD_OUT}: RMS {rms:.3f} (at most {HELD_OUT_RMS}), max {most:.3f} (at most {HELD_OUT_MAX})")
    if max(x["held_l2"] for x in by_card[FIT_ON]) < 1.5:
        bad.append(f"the {FIT_ON}'s launches do not reach 1.5x the L2 held")
    return bad


def section(by_card, params, sims):
    """The page's section (Markdown lines); `sims` as for claims."""
    ways, usable = params
    out = ["### DRAM written: O's write-back, one model for two cards\n",
           "What the partitions' copies leave of the L2, as a model that predicts DRAM written from the launch's",
           "shape: the bytes held (Q 1.5 copies, K and V 2 - 0.5^k with k Q blocks per head, O once) and a",
           "set-associative LRU whose sets are picked by hashing (an O line written with a fraction x of the",
           "held bytes still to come leaves when A of the lines after it land in its set:",
           "P(Poisson(A x held / (c L2)) >= A), averaged over x). A and c are the least squares over the",
           f"H100's {len(by_card[FIT_ON])} launches (A = {ways}, c = {usable:.2f}); the H200's {len(by_card[HELD_OUT])} are held out.",
           "`scripts/check/v3_l2_writeback.py --check` (ctest `v3_l2_writeback`) asserts the scores and that DRAM",
           "read stays within 2% of Q, K and V on every launch (up to twice the L2 held), so O's write-back is",
           "the one capacity effect — except on the known misses below, which stay in the data, the fit and the",
           "first table's scores. The simulator runs the same rule in its replay for V3's launches",
           "(`Launch::early_write_back`; sim/include/flashlab/executor/l2_model.hpp, its A and c checked equal",
           "to this fit): held from the tiles it replays (L's write-back included, 1/64 of O's bytes at d 128),",
           "f of every stored byte written during the launch, or what its LRU evicts where that is more; its",
           f"own figures are the last column, asserted on the held-out launches (RMS within {SIM_HELD_OUT_RMS}, every",
           f"launch within {SIM_HELD_OUT_MAX} of O).\n",
           "| card | launches | role | RMS error (of O) | max error (of O) | simulator: RMS | simulator: max |",
           "|---|---|---|---|---|---|---|"]
    kept = {card: [i for i, x in enumerate(by_card[card]) if not known_miss(x)] for card in by_card}
    for card, role, which in ((FIT_ON, "fitted", None), (HELD_OUT, "held out", None),
                              (HELD_OUT, "held out, known misses left out (asserted)", kept[HELD_OUT])):
        idx = range(len(by_card[card])) if which is None else which
        rs, ss = [by_card[card][i] for i in idx], [sims[card][i] for i in idx]
        rms, most = scores(rs, params)
        srms, smost = sim_scores(rs, ss)
        out.append(f"| {card} | {len(rs)} | {role} | {rms:.3f} | {most:.3f} | {srms:.3f} | {smost:.3f} |")
    out += ["", "Known misses:"] + [f"- `{f}` {m} H {h}: {why}." for (f, m, h), why in KNOWN_MISSES.items()]
    out += ["", "| card | data | dtype | d | mask | N | B x H | Q blocks per head | held / L2 | written / O measured | model | simulator |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for card in (HELD_OUT, FIT_ON):
        for x, sx in sorted(zip(by_card[card], sims[card]), key=lambda p: p[0]["held_l2"]):
            if x["held_l2"] >= 0.5:
                out.append(f"| {card} | {x['source']} | {x['dtype']} | {x['d']} | {x['mask']} | {x['n']} | "
                           f"{x['batch']} x {x['heads']} | {x['readers']} | {x['held_l2']:.2f} | {x['written_o']:.4f} | "
                           f"{written(x['held_l2'], *params):.4f} | {sx:.4f} |")
    small = [x["written_o"] for rs in by_card.values() for x in rs if x["held_l2"] < 0.5]
    return out + ["", f"The {len(small)} launches holding less than half the L2 (written / O at most {max(small):.4f}) are "
                  "left out of the table, not of the scores.", ""] + v2_lines(params)


def v2_launches():
    """The project's V2 kernel and PyTorch's FA2 on the H200 (tests/data/gpu_timing/h200.json; V2's forward
    launches without split-KV): kernel, shape, held, written / O."""
    path = ROOT / "tests" / "data" / "gpu_timing" / "h200.json"
    if not path.exists():
        return []
    doc, out = json.loads(path.read_text()), []

    def add(kernel, flags, batch, heads, kv_heads, n_q, n_k, d, q_blocks, dram_write):
        one = batch * heads * n_q * d * 2
        held = held_bytes(one, batch * kv_heads * n_k * d * 2, q_blocks)
        out.append({"kernel": kernel, "flags": flags, "held_l2": held / CARDS["H200"][1], "written_o": dram_write / one})

    for r in doc["runs"]:
        c = r["config"]
        if c["algo"] == "v2" and c.get("splits", 1) == 1 and c.get("pass", "forward") == "forward":
            add("V2 (flashlab)", r["flags"], c["batch"], c["heads"], c["kv_heads"], c["n_q"], c["n_k"], c["d"], c["t_r"],
                r["dram_write"])
    for r in doc.get("torch", []):  # FA2's forward tile: 128 query rows
        add("FA2 (PyTorch)", f"B {r['batch']} H {r['heads']} N {r['n']} d {r['d']}{' causal' if r['causal'] else ''}",
            r["batch"], r["heads"], r["heads"], r["n"], r["n"], r["d"], -(-r["n"] // 128), r["dram_write"])
    return out


def v2_lines(params):
    """The same model beside the V2 kernel's and FA2's launches on the H200 (shown, not asserted)."""
    rs = v2_launches()
    if not rs:
        return []
    ours = [x for x in rs if x["kernel"].startswith("V2")]
    rms, most = scores(ours, params)
    out = ["The same model beside the project's V2 kernel and PyTorch's FA2 on the H200 (`tests/data/gpu_timing/h200.json`;",
           f"shown, not asserted; V2's {len(ours)} launches: RMS {rms:.3f}, max {most:.3f} of O). It does not carry over",
           "where the L2 is not yet full: at 0.87 of it held (d 64 N 4096, 16 heads) the V2 kernel writes 1-3% of O back,",
           "FA2 21-31% and V3 13-18%, so neither the bytes held nor the load path (FA2 loads by the LSU, as V2 does)",
           "decide alone (docs/model.md \"Which part of a kernel decides it\": not the walk's order, O's layout, the",
           "blocks per SM, the pace nor the loads' prefetch size). So the simulator keeps the rule to V3's launches,",
           "and V2's write-back stays its LRU's evictions. (FA2's written / O passes 1 at its largest shapes: it",
           "writes more than O there.)\n",
           "| kernel | launch (H200) | held / L2 | written / O measured | model |", "|---|---|---|---|---|"]
    for x in sorted(rs, key=lambda x: (x["held_l2"], x["kernel"])):
        if x["held_l2"] >= 0.5:
            out.append(f"| {x['kernel']} | `{x['flags']}` | {x['held_l2']:.2f} | {x['written_o']:.4f} | "
                       f"{written(x['held_l2'], *params):.4f} |")
    return out + [""]


def load():
    by_card = {card: launches(card) for card in CARDS}
    return None if any(v is None for v in by_card.values()) else by_card


def main(argv):
    by_card = load()
    if by_card is None:
        print("v3_l2_writeback: a data file of tests/data/gpu_v3 is missing", file=sys.stderr)
        return 2
    cli = sim.flashlab_cli(argv)
    if cli is None:
        print("v3_l2_writeback: no simulator CLI (--flashlab PATH, $FLASHLAB_CLI or build/sim/cli/flashlab)", file=sys.stderr)
        return 2
    params = fit(by_card[FIT_ON])
    sims = simulated_all(cli, by_card)
    if "--table" in argv:
        print("\n".join(section(by_card, params, sims)))
    if "--check" in argv:
        return verdict("v3_l2_writeback", claims(by_card, params, sims), f"all claims hold (A {params[0]}, c {params[1]:.2f}; "
                       + ", ".join(f"{c} RMS {scores(r, params)[0]:.3f} max {scores(r, params)[1]:.3f}, simulator RMS "
                                   f"{sim_scores(r, sims[c])[0]:.3f} max {sim_scores(r, sims[c])[1]:.3f}"
                                   for c, r in by_card.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
