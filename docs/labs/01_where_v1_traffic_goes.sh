#!/usr/bin/env bash
# Lab 01: where V1's extra HBM bytes go (docs/labs/01_where_v1_traffic_goes.md).
source "$(dirname "$0")/lab.sh"
fl compare --model gpt2-small
fl count --algo v1 --nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --dtype fp32 --json
fl count --algo v2 --nq 1024 --nk 1024 --d 64 --br 64 --bc 64 --dtype fp32 --json
fl_csv value,algo,hbm_read_bytes,hbm_write_bytes sweep --over n --values 1024,2048,4096,8192 --algos v1,v2 --d 64 --br 64 --bc 64
