"""Benchmarks built for pipeline tests: real targets and candidates, real step-2 HITs from hits_generate."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from datetime import timedelta

from django.utils import timezone

from annotation.models import Benchmark, Candidate, Context, Worker, WorkerKind
from hits.models import Assignment, Batch, HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes.swords.items import ItemKind

_counter = itertools.count(1)

SUBSTITUTES = [
    "perched", "rested", "squatted", "lounged", "settled", "posed", "stayed", "waited", "lay", "stood",
    "crouched", "hunkered", "nestled", "remained", "dwelt", "lingered", "loitered", "idled", "paused", "sprawled",
]  # fmt: skip


def make_benchmark(*, targets: int = 2, candidates: int = 12, **fields: object) -> Benchmark:
    benchmark = Benchmark.objects.create(name=f"pipe-{next(_counter)}", **fields)  # type: ignore[arg-type]
    for index in range(targets):
        text = f"The cat sat on mat number {index} all afternoon."
        context = Context.objects.create(benchmark=benchmark, text=text)
        target = context.targets.create(benchmark=benchmark, word="sat", offset=text.index("sat"), pos="verb")
        for word in SUBSTITUTES[:candidates]:
            Candidate.objects.create(target=target, text=word, sources=["thesaurus"])
    return benchmark


def step2_batch(benchmark: Benchmark, *, seed: int = 1) -> Batch:
    return hits_generate(benchmark=benchmark, step=2, seed=seed)


def simulated(name: str) -> Worker:
    return Worker.objects.get_or_create(kind=WorkerKind.SIMULATED, external_id=name)[0]


Answerer = Callable[[HITItem], str]


def honest(verdicts: Mapping[str, str] | None = None, default: str = "reject") -> Answerer:
    """Controls right; candidates by text from ``verdicts`` (else ``default``)."""

    def answer(item: HITItem) -> str:
        if item.kind == ItemKind.CONTROL_TARGET:
            return "accept"
        if item.kind == ItemKind.CONTROL_DISTRACTOR:
            return "reject"
        return (verdicts or {}).get(item.text, default)

    return answer


def spammer(item: HITItem) -> str:
    """Fails both controls and accepts everything else."""
    return "reject" if item.kind == ItemKind.CONTROL_TARGET else "accept"


def work_once(worker: Worker, benchmark: Benchmark, answerer: Answerer, *, seconds: float = 60.0) -> Assignment | None:
    """Claim the next HIT and submit it with the answerer's answers; None when there is no work."""
    now = timezone.now()
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark, now=now)
    if assignment is None:
        return None
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    return assignment_submit(
        assignment=assignment,
        answers={item.pk: answerer(item) for item in items},
        seconds_on_page=seconds,
        now=now + timedelta(seconds=seconds),
    )
