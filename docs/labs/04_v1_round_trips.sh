#!/usr/bin/env bash
# Lab 04: V1's O round trips through HBM and accuracy (docs/labs/04_v1_round_trips.md).
source "$(dirname "$0")/lab.sh"
for n in 128 512 2048 8192; do
  fl run --algo all --nq 64 --nk "$n" --d 64 --br 64 --bc 64 --dtype bf16 --seed 1
done
fl run --algo all --nq 64 --nk 8192 --d 64 --br 64 --bc 64 --dtype fp32 --seed 1
# fine tiles: B_c = 1, T_c = 1024 round trips of O_i in fp16
fl run --algo all --nq 64 --nk 1024 --d 64 --br 64 --bc 1 --dtype fp16 --seed 1
