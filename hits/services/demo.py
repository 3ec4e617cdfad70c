"""The demo's first batch (``manage.py load_demo``), so that an annotator finds a HIT on logging in."""

from __future__ import annotations

from django.db import transaction

from annotation.demo import DEMO_BENCHMARK
from annotation.models import Benchmark
from hits.models import Batch
from hits.services.generation import hits_generate
from schemes import get_scheme
from schemes.base import main_step


def demo_batch_open() -> tuple[Batch, bool]:
    """The demo benchmark's first batch and whether this call made it.

    The first call generates a batch of the scheme's first step (SWORDS: step 2) for every demo
    target with ``hits_generate``, seeded with the benchmark's seed. Once the benchmark has any
    batch, nothing is made: a second run of the demo adds no batch, and a demo already worked on
    (or whose batch was closed) stays as it is.
    Runs under the benchmark's row lock, like generation, so two runs at once make one batch.
    The demo benchmark must be loaded (``annotation.services.demo_load``).
    """
    with transaction.atomic():
        benchmark = Benchmark.objects.select_for_update(no_key=True).get(name=DEMO_BENCHMARK)
        first = Batch.objects.filter(benchmark=benchmark).order_by("pk").first()
        if first is not None:
            return first, False
        first_step = main_step(get_scheme(benchmark).steps)
        return hits_generate(benchmark=benchmark, step=first_step, seed=benchmark.seed), True
