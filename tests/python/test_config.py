"""flashlab.Config: the command line's names, defaults and validation (flags/config_flags.hpp,
sim/include/flashlab/config/config.hpp), errors as ValueError with the command's own message."""
import re
import subprocess
import sys

import pytest

import flashlab
from conftest import cli, cli_error, cli_json


def test_defaults_are_the_commands():
    # Config() is `flashlab count` with no flag: the config JSON of count --json, key for key
    cfg = flashlab.Config()
    assert cfg.to_dict() == cli_json("count --json")["config"]
    # and those defaults are config.hpp's: N_q = N_k = 1024, d = 64, FA2's 128 x 128 tile for d <= 64
    # (default_blocks), fp16, v2 with block skip, scale 1/sqrt(64), 4 warps, the h200 preset
    assert (cfg.algo, cfg.n_q, cfg.n_k, cfg.d, cfg.b_r, cfg.b_c) == ("v2", 1024, 1024, 64, 128, 128)
    assert (cfg.t_r, cfg.t_c) == (8, 8)
    assert (cfg.dtype, cfg.e_in, cfg.mask, cfg.block_skip) == ("fp16", 2, "none", True)
    assert (cfg.scale, cfg.warps, cfg.gpu, cfg.model) == (0.125, 4, "h200", "")
    assert (cfg.batch, cfg.heads) == (1, 1)


@pytest.mark.parametrize("kwargs, flags", [
    (dict(algo="v1", nq=300, nk=500, d=32, br=64, bc=32, mask="causal-br", dtype="bf16"),
     "--algo v1 --nq 300 --nk 500 --d 32 --br 64 --bc 32 --mask causal-br --dtype bf16"),
    (dict(seq=512, nq=256), "--seq 512 --nq 256"),                       # nq overrides seq's side
    (dict(nq=256, seq=512), "--seq 512 --nq 256"),                       # whatever the keyword order
    (dict(model="llama3-8b", seq=2048), "--model llama3-8b --seq 2048"),  # explicit over the preset
    (dict(algo="v1", br="auto", bc="auto", sram=65536), "--algo v1 --br auto --bc auto --sram 65536"),
    (dict(algo="v1", order="q-outer", grid="qblock", block_skip=True),
     "--algo v1 --order q-outer --grid qblock --block-skip on"),
    (dict(block_skip="off", scale=0.5, warps=8, warp_split="split-k", batch=2, heads=3, mask="window:4,8"),
     "--block-skip off --scale 0.5 --warps 8 --warp-split split-k --batch 2 --heads 3 --mask window:4,8"),
    # V3's switches: a bool for on/off as block_skip takes one, or the flag's text
    (dict(algo="v3", d=64, mask="causal", warp_specialize=False, stages=3, pingpong=False, intra_overlap=False,
          scheduler="grid"),
     "--algo v3 --d 64 --mask causal --warp-specialize off --stages 3 --pingpong off --intra-overlap off "
     "--scheduler grid"),
    (dict(algo="v3", d=128, warp_specialize="on", stages=1, pingpong=True, intra_overlap="off"),
     "--algo v3 --d 128 --warp-specialize on --stages 1 --pingpong on --intra-overlap off"),
])
def test_keywords_are_the_flags(kwargs, flags):
    assert flashlab.Config(**kwargs).to_dict() == cli_json("count --json " + flags)["config"]


def test_split_is_the_former_name_of_warp_split():
    # warp_split is --warp-split; split= is still read for a release, with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match="split= is now warp_split="):
        old = flashlab.Config(algo="v1", split="split-q")
    assert old == flashlab.Config(algo="v1", warp_split="split-q")
    assert old.to_dict() == cli_json("count --json --algo v1 --warp-split split-q")["config"]
    assert old.to_dict()["split"] == "split-q"


def test_v3_switches_are_attributes_of_their_types():
    # FA3's defaults (hopper/flash_fwd_launch_template.h, tile_size.h): a producer warp, 2 stages, the
    # intra-warpgroup overlap, the persistent scheduler; ping-pong where B_r / 64 >= 2 and d <= 128 —
    # at d = 128 (tile 128 x 176: two consumer warpgroups) on, at d = 256 (128 x 80, but d > 128) off
    cfg = flashlab.Config(algo="v3", d=128)
    switches = (cfg.warp_specialize, cfg.stages, cfg.pingpong, cfg.intra_overlap, cfg.scheduler)
    assert switches == (True, 2, True, True, "persistent")
    assert [type(x) for x in switches] == [bool, int, bool, bool, str]
    assert flashlab.Config(algo="v3", d=256).pingpong is False
    given = flashlab.Config(algo="v3", d=64, mask="causal", warp_specialize=False, stages=3, pingpong=False,
                            intra_overlap=False, scheduler="grid")
    assert (given.warp_specialize, given.stages, given.pingpong, given.intra_overlap, given.scheduler) == \
        (False, 3, False, False, "grid")
    # a str is the flag's text, as for every keyword (nq="1024"): the attribute is the resolved int
    assert flashlab.Config(algo="v3", d=128, stages="1").stages == 1
    assert eval(repr(given), {"flashlab": flashlab}) == given
    # another algorithm has no V3 switches: None, as preset is for standard attention
    v2 = flashlab.Config(algo="v2")
    assert (v2.warp_specialize, v2.stages, v2.pingpong, v2.intra_overlap, v2.scheduler) == (None,) * 5


def test_model_preset_fills_heads_d_seq_mask():
    cfg = flashlab.Config(model="llama3-8b")
    # Llama-3-8B: 32 query heads over 8 K/V heads; causal presets are bottom-right (a decode row sees the cache)
    assert (cfg.heads, cfg.kv_heads, cfg.d, cfg.n_q, cfg.n_k, cfg.mask, cfg.model) == \
        (32, 8, 128, 8192, 8192, "causal-br", "llama3-8b")
    assert flashlab.Config(model="llama3-8b", heads=4).kv_heads == 4
    assert flashlab.Config(model="llama3-8b", heads=4, kv_heads=2).kv_heads == 2
    assert flashlab.Config(model="none").model == ""


@pytest.mark.parametrize("kwargs, flags, field", [
    (dict(nq=0), "--nq 0", "nq"),
    (dict(d=5000), "--d 5000", "d"),
    (dict(dtype="fp8"), "--dtype fp8", "dtype"),
    (dict(mask="diagonal"), "--mask diagonal", "mask"),
    (dict(block_skip="maybe"), "--block-skip maybe", "block-skip"),
    (dict(warps=33), "--warps 33", "warps"),
    (dict(gpu="a100x"), "--gpu a100x", "gpu"),
    (dict(scale=0.0), "--scale 0.0", "scale"),
    (dict(nq=1.5), "--nq 1.5", "nq"),
    (dict(br=256, bc=256, d=128, sram=65536), "--br 256 --bc 256 --d 128 --sram 65536", "br x bc"),  # tiles over M
    (dict(model="gpt-9"), "--model gpt-9", "model"),
    (dict(algo="v3", stages=4), "--algo v3 --stages 4", "stages"),
    (dict(algo="v3", stages=True), "--algo v3 --stages True", "stages"),  # a bool is no stage count
    (dict(algo="v3", stages=2.0), "--algo v3 --stages 2.0", "stages"),
    (dict(algo="v3", warp_specialize="maybe"), "--algo v3 --warp-specialize maybe", "warp-specialize"),
    (dict(algo="v3", pingpong=1), "--algo v3 --pingpong 1", "pingpong"),  # on/off or True/False, not 1
    (dict(algo="v3", intra_overlap="yes"), "--algo v3 --intra-overlap yes", "intra-overlap"),
    (dict(algo="v3", scheduler="dynamic"), "--algo v3 --scheduler dynamic", "scheduler"),
    (dict(algo="v2", stages=2), "--algo v2 --stages 2", "stages"),  # a V3 switch with another algorithm
    (dict(algo="v3", d=64, stages=3), "--algo v3 --d 64 --stages 3", "br x bc"),  # 3 stages of 192 x 192 over M
])
def test_bad_values_raise_the_commands_error(kwargs, flags, field):
    with pytest.raises(ValueError) as info:
        flashlab.Config(**kwargs)
    e = info.value
    assert isinstance(e, flashlab.ConfigError)
    assert str(e) == cli_error("count " + flags)  # the same words: field, value, what is allowed
    assert e.field.startswith(field)
    assert str(e) == "%s = %s: %s" % (e.field, e.value, e.allowed)
    assert e.allowed


def test_unknown_keyword_and_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'seqlen'.*nq"):
        flashlab.Config(seqlen=1024)
    with pytest.raises(TypeError, match="unexpected keyword argument 'block-skip'"):
        flashlab.Config(**{"block-skip": "on"})
    with pytest.raises(TypeError, match=r"Config\(nq=\.\.\.\): got a list"):
        flashlab.Config(nq=[1024])


def test_a_type_for_a_value_is_a_type_error_naming_the_keyword():
    np = pytest.importorskip("numpy")
    with pytest.raises(TypeError, match=r"^Config\(dtype=\.\.\.\): got the type numpy\.float32, expected a value: .*"
                                        r"--dtype flag: 'fp16', 'bf16' or 'fp32'\)$"):
        flashlab.Config(dtype=np.float32)
    with pytest.raises(TypeError, match=r"^Config\(scale=\.\.\.\): got the type builtins\.float, .*--scale flag\)$"):
        flashlab.Config(scale=float)


def test_import_without_numpy_says_so():
    """issue 24: without NumPy, `import flashlab` said only "initialization failed"."""
    code = "import sys; sys.modules['numpy'] = None; import flashlab"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: flashlab needs NumPy, which %s cannot import (" % sys.executable), last
    assert "apt-get install python3-numpy" in last


def test_none_is_the_default_and_numpy_integers_work():
    np = pytest.importorskip("numpy")
    assert flashlab.Config(br=None, nq=None) == flashlab.Config()
    assert flashlab.Config(nq=np.int64(300), scale=np.float64(0.25)).to_dict()["n_q"] == 300


def test_replace_and_repr():
    cfg = flashlab.Config(seq=1024, br=64, bc=64)
    v1 = cfg.replace(algo="v1")
    assert (v1.algo, v1.n_q, v1.b_r) == ("v1", 1024, 64)
    assert cfg.algo == "v2"  # unchanged
    assert cfg.replace(br=None).b_r == 128  # back to the default
    assert repr(cfg) == "flashlab.Config(seq=1024, br=64, bc=64)"
    assert eval(repr(cfg), {"flashlab": flashlab}) == cfg
    assert cfg.kwargs == {"seq": 1024, "br": 64, "bc": 64}
    cfg.kwargs["nq"] = 5  # a copy: the Config stays as it was
    assert cfg.n_q == 1024 and "nq" not in cfg.kwargs
    with pytest.raises(ValueError, match="^nq = 0: "):
        cfg.replace(nq=0)


def test_functions_take_a_config_keywords_or_both():
    cfg = flashlab.Config(seq=512, br=64, bc=64)
    a = flashlab.count(cfg)
    assert flashlab.count(seq=512, br=64, bc=64) == a
    assert flashlab.count(cfg, algo="v1") == flashlab.count(cfg.replace(algo="v1"))
    with pytest.raises(TypeError, match="cfg: got a dict"):
        flashlab.count({"seq": 512})


def one_line(text):
    """text with every run of white space one space (the docstring wraps its lines)."""
    return " ".join(text.split())


def test_config_fields_are_the_keywords_config_takes():
    # the keywords Config() names when refusing one, which come from the flag table, not the docs
    with pytest.raises(TypeError) as e:
        flashlab.Config(seqlen=1)
    keywords = set(re.search(r"the keywords are (.*)$", str(e.value)).group(1).split(", "))
    assert {f["keyword"] for f in flashlab.CONFIG_FIELDS} == keywords
    assert len(keywords) == 31


def test_docstring_and_help_show_each_fields_summary():
    doc = one_line(flashlab.Config.__doc__)
    help_lines = {}  # flag -> its line of `flashlab count --help`
    for line in cli("count --help")[0].splitlines():
        if line.startswith("  --"):
            help_lines[line.split()[0]] = line
    for f in flashlab.CONFIG_FIELDS:
        summary = f["summary"] + ": " + f["allowed"]
        # the docstring: the keyword, then its summary and allowed values as --help gives them
        assert one_line(" %s %s" % (f["keyword"], summary)) in doc, f["keyword"]
        assert summary in help_lines[f["flag"]], f["flag"]
        if f["default"] is not None:
            assert "(default: %s)" % f["default"] in help_lines[f["flag"]], f["flag"]
            assert one_line("(default: %s)" % f["default"]) in doc, f["keyword"]


def test_docstring_says_which_keywords_also_take_a_bool():
    # each keyword's entry: its line at two spaces' indent and the lines under it; the switches (on | off:
    # block_skip and V3's warp_specialize, pingpong, intra_overlap) also take True / False, no other does
    entries = {}
    for entry in re.split(r"\n  (?=\S)", flashlab.Config.__doc__):
        entries[entry.split()[0]] = one_line(entry)
    switches = set()
    for f in flashlab.CONFIG_FIELDS:
        if "(also True / False)" in entries[f["keyword"]]:
            switches.add(f["keyword"])
    assert switches == {"block_skip", "warp_specialize", "pingpong", "intra_overlap"}
    for keyword in switches:  # each as its flag's on and off (V3's with --algo v3, which block skip off is not)
        algo = "v2" if keyword == "block_skip" else "v3"
        for value, text in ((True, "on"), (False, "off")):
            cfg = flashlab.Config(algo=algo, d=128, **{keyword: value})
            assert getattr(cfg, keyword) is value
            flag = "--" + keyword.replace("_", "-")
            assert cfg.to_dict() == cli_json("count --json --algo %s --d 128 %s %s" % (algo, flag, text))["config"]
