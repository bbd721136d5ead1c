"""flashlab.count() and flashlab.compare(): the dicts of `count --json` and `compare --json`, held
to the built command's output for the same config and to closed forms of each algorithm's lines.

The closed forms are the worked example of docs/model.md (N = N_q = N_k = 1024, d = 64,
B_r = B_c = 64: T_r = T_c = 16, 256 tiles), derived here from the algorithms as
tests/cli/count_test.cpp and tests/viz/model_test.cpp derive them, not read from the library.
"""
import pytest

import flashlab
from conftest import cli_json

N, D, T = 1024, 64, 16  # the worked example
WORKED = dict(nq=N, nk=N, d=D, br=64, bc=64)
TENSORS = ("Q", "K", "V", "O", "l", "m", "L", "S", "P")


def tensor_bytes(c, direction):
    return {t: c["hbm"][direction][t] for t in TENSORS if c["hbm"][direction][t]}


def test_v2_worked_example_fp32_per_tensor():
    # FA2 Alg. 1: Q_i once per Q block (N d in all), K_j and V_j once per tile (T_r N d each);
    # O_i once (N d) and L_i once (N, fp32); e = 4 bytes. Totals: 2,162,688 and 66,560 elements.
    e = 4
    c = flashlab.count(algo="v2", dtype="fp32", **WORKED)
    assert tensor_bytes(c, "read_bytes") == {"Q": N * D * e, "K": T * N * D * e, "V": T * N * D * e}
    assert tensor_bytes(c, "write_bytes") == {"O": N * D * e, "L": N * 4}
    assert c["hbm"]["total_read_bytes"] == 2_162_688 * 4
    assert c["hbm"]["total_write_bytes"] == 66_560 * 4
    assert c["tiles"] == dict(total=256, visited=256, full=256, partial=0, skipped=0)
    assert c["flops"]["matmul"] == 256 * 4 * 64 * 64 * D  # 4 B_r B_c d per tile (S = Q K^T, P V)
    assert c["ops"]["div"] == N * D                        # line 12: O_i = diag(l)^-1 O_i, once
    assert c["ops"]["log"] == N                            # line 13: L_i = m_i + log(l_i)
    assert c["sram"]["peak_bytes"] == (64 * D + 2 * 64 * D) * e  # Q_i, K_j, V_j in SRAM
    assert c["grid"]["blocks"] == T                         # one thread block per Q block


def test_v1_worked_example_fp32_per_tensor():
    # FA1 Alg. 1: line 2 writes O, l, m; per K/V block j (T_c of them) K_j, V_j once and for every
    # Q block: read Q_i, O_i, l_i, m_i, write O_i, l_i, m_i. Totals 2,260,992 and 1,148,928 elements.
    e = 4
    c = flashlab.count(algo="v1", dtype="fp32", **WORKED)
    assert tensor_bytes(c, "read_bytes") == {"Q": T * N * D * e, "K": N * D * e, "V": N * D * e,
                                             "O": T * N * D * e, "l": T * N * 4, "m": T * N * 4}
    assert tensor_bytes(c, "write_bytes") == {"O": (T + 1) * N * D * e, "l": (T + 1) * N * 4, "m": (T + 1) * N * 4}
    assert c["hbm"]["total_read_bytes"] == 2_260_992 * 4
    assert c["hbm"]["total_write_bytes"] == (1_081_344 + 67_584) * 4
    assert c["grid"]["blocks"] == 1  # one thread block per (batch, head)
    assert c["config"]["block_skip"] is False


def test_standard_worked_example_fp32():
    # FA1 Alg. 0: read Q, K, write S; read S, write P; read P, V, write O.
    e = 4
    c = flashlab.count(algo="standard", dtype="fp32", **WORKED)
    assert tensor_bytes(c, "read_bytes") == {"Q": N * D * e, "K": N * D * e, "V": N * D * e, "S": N * N * e, "P": N * N * e}
    assert tensor_bytes(c, "write_bytes") == {"S": N * N * e, "P": N * N * e, "O": N * D * e}
    assert c["hbm"]["total_bytes"] == (2_293_760 + 2_162_688) * 4


def test_fp16_totals_v2_4460544_v1_6955008():
    # tests/viz/model_test.cpp: V2 reads (65,536 + 16 x 131,072) x 2 and writes O (131,072) and L
    # (4,096): 4,460,544 bytes; V1 4,587,520 read + 2,367,488 written = 6,955,008 bytes.
    v2 = flashlab.count(algo="v2", dtype="fp16", **WORKED)
    v1 = flashlab.count(algo="v1", dtype="fp16", **WORKED)
    assert v2["hbm"]["total_bytes"] == 4_460_544
    assert v1["hbm"]["total_bytes"] == 6_955_008
    assert v1["hbm"]["total_read_bytes"] == 4_587_520
    assert v1["hbm"]["total_write_bytes"] == 2_367_488
    # the warp split (docs/warps.md): V1 split-K waits at 5 barriers per tile, V2 split-Q at 2
    assert v1["warps"]["barriers"] == 5 * 256
    assert v2["warps"]["barriers"] == 2 * 256


def test_causal_r6_visits_136_of_256_tiles():
    # cases R6: top-left causal with B_r = B_c: tiles j <= i are visited (16 * 17 / 2 = 136), the
    # diagonal is partial; V2 reads Q once and K_j, V_j per visited tile: (65,536 + 2 x 136 x 4,096)
    # = 1,179,648 elements.
    c = flashlab.count(algo="v2", dtype="fp32", mask="causal", **WORKED)
    assert c["hbm"]["total_read_bytes"] == 1_179_648 * 4 == (N * D + 2 * 136 * 64 * D) * 4
    assert c["tiles"] == dict(total=256, visited=136, full=120, partial=16, skipped=120)
    assert c["flops"]["matmul"] == 136 * 4 * 64 * 64 * D


def test_batch_and_heads_multiply_the_traffic():
    one = flashlab.count(algo="v2", dtype="fp32", **WORKED)
    six = flashlab.count(algo="v2", dtype="fp32", batch=2, heads=3, **WORKED)
    assert six["hbm"]["total_read_bytes"] == 6 * one["hbm"]["total_read_bytes"]
    assert six["grid"]["blocks"] == 6 * T


@pytest.mark.parametrize("flags", [
    "--nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --dtype fp32",
    "--algo v1 --nq 1024 --nk 1024 --d 64 --br 64 --bc 64",
    "--algo standard --seq 512 --d 32 --mask causal",
    "--algo v2 --nq 300 --nk 700 --d 64 --br 64 --bc 64 --mask causal-br --dtype bf16 --batch 2 --heads 3",
    "--algo v1 --seq 777 --d 48 --br auto --bc auto --sram 49152 --mask window:100,20",
    "--algo v1 --order q-outer --grid qblock --rescale delayed --warp-split split-q --seq 1024",
    "--model gpt2-small --seq 2048",
    "--algo v1 --seq 1024 --d 128 --br 128 --bc 128 --sram 1048576",  # a block that fits no SM
])
def test_count_equals_count_json(flags):
    from shlex import split
    kwargs = {}
    args = split(flags)
    for name, value in zip(args[::2], args[1::2]):
        kwargs[name[2:].replace("-", "_")] = value  # the flags' texts, as strings
    assert flashlab.count(**kwargs) == cli_json("count --json " + flags)


def test_compare_equals_compare_json():
    flags = "--model none --seq 1024 --d 64 --br 64 --bc 64 --dtype fp32"
    got = flashlab.compare(model="none", seq=1024, d=64, br=64, bc=64, dtype="fp32")
    assert got == cli_json("compare --json " + flags)
    # tests/cli/compare_test.cpp: the worked example's reads, elements x 4 bytes
    assert got["algos"]["v2"]["hbm"]["total_read_bytes"] == 2_162_688 * 4
    assert got["algos"]["v1"]["hbm"]["total_read_bytes"] == 2_260_992 * 4
    assert got["algos"]["standard"]["hbm"]["total_read_bytes"] == 2_293_760 * 4
    total = {a: got["algos"][a]["hbm"]["total_bytes"] for a in ("standard", "v1", "v2")}
    assert got["ratios"]["hbm_total_bytes"]["v1/v2"] == pytest.approx(total["v1"] / total["v2"])
    assert got["ratios"]["hbm_total_bytes"]["standard/v2"] == pytest.approx(total["standard"] / total["v2"])


def test_compare_defaults_to_the_commands_model():
    cfg = flashlab.Config(model="llama3-8b", seq=1024)  # the default model, shorter
    got = flashlab.compare(seq=1024)
    assert got["model"] == "llama3-8b"
    assert got == flashlab.compare(cfg)
    assert got == cli_json("compare --json --seq 1024")


def test_compare_names_the_algorithm_that_refuses():
    # V1's schedule keeps S_ij in SRAM (schedule.hpp sram_bytes), V2's does not: 128 x 128 fp16
    # tiles at d = 64 need Q_i, K_j, V_j = 3 x 128 x 64 x 2 = 49,152 bytes for V2, and with S_ij
    # (128 x 128 x 2) 81,920 for V1: over M = 65,536 for V1 alone
    flags = dict(model="none", seq=1024, d=64, br=128, bc=128, sram=65536)
    flashlab.count(algo="v2", **{k: v for k, v in flags.items() if k != "model"})
    with pytest.raises(ValueError, match=r"^br x bc \(algo v1\) = 128 x 128: .* these need 81920 bytes, the capacity is 65536 bytes"):
        flashlab.compare(**flags)


def test_compare_refuses_v3_as_the_command_does():
    # compare's table reads the time model, which has no V3 rules yet: the command refuses `--algo v3`
    with pytest.raises(ValueError, match=r"^algo = v3: standard, v1 or v2: compare's table reads the time model"):
        flashlab.compare(algo="v3", seq=1024, d=128)
