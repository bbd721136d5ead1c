#!/usr/bin/env python3
"""Builds FlashAttention-1's forward (v1.0.9) as a PyTorch extension, for measurement only (issue 25).

    python3 scripts/gpu/fa1_build.py --src .fa1/flash_attn --build /tmp/fa1-build

--src is FA1's csrc/flash_attn folder with CUTLASS's include/ at cutlass/include (the manual fetch in
scripts/gpu/fa1_compare.sh gives the commits). Nothing of it is in this repository. Compiled as FA1's
setup.py compiles it (its nvcc flags; its include folders; -DOLD_GENERATOR_PATH where torch has the old
header), with three differences, each for the sake of a short build on the GPU machine:
- only sm_90 (TORCH_CUDA_ARCH_LIST=9.0; setup.py adds sm_75 and sm_80 too);
- only the forward kernels (src/fmha_fwd_hdim{32,64,128}.cu) and fmha_api.cpp; the launchers of the
  backward and the block-sparse forward, which fmha_api.cpp binds, come from fa1_link_shim.cpp and
  throw if called;
- the C++ standard is the one torch's cpp_extension passes (setup.py asks for C++17).
Prints the build log (with ptxas -v: registers, shared memory, spills per kernel); exit 1 on failure.
The module is BUILD/flash_attn_cuda*.so, imported after `import torch` with BUILD on sys.path.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# FA1 setup.py's nvcc flags (v1.0.9), less -std=c++17 (torch passes its own), --threads 4 and the
# -gencode list (TORCH_CUDA_ARCH_LIST=9.0 gives -gencode=arch=compute_90,code=sm_90).
FA1_NVCC_FLAGS = ["-O3", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
                  "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr",
                  "--expt-extended-lambda", "--use_fast_math", "--ptxas-options=-v", "-lineinfo"]
SOURCES = ["fmha_api.cpp", "src/fmha_fwd_hdim32.cu", "src/fmha_fwd_hdim64.cu", "src/fmha_fwd_hdim128.cu"]


def source_hash(src):
    """SHA-256 over every file of the FA1 source folder (sorted relative paths and contents): names
    exactly which sources were built."""
    h = hashlib.sha256()
    for p in sorted(Path(src).rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def extra_includes():
    """CUDA library headers that torch's ATen/cuda headers include (cublas_v2.h, cusparse.h, ...), from
    the CUDA toolkit or, where it lacks them, from the nvidia-* wheels beside torch."""
    cuda = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
    if (cuda / "cublas_v2.h").exists() and (cuda / "cusparse.h").exists():
        return []
    import torch
    site = Path(torch.__file__).resolve().parent.parent / "nvidia"
    return sorted({str(h.parent) for pat in ("cublas_v2.h", "cusparse.h", "cusolverDn.h", "curand.h")
                   for h in site.rglob(pat)})


def optional_compat(torch_dir, cpp_extension, build):
    """fmha_api.cpp names c10::optional, which newer torch headers may no longer declare: probes the
    headers (the C++ standard cpp_extension passes) and, where the name is missing, returns the flags
    that force-include a header declaring it as std::optional (the type it has aliased since torch 2.4)."""
    std = re.search(r"-std=(c\+\+\d+)", Path(cpp_extension.__file__).read_text())
    probe = "#include <c10/util/Optional.h>\nc10::optional<int> flashlab_probe;\n"
    cmd = ["c++", f"-std={std.group(1) if std else 'c++17'}", "-fsyntax-only", f"-I{torch_dir / 'include'}", "-x", "c++", "-"]
    if subprocess.run(cmd, input=probe, capture_output=True, text=True).returncode == 0:
        return []
    compat = build / "c10_optional_compat.h"
    compat.write_text("#pragma once\n#include <optional>\nnamespace c10 { using std::optional; using std::nullopt; }\n")
    print(f"fa1_build: c10::optional missing from torch's headers: force-including {compat}", flush=True)
    return ["-include", str(compat)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, type=Path, help="FA1's csrc/flash_attn (with cutlass/include)")
    ap.add_argument("--build", required=True, type=Path)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    args = ap.parse_args()
    src = args.src.resolve()
    for rel in SOURCES + ["src/fmha.h", "cutlass/include/cutlass/cutlass.h"]:
        if not (src / rel).is_file():
            print(f"fa1_build: --src {src}: {rel} is missing (see scripts/gpu/fa1_compare.sh for the fetch)")
            return 2
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    os.environ.setdefault("MAX_JOBS", str(args.jobs))
    os.environ.setdefault("CUDA_HOME", "/usr/local/cuda")
    import torch
    from torch.utils import cpp_extension
    torch_dir = Path(torch.__file__).resolve().parent
    generator = ["-DOLD_GENERATOR_PATH"] if (torch_dir / "include" / "ATen" / "CUDAGeneratorImpl.h").exists() else []
    args.build.mkdir(parents=True, exist_ok=True)
    compat = optional_compat(torch_dir, cpp_extension, args.build)
    includes = [str(src), str(src / "src"), str(src / "cutlass" / "include")] + extra_includes()
    print(f"torch {torch.__version__}, FA1 sources sha256 {source_hash(src)}, includes {includes}", flush=True)
    t0 = time.monotonic()
    try:
        cpp_extension.load(name="flash_attn_cuda", sources=[str(src / s) for s in SOURCES] + [str(HERE / "fa1_link_shim.cpp")],
                           extra_cflags=["-O3"] + generator + compat, extra_cuda_cflags=FA1_NVCC_FLAGS + generator,
                           extra_include_paths=includes, build_directory=str(args.build), verbose=True, with_cuda=True)
    except Exception as e:  # noqa: BLE001 - the log above holds the compiler's message
        print(f"fa1_build: FAILED after {time.monotonic() - t0:.0f} s: {e}", flush=True)
        return 1
    print(f"fa1_build: built in {time.monotonic() - t0:.0f} s into {args.build}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
