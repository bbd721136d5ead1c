"""Long calls (issue 24 items 3 and 4): the work runs without the GIL, and a walk observer runs
Python's signal handlers every 50 ms (python/src/interrupt.hpp), so SIGINT raises KeyboardInterrupt
within half a second in count, sweep, trace and run — each of which runs for seconds here when not
interrupted; and work past FLASHLAB_PROGRESS_EVERY seconds (10 by default) writes the command's
plain progress line to sys.stderr."""
import os
import re
import signal
import threading
import time

import pytest

import flashlab

np = pytest.importorskip("numpy")

LONG_CALLS = {
    # V1 with 16 x 16 tiles: 16.8 M tiles per walk, about 3 s
    "count": lambda: flashlab.count(nq=65536, nk=65536, d=64, br=16, bc=16, algo="v1"),
    # 2,000 points of 4 M tiles each: minutes
    "sweep": lambda: flashlab.sweep(over="nq", values=list(range(32768, 34768)), algos=["v1"], nk=32768, br=16, bc=16),
    # 4 M tiles, block level: about a second and 800 MB of events when not interrupted
    "trace": lambda: flashlab.trace(nq=32768, nk=32768, d=64, br=16, bc=16, max_bytes=2 ** 31),
    # fp32 numerics of 1 M tiles of V1, about 4 s
    "run": lambda: flashlab.run(flashlab.Config(seq=16384, d=64, dtype="fp32", br=16, bc=16, algo="v1"),
                                *[np.zeros((16384, 64), np.float32)] * 3),
}


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_sigint_raises_keyboard_interrupt_within_half_a_second(name):
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.2, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            LONG_CALLS[name]()
        caught = time.monotonic()
    finally:
        timer.cancel()
    assert sent, "%s ended before the signal was sent" % name
    assert caught - sent[0] < 0.5, "%s: KeyboardInterrupt %.2f s after SIGINT" % (name, caught - sent[0])
    # the module still works after the interrupt
    assert flashlab.count(seq=256, br=64, bc=64)["tiles"]["visited"] == 16


def test_a_long_call_writes_progress_lines_to_stderr(monkeypatch, capsys):
    monkeypatch.setenv("FLASHLAB_PROGRESS_EVERY", "0.2")
    flashlab.count(nq=32768, nk=32768, d=64, br=16, bc=16, algo="v1")  # about a second
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) >= 2, lines
    for line in lines:
        assert re.fullmatch(r"flashlab count: \d+%, \d+\.\d s elapsed, about \d+\.\d s left", line), line
    flashlab.sweep(over="nq", values=[16384, 16385, 16386], algos=["v1"], nk=16384, br=16, bc=16)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(re.match(r"flashlab sweep: \d+% \([123]/3\), ", line) for line in lines), lines
    monkeypatch.delenv("FLASHLAB_PROGRESS_EVERY")
    flashlab.count(nq=32768, nk=32768, d=64, br=16, bc=16, algo="v1")  # under the default 10 s: no line
    assert capsys.readouterr().err == ""
