"""flashlab.trace() from Python on a million events: the records come back as one NumPy array with no
per-event object and no copy (python/src/arrays.cpp owning_array). Timed against the same walk
without recording in the same process (flashlab.count on the same config), the ratio printed.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_trace.py
"""
import time

import flashlab

# V1, N = 20480, 64 x 64 tiles: 320 x 320 = 102,400 tiles, ~10 block-level events each (FA1 Alg. 1)
CFG = flashlab.Config(algo="v1", seq=20480, d=64, br=64, bc=64)


def best(f, reps=5):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    t_trace, events = best(lambda: flashlab.trace(CFG))
    t_count, _ = best(lambda: flashlab.count(CFG))
    base = events.base if events.base is not None else events
    print(f"trace: {len(events):,} events, {events.nbytes / 2**20:.1f} MiB in one array "
          f"(owned by the extension: {type(base).__name__}), best of 5: {t_trace * 1e3:.1f} ms")
    print(f"count of the same config (the walk, the L2 and time models, no recording): {t_count * 1e3:.1f} ms")
    print(f"trace / count: {t_trace / t_count:.2f}")


if __name__ == "__main__":
    main()
