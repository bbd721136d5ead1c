#!/usr/bin/env bash
# Lab 03: SRAM size and the Theta(N^2 d^2 / M) law (docs/labs/03_sram_size.md).
source "$(dirname "$0")/lab.sh"
fl_csv value,algo,b_r,b_c,hbm_total_bytes sweep --over sram --from 16384 --to 524288 --log2 --algos v1,v2 --br auto --bc auto --dtype fp32 \
  --seq 8192 --d 64
echo
echo "\$ flashlab count --algo v1 --sram 60000 --br 128 --bc 128   (an error on purpose)"
if "$FLASHLAB" count --algo v1 --sram 60000 --br 128 --bc 128; then
  echo "lab: expected an SRAM capacity error" >&2
  exit 1
fi
