"""Slices of labels: the analysis walks large label arrays a slice at a time, so that 64-bit
temporaries are those of one slice, not of every label (docs/design.md §15)."""

from __future__ import annotations

from collections.abc import Iterator

# Labels read at a time: a slice's 64-bit temporaries stay near 2 MB each.
LABEL_SLICE = 1 << 18


def slice_rows() -> int:
    """Labels per slice (read at each call, so that tests can make slices small)."""
    return LABEL_SLICE


def label_slices(size: int, rows: int | None = None) -> Iterator[slice]:
    """Consecutive slices of at most ``rows`` labels (default ``LABEL_SLICE``) covering ``size`` labels."""
    rows = rows or slice_rows()
    for start in range(0, size, rows):
        yield slice(start, min(start + rows, size))
