"""Python's cyclic garbage collector: paused while a large structure is built, and kept off the
objects a server process holds for its whole life.

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


def freeze_startup_objects() -> None:
    """Load what a web process keeps for its whole life, then put it out of the collector's walks.

    A full run of the collector walks every object of the process: about 115,000 once Django, the
    apps and the URLs are loaded, some 50 ms during which every thread of the process waits (the
    interpreter's lock is held). Under load such runs came every few seconds and stalled the
    requests in flight; freezing took the paced p99 of the pages from 265 to 171 ms in one test
    (docs/benchmarks.md, "The annotator's cycle"). Frozen objects are never walked; they are
    modules, classes, functions and settings, which live as long as the process anyway. Call it
    once, at the end of start-up.
    """
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports every view, as the first request would
    gc.collect()
    gc.freeze()
