"""Reads of a benchmark's guards against answers from language models: its mitigations and who pledged
(docs/design.md §9, docs/quality.md). The writes are ``hits.services.guards``."""

from __future__ import annotations

from annotation.models import Benchmark, Worker
from hits.models import Mitigations, Pledge, confirmed


def benchmark_mitigations(*, benchmark: Benchmark | int) -> Mitigations:
    """The benchmark's mitigations; an unsaved row with none switched on when the researcher never set any."""
    benchmark_id = benchmark if isinstance(benchmark, int) else benchmark.pk
    found = Mitigations.objects.filter(benchmark_id=benchmark_id).first()
    return found if found is not None else Mitigations(benchmark_id=benchmark_id)


def pledge_given(*, worker: Worker | int, benchmark: Benchmark | int) -> bool:
    """Whether the worker pledged in this benchmark with work that counts: local work, or crowd work
    the crowd confirmed (a forged crowd id pledges for nobody)."""
    return Pledge.objects.filter(confirmed("assignment__"), worker=worker, benchmark=benchmark).exists()
