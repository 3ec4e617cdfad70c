"""Python's cyclic garbage collector paused while a large structure is built.

The collector runs whenever enough objects have been allocated since its last run, and its full
runs walk every object the process holds (Django, NumPy and the rest: several hundred thousand
objects). Building a batch allocates a few hundred thousand more (rows, planned HITs and items)
that all live until it is written and hold no reference cycles: the collector would walk the
whole process several times over and free nothing (a fifth of ``create_batch``'s CPU time,
docs/benchmarks.md, "Batch creation"). Objects are still freed by reference counting meanwhile;
only cycles wait for the collector's next run.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, and on again after it if it was on before.

    The switch is the process's: in a threaded server another thread's block may turn it on
    again before this one ends, which costs time, never correctness.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
