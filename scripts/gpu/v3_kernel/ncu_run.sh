#!/usr/bin/env bash
# ncu_run.sh — the one device call behind V3's GPU evidence (docs/validation/v3_h200.md, issue 27):
# builds the program (sm_90a), then runs the PARTS asked for, in order:
#   checks     the unit tests and the "fa3" correctness grid (fp16/bf16, d 64/128, none and causal,
#              N 1000 / 3000 / 1 / 1024: float64 check of O and L, poisoned output, guard, repeat
#              bit-identical; d 64 also with each B_r forced) -> checks.jsonl
#   sanitizer  sanitize.py: compute-sanitizer memcheck, racecheck, synccheck on small "fa3" configs and
#              one per ablation variant -> v3_sanitizer.json
#   bytes      ncu_bytes.py: DRAM bytes and L2 sectors of "fa3" on a grid (dtype, d, mask, ragged N),
#              for the simulator's sector and DRAM levels -> v3_bytes.json
#   speed      ncu_vs_cudnn.py: V3, cuDNN and FA2 (PyTorch's SDPA backends) under the same Nsight
#              Compute flags, fp16 N 1k-32k and bf16 -> v3_ncu.json, cudnn_ncu.json
#   hooks      events_check.py (`v3 trace`'s events against the simulator's, EVENTS_GRID quick|full,
#              default quick) -> v3_events.jsonl, and timeline_compare.py (the %globaltimer stamps
#              against `flashlab timeline --json`) -> v3_timeline.json, each only where its file exists;
#              they need the CMake build (v3 with V3_TRACE, and flashlab), started in the background
#              at the beginning (CMake, Ninja; /tmp/v3_cmake)
#   timelines  timeline_compare.py on more configs than the hooks' one (TIMELINE_CONFIGS, one per line,
#              VARIANT DTYPE D MASK B N H; default: the ablation's variants without a mask at d 128 and
#              d 64, N 16384, and fa3 causal), each in its own folder -> v3_timelines.jsonl, one line per
#              config (its timeline_compare.json, the config beside it); the same CMake build as hooks
#   sweep, ablation, units   ncu_ablation.py's parts: the B_r sweep behind fa3's launch rule, the
#              switch ablation, the per-unit counters -> v3_sweep.json, v3_ablation.json, v3_units.json
#   stalls     ncu_stalls.py: warp states and PC sampling (per SASS instruction) of fa3 and three
#              switches (STALLS_CONFIGS, one "VARIANT D MASK B N H" per line, instead of its list)
#              -> v3_stalls.json, ncu_stalls_pages.tar.gz
#   onestage   one_stage_probe.py: fa3 and one stage at d 64 without a mask, N 2k-16k, the caches flushed
#              and warm -> v3_one_stage.json (ONESTAGE_SET=tr: T_r dividing the SMs or not; causal: the dynamic deal -> v3_one_stage_SET.json)
#   main       checks and speed (the earlier runs' PARTS word)
# Each program run is bounded (30 s plain, 120 s under ncu, 60 s under a sanitizer): a hung kernel
# costs its row, not the call; the parts stop starting rows DEADLINE seconds after the script began.
# Everything written (data, logs, console_PARTS.log) is packed into OUTDIR/gpu_v3_run.tar.gz, one file
# (the device tool brings back at most 8), after each part and at the end:
# `tar xzf gpu_v3_run.tar.gz -C tests/data/gpu_v3`.
#
#   COMMIT=<sha> [PARTS="checks sanitizer bytes speed"] [DEADLINE=550] [EVENTS_GRID=quick] bash scripts/gpu/v3_kernel/ncu_run.sh OUTDIR
#
# Two calls make the whole data set (README "Validation run"): the default PARTS (about 500 s by the
# earlier runs' per-row times), then PARTS="sweep hooks ablation units" (the hooks' CMake build runs
# while the sweep does). The check (scripts/check/v3_kernel_data.py) takes parts of two calls when they
# ran the same kernel sources.
set -u -o pipefail
START=$(date +%s)
PARTS=${PARTS-checks sanitizer bytes speed}  # PARTS="" builds only
PARTS=${PARTS//main/checks speed}
DEADLINE=${DEADLINE:-550}
HERE=$(cd "$(dirname "$0")" && pwd)
OUTDIR=${1:?usage: ncu_run.sh OUTDIR}
COMMIT=${COMMIT:-unknown}
W=/tmp/v3_ncu_work
D=$W/data  # everything that goes into the bundle
rm -rf "$W" && mkdir -p "$D" "$W/logs" "$OUTDIR"
export PATH=/usr/local/cuda/bin:$PATH PYTHONUNBUFFERED=1
TAG=${PARTS// /-}  # names this call's console and build logs (two calls unpack into one folder)
exec > >(tee "$D/console_$TAG.log") 2>&1
left() { echo $((DEADLINE - ($(date +%s) - START))); }
echo "== build $(date -u +%H:%M:%S) (PARTS: $PARTS; commit $COMMIT)"
ROOT=$(cd "$HERE/../../.." && pwd)
CB=/tmp/v3_cmake  # the hooks' build: flashlab and v3 with `v3 trace`
CMAKE_PID=""
if [[ " $PARTS " == *" hooks "* || " $PARTS " == *" timelines "* ]] && { [ -f "$HERE/events_check.py" ] || [ -f "$HERE/timeline_compare.py" ]; }; then
  ( cmake -S "$ROOT" -B "$CB" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLASHLAB_VIEWER=OFF -DFLASHLAB_BENCH=OFF \
      -DFLASHLAB_TESTS=OFF -DFLASHLAB_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 && \
    ninja -C "$CB" -j12 flashlab flashlab_v3_staged ) > "$W/logs/build_cmake.log" 2>&1 &
  CMAKE_PID=$!
fi
ARCH="-gencode=arch=compute_90a,code=sm_90a"
PIDS=""
for f in variants_fa3 variants_ablation main; do
  nvcc $ARCH -O3 -std=c++17 -Xptxas -v -c "$HERE/$f.cu" -o "$W/$f.o" > "$W/logs/build_$f.log" 2>&1 &
  PIDS="$PIDS $!"
done
wait $PIDS  # these only: a bare wait would wait for the console's tee too
nvcc $ARCH "$W"/*.o -o "$W/v3" -lcuda > "$W/logs/build_link.log" 2>&1 || { tail -40 "$W"/logs/build_*.log; exit 1; }
tar czf "$D/build_logs_$TAG.tar.gz" -C "$W" logs
for part in $PARTS; do
  tar czf "$OUTDIR/gpu_v3_run.tar.gz" -C "$D" .  # what the parts so far wrote, should the call be cut short
  echo "== $part $(date -u +%H:%M:%S), $(left) s left"
  case $part in
  checks)
    C=$D/checks.jsonl
    : > "$C"
    timeout 30 "$W/v3" unit >> "$C" || echo "unit: exit $?"
    SEED=100
    for dt in fp16 bf16; do for d in 64 128; do for m in none causal; do
      for shape in "2 1000 3" "1 3000 2" "3 1 2" "1 1024 2"; do
        SEED=$((SEED + 1))
        timeout 30 "$W/v3" run fa3 $dt $d $m $shape --seed $SEED >> "$C" || echo "exit $?: fa3 $dt $d $m $shape"
        # d = 64: both B_r of fa3's launch rule, each forced (the rule picks one per N)
        [ $d = 64 ] && for br in 128 192; do
          timeout 30 "$W/v3" run fa3 $dt $d $m $shape --seed $SEED --br $br >> "$C" || echo "exit $?: fa3 $dt $d $m $shape --br $br"
        done
      done
    done; done; done
    echo "checks: $(grep -c '"pass": true' "$C") passed, $(grep -c '"pass": false' "$C") failed";;
  sanitizer)  # no run starts after SANITIZER_S (default 80) seconds of this part, nor after DEADLINE
    python3 "$HERE/sanitize.py" --bin "$W/v3" --out "$D" --commit "$COMMIT" --jobs 6 --timeout 60 \
      --deadline "$(( $(left) < ${SANITIZER_S:-80} ? $(left) : ${SANITIZER_S:-80} ))";;
  bytes)  # likewise BYTES_S (default 75)
    python3 "$HERE/ncu_bytes.py" --bin "$W/v3" --out "$D" --commit "$COMMIT" \
      --deadline "$(( $(left) < ${BYTES_S:-75} ? $(left) : ${BYTES_S:-75} ))";;
  speed)
    python3 "$HERE/ncu_vs_cudnn.py" --bin "$W/v3" --out "$D" --commit "$COMMIT" --deadline "$(left)";;
  hooks)  # HOOKS_S (default 150) seconds at most from here, the build's wait included; timeline_compare 40 of them
    HOOKS_END=$(( $(date +%s) + ($(left) < ${HOOKS_S:-150} ? $(left) : ${HOOKS_S:-150}) ))
    until_end() { local t=$(( HOOKS_END - $(date +%s) - $1 )); echo $(( t > 20 ? t : 20 )); }
    if [ -z "$CMAKE_PID" ]; then echo "-- no events_check.py nor timeline_compare.py here: skipped"; continue; fi
    wait $CMAKE_PID || { echo "-- CMake build failed:"; tail -30 "$W/logs/build_cmake.log"; tar czf "$D/build_logs_$TAG.tar.gz" -C "$W" logs; continue; }
    tar czf "$D/build_logs_$TAG.tar.gz" -C "$W" logs
    V3T=$(find "$CB/scripts" -name v3 -type f -perm -u+x | head -1) FL=$CB/sim/cli/flashlab
    echo "-- built: $V3T, $FL ($(left) s left)"
    if [ -f "$HERE/events_check.py" ]; then
      timeout "$(until_end 40)" python3 "$HERE/events_check.py" --v3 "$V3T" --flashlab "$FL" \
        --out "$W/events" --grid "${EVENTS_GRID:-quick}" --commit "$COMMIT" || echo "events_check.py: exit $?"
      cp "$W/events/events_check.jsonl" "$D/v3_events.jsonl" 2>/dev/null
      tar czf "$D/events_logs.tar.gz" -C "$W" events 2>/dev/null
    fi
    if [ -f "$HERE/timeline_compare.py" ]; then
      timeout "$(until_end 0)" python3 "$HERE/timeline_compare.py" --v3 "$V3T" --flashlab "$FL" \
        --out "$W/timeline" || echo "timeline_compare.py: exit $?"
      cp "$W/timeline/timeline_compare.json" "$D/v3_timeline.json" 2>/dev/null
      tar czf "$D/timeline_logs.tar.gz" --exclude='*.fltrace' --exclude='*.timeline.json' -C "$W" timeline 2>/dev/null
    fi;;
  timelines)  # TIMELINES_S (default 240) seconds at most from here, the build's wait included
    TL_END=$(( $(date +%s) + ($(left) < ${TIMELINES_S:-240} ? $(left) : ${TIMELINES_S:-240}) ))
    if [ -z "$CMAKE_PID" ]; then echo "-- no timeline_compare.py here: skipped"; continue; fi
    wait $CMAKE_PID 2>/dev/null
    V3T=$(find "$CB/scripts" -name v3 -type f -perm -u+x | head -1) FL=$CB/sim/cli/flashlab
    if [ -z "$V3T" ] || [ ! -x "$FL" ]; then echo "-- CMake build failed:"; tail -30 "$W/logs/build_cmake.log"; continue; fi
    TL=$D/v3_timelines.jsonl
    mkdir -p "$W/timelines"
    : > "$TL"
    CONFIGS=${TIMELINE_CONFIGS:-$(for dh in "128 16" "64 32"; do set -- $dh
      for v in fa3 stages1 no_pingpong no_overlap no_ws; do echo "$v fp16 $1 none 1 16384 $2"; done
      echo "fa3 fp16 $1 causal 1 16384 $2"; done)}
    while read -r cfg; do
      [ -z "$cfg" ] && continue
      [ $(( TL_END - $(date +%s) )) -lt 20 ] && { echo "-- timelines: out of time before $cfg"; break; }
      out=$W/timelines/${cfg// /_}
      timeout 60 python3 "$HERE/timeline_compare.py" --v3 "$V3T" --flashlab "$FL" --config "$cfg" --out "$out" \
        > "$out.log" 2>&1 || { echo "timeline_compare.py $cfg: exit $?"; tail -5 "$out.log"; continue; }
      python3 -c 'import json, sys; sys.path.insert(0, sys.argv[3]); from ncu_vs_cudnn import common, sources_sha256
r = json.load(open(sys.argv[1])); r |= {"config": sys.argv[2], "commit": sys.argv[4], "v3_sources_sha256": sources_sha256(),
                                        "gpu": common.nvidia_smi()}
print(json.dumps(r))' "$out/timeline_compare.json" "$cfg" "$HERE" "$COMMIT" >> "$TL"
      echo "-- $cfg: $(head -1 "$out.log")"
    done <<< "$CONFIGS"
    echo "timelines: $(wc -l < "$TL") configs"
    tar czf "$D/timelines_logs.tar.gz" --exclude='*.fltrace' --exclude='*.timeline.json' -C "$W" timelines 2>/dev/null;;
  sweep|ablation|units)
    python3 "$HERE/ncu_ablation.py" --bin "$W/v3" --out "$D" --commit "$COMMIT" --part "$part" --deadline "$(left)";;
  onestage)
    python3 "$HERE/one_stage_probe.py" --bin "$W/v3" --out "$D" --commit "$COMMIT" --set "${ONESTAGE_SET:-base}" \
      --deadline "$(left)";;
  stalls)
    SC=()  # STALLS_CONFIGS: one "VARIANT D MASK B N H" per line instead of ncu_stalls.py's CONFIGS
    while IFS= read -r c; do [ -n "$c" ] && SC+=(--config "$c"); done <<< "${STALLS_CONFIGS:-}"
    python3 "$HERE/ncu_stalls.py" --bin "$W/v3" --out "$D" --commit "$COMMIT" --deadline "$(left)" "${SC[@]}";;
  *) echo "unknown part $part (checks sanitizer bytes speed hooks timelines sweep ablation units stalls onestage main)";;
  esac
done
echo "== done $(date -u +%H:%M:%S), $(( $(date +%s) - START )) s"
ls -la "$D"
sleep 1  # the console's last lines through tee
tar czf "$OUTDIR/gpu_v3_run.tar.gz" -C "$D" .
