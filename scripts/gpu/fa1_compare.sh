#!/usr/bin/env bash
# fa1_compare.sh — on the GPU machine: this project's V1 and V2 forward against FlashAttention-1's own
# forward kernel, built there from FA1's public source for measurement only, in one run
# (scripts/gpu/fa1_compare.py says what it checks and times; docs/validation/v1_vs_fa1_h200.md, the result).
#
# FA1's source is fetched by hand beforehand (the GPU machine has no network) and never committed:
#   git clone https://github.com/Dao-AILab/flash-attention /tmp/flash-attention
#   git -C /tmp/flash-attention checkout 6d48e14a6c2f551db96f0badc658a6279a929df3   # tag v1.0.9, before FA2
#   git clone https://github.com/NVIDIA/cutlass /tmp/cutlass
#   git -C /tmp/cutlass checkout 319a389f42b776fae5701afcb943fc03be5b5c25            # v2.9.0: FA1's submodule pin
#   echo /.fa1/ >> .git/info/exclude
#   mkdir -p .fa1 && cp -r /tmp/flash-attention/csrc/flash_attn .fa1/ && rm -rf .fa1/flash_attn/cutlass
#   mkdir -p .fa1/flash_attn/cutlass && cp -r /tmp/cutlass/include .fa1/flash_attn/cutlass/
# (13 MB; it travels to the GPU machine as a carried path.)
#
# flashlab-gpu and flashlab are built as scripts/gpu/time_dataset.sh builds them (build-gpu, sm_90),
# unless FLASHLAB_PREBUILT names a folder holding kernels/flashlab-gpu, sim/cli/flashlab (lib/: shared
# libraries they need) and kernel_sources_sha256 equal to the kernel sources here, built by the same
# cmake line elsewhere (it saves the GPU machine the build); a prebuilt pair that does not run, or was
# built from other kernel sources, is ignored and the build runs here.
# Usage: bash scripts/gpu/fa1_compare.sh OUTDIR COMMIT [fa1_compare.py flags...]   (FA1_SRC: .fa1/flash_attn)
set -uo pipefail
out=${1:?usage: fa1_compare.sh OUTDIR COMMIT [flags]}
commit=${2:?usage: fa1_compare.sh OUTDIR COMMIT [flags]}
shift 2
src=${FA1_SRC:-.fa1/flash_attn}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
t0=$(date +%s)
want=$(python3 -c 'import sys; sys.path.insert(0, "scripts/gpu"); import common; print(common.kernel_source_hash())')
build=build-gpu
pre=${FLASHLAB_PREBUILT:-}
if [ -n "$pre" ]; then
  [ -d "$pre/lib" ] && export LD_LIBRARY_PATH=$PWD/$pre/lib:${LD_LIBRARY_PATH:-}
  if [ "$(cat "$pre/kernel_sources_sha256" 2>/dev/null)" = "$want" ] && "$pre/kernels/flashlab-gpu" --list-tiles > /dev/null 2>&1 &&
     "$pre/sim/cli/flashlab" --version > /dev/null 2>&1; then
    build=$pre
    echo "prebuilt flashlab-gpu and flashlab in $pre (kernel sources $want)"
  else
    echo "prebuilt folder $pre does not run here or is of other kernel sources: building"
  fi
fi
if [ "$build" = build-gpu ]; then
  bash scripts/gpu/build_gpu.sh "$out" || exit 1
fi
echo "flashlab-gpu ready: $(( $(date +%s) - t0 )) s"
python3 scripts/gpu/fa1_compare.py --bin "$build/kernels/flashlab-gpu" --fa1-src "$src" --out "$out" --commit "$commit" "$@"
