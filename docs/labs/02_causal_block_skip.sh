#!/usr/bin/env bash
# Lab 02: causal masks and block skip (docs/labs/02_causal_block_skip.md).
source "$(dirname "$0")/lab.sh"
fl count --algo v2 --seq 1024 --br 64 --bc 64 --mask causal --json
fl count --algo v1 --seq 1024 --br 64 --bc 64 --mask causal --block-skip off
fl count --algo v1 --seq 1024 --br 64 --bc 64 --mask causal --block-skip on
fl run --algo v2 --nq 2 --nk 5 --d 1 --br 2 --bc 2 --dtype fp32 --q zero --k zero --v index --mask causal --steps 0 --show-rows 0,1
fl run --algo v2 --nq 2 --nk 5 --d 1 --br 2 --bc 2 --dtype fp32 --q zero --k zero --v index --mask causal-br --steps 0 --show-rows 0,1
fl run --algo v2 --nq 4 --nk 2 --d 1 --br 2 --bc 2 --dtype fp32 --q zero --k zero --v index --mask causal-br --steps 0 --show-rows 0,1,2,3
fl count --algo v2 --nq 4 --nk 2 --d 1 --br 2 --bc 2 --dtype fp32 --mask causal-br
