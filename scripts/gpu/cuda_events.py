"""The median time of a GPU call measured with CUDA events (PyTorch's), as the GPU scripts time
PyTorch's kernels: `warmup` untimed calls, then `reps` calls each between two events, synchronised."""


def median_ms(call, warmup=5, reps=30):
    """Median milliseconds of call() over `reps` timed calls."""
    import torch

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        call()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]
