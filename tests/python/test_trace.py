"""flashlab.trace(): the event records as a NumPy structured array, held to the files `flashlab
trace` writes for the same config — the binary form byte for byte (docs/events.md "Binary form")
and the text form field by field — and to count()'s HBM bytes."""
import os
import struct

import numpy as np
import pytest

import flashlab
from conftest import cli, cli_error

CONFIGS = [
    "--algo v2 --nq 1000 --nk 700 --d 64 --br 64 --bc 64 --mask causal-br",
    "--algo v1 --nq 256 --nk 256 --d 64 --br 64 --bc 64",
    "--algo standard --seq 300 --d 32 --mask causal",
    "--algo v1 --order q-outer --seq 512 --br 64 --bc 128 --mask window:64,0 --block-skip on",
]


def kwargs_of(flags):
    args = flags.split()
    return {name[2:].replace("-", "_"): value for name, value in zip(args[::2], args[1::2])}


def binary_records(path):
    """The records section of a binary trace file, parsed by docs/events.md's table."""
    data = open(path, "rb").read()
    assert data[:8] == b"FLTRACE\x1a"
    version, header_bytes = struct.unpack_from("<II", data, 8)
    assert version == 6
    (count,) = struct.unpack_from("<Q", data, 16 + header_bytes)
    start = 24 + header_bytes
    return count, data[start:start + 40 * count]


def test_dtype_is_the_40_byte_record():
    # sim/include/flashlab/contract/event.hpp's static_asserts: size and offsets
    dt = flashlab.EVENT_DTYPE
    assert dt.itemsize == 40
    offsets = {name: dt.fields[name][1] for name in dt.names}
    assert offsets == dict(block=0, step=4, bytes=8, i=16, j=20, rows=24, cols=28, op=32, tensor=33,
                           warp=34, eq=36, agent=37, launch=38)
    assert [dt.fields[n][0].str for n in ("block", "bytes", "i", "warp", "launch")] == ["<u4", "<u8", "<i4", "<i2", "<u2"]
    assert flashlab.OPS == ("load", "store", "compute", "skip", "barrier", "reduce", "atomic", "arrive", "wait", "commit")
    assert flashlab.TENSORS[:9] == ("Q", "K", "V", "O", "l", "m", "L", "S", "P")


@pytest.mark.parametrize("flags", CONFIGS)
@pytest.mark.parametrize("level", ["block", "warp"])
def test_trace_equals_the_binary_file(tmp_path, flags, level):
    path = os.path.join(tmp_path, "sim.trace")
    out, _ = cli("trace %s --level %s -o %s" % (flags, level, path))
    count, records = binary_records(path)
    ev = flashlab.trace(level=level, **kwargs_of(flags))
    assert ev.dtype == flashlab.EVENT_DTYPE
    assert len(ev) == count and ("%d events" % count) in out.replace(",", "")
    assert ev.tobytes() == records


@pytest.mark.parametrize("flags", CONFIGS[:2])
def test_trace_equals_the_text_file(tmp_path, flags):
    path = os.path.join(tmp_path, "sim.txt")
    cli("trace %s --format text -o %s" % (flags, path))
    lines = open(path).read().split("\n")
    body = lines[lines.index("events") + 1:]
    events = body[:next(k for k, line in enumerate(body) if line == "end" or line.startswith("stats"))]
    ev = flashlab.trace(**kwargs_of(flags))
    assert len(ev) == len(events)
    for e, line in zip(ev, events):
        launch, block, step, op, tensor, i, j, rows, cols, nbytes, warp, eq = line.split(" ")
        assert (int(launch), int(block), int(step)) == (e["launch"], e["block"], e["step"])
        assert (op, tensor, eq) == (flashlab.OPS[e["op"]], flashlab.TENSORS[e["tensor"]], flashlab.EQS[e["eq"]])
        assert (int(i), int(j), int(rows), int(cols)) == (e["i"], e["j"], e["rows"], e["cols"])
        assert (int(nbytes), int(warp), e["agent"]) == (e["bytes"], e["warp"], 0)


def test_bytes_add_up_to_counts_hbm_traffic():
    # one (batch, head)'s loads and stores are count()'s HBM reads and writes
    kwargs = dict(algo="v2", nq=1000, nk=700, d=64, br=64, bc=64, mask="causal-br", dtype="fp32")
    ev = flashlab.trace(**kwargs)
    c = flashlab.count(**kwargs)
    load, store = flashlab.OPS.index("load"), flashlab.OPS.index("store")
    assert ev["bytes"][ev["op"] == load].sum() == c["hbm"]["total_read_bytes"]
    assert ev["bytes"][ev["op"] == store].sum() == c["hbm"]["total_write_bytes"]
    # block skip: one skip event per tile the schedule skips (tiles.skipped)
    assert (ev["op"] == flashlab.OPS.index("skip")).sum() == c["tiles"]["skipped"]
    # V2: thread block i is Q block i (blockIdx.x), every event of block i on tile row i
    tiled = ev["i"] >= 0
    assert np.array_equal(ev["block"][tiled], ev["i"][tiled])


def test_v2_no_mask_event_count_closed_form():
    # docs/events.md, V2 at block level, no mask: per Q block load Q_i, init (line 4); per tile
    # load K_j, load V_j, scores, softmax_v2, output_v2 (lines 6-10); finalize, store O_i, store
    # L_i (lines 12-15): T_r (2 + 5 T_c + 3) events
    ev = flashlab.trace(algo="v2", nq=256, nk=512, d=64, br=64, bc=64)
    t_r, t_c = 4, 8
    assert len(ev) == t_r * (2 + 5 * t_c + 3)
    eqs = [flashlab.EQS[k] for k in ev["eq"][ev["op"] == flashlab.OPS.index("compute")]]
    assert eqs.count("scores") == t_r * t_c and eqs.count("finalize_v2") == t_r


def test_trace_is_a_view_not_a_copy():
    ev = flashlab.trace(algo="v1", seq=256, br=64, bc=64)
    assert ev.flags["OWNDATA"] is False and ev.base is not None  # the records the walk made
    assert ev.flags["C_CONTIGUOUS"]


def test_trace_refuses_past_max_bytes_and_a_bad_level():
    with pytest.raises(ValueError, match=r"^trace size = .* at most max_bytes = 1000 bytes"):
        flashlab.trace(seq=1024, max_bytes=1000)
    with pytest.raises(ValueError) as info:
        flashlab.trace(seq=256, level="thread")
    assert info.value.field == "level"


def test_v3_traces_at_block_level_and_refuses_the_warp_level_as_the_command_does(tmp_path):
    # V3's events name their warp role (the agent byte); the warp model has no rules for warp roles
    flags = "--algo v3 --seq 1024 --d 128 --mask causal"
    path = os.path.join(tmp_path, "v3.trace")
    cli("trace %s -o %s" % (flags, path))
    count, records = binary_records(path)
    ev = flashlab.trace(**kwargs_of(flags))
    assert len(ev) == count and ev.tobytes() == records
    assert set(ev["warp"]) == {-1} and ev["agent"].max() > 0  # block level, roles named
    with pytest.raises(ValueError) as info:
        flashlab.trace(level="warp", **kwargs_of(flags))
    assert info.value.field == "level"
    assert str(info.value) == cli_error("trace %s --level warp -o %s" % (flags, path))

