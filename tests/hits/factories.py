"""Small builders for HITs made directly with the models (the queue is tested apart from generation)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User

from annotation.models import Benchmark, Candidate, Context, Target, Worker
from hits.models import HIT, Assignment, Batch, HITItem
from hits.services import assignment_claim_next
from schemes.swords.items import CONTROL_KINDS, ItemKind

_counter = itertools.count(1)

SUBSTITUTES = ["perched", "rested", "squatted", "lounged", "settled", "posed", "stayed", "waited", "lay", "stood"]


def make_benchmark(name: str = "", **fields: Any) -> Benchmark:
    return Benchmark.objects.create(name=name or f"bench-{next(_counter)}", **fields)


def make_target(
    benchmark: Benchmark,
    *,
    text: str = "",
    word: str = "sat",
    pos: str = "verb",
    candidates: Sequence[str] = SUBSTITUTES[:4],
) -> Target:
    """A target in a fresh context, with the given candidates."""
    text = text or f"The cat {word} on mat number {next(_counter)}."
    context = Context.objects.create(benchmark=benchmark, text=text)
    target = Target.objects.create(context=context, benchmark=benchmark, word=word, offset=text.index(word), pos=pos)
    Candidate.objects.bulk_create([Candidate(target=target, text=c, normalized=c.casefold()) for c in candidates])
    return target


def make_batch(benchmark: Benchmark, *, step: int = 2, assignments_per_hit: int = 3, **fields: Any) -> Batch:
    fields.setdefault("assignment_duration", timedelta(minutes=30))
    return Batch.objects.create(
        benchmark=benchmark, step=step, assignments_per_hit=assignments_per_hit, backend="local", **fields
    )


def make_hit(
    batch: Batch,
    target: Target,
    *,
    part: int = 0,
    candidates: Sequence[Candidate] | None = None,
    distractor: str = "window",
    assignments_required: int | None = None,
) -> HIT:
    """A HIT with the target's candidates and the two controls: the target copy second, the distractor last."""
    if candidates is None:
        candidates = list(target.candidates.order_by("id"))
    hit = HIT.objects.create(
        batch=batch,
        target=target,
        part=part,
        assignments_required=assignments_required or batch.assignments_per_hit,
    )
    rows: list[tuple[str, Candidate | None, str]] = [(ItemKind.CANDIDATE, c, c.text) for c in candidates]
    rows.insert(1, (ItemKind.CONTROL_TARGET, None, target.word))
    rows.append((ItemKind.CONTROL_DISTRACTOR, None, distractor))
    HITItem.objects.bulk_create(
        [
            HITItem(
                hit=hit,
                position=position,
                kind=kind,
                control=kind in CONTROL_KINDS,
                candidate=candidate,
                text=text,
            )
            for position, (kind, candidate, text) in enumerate(rows)
        ]
    )
    return hit


def make_hits(benchmark: Benchmark, count: int, *, batch: Batch | None = None, **batch_fields: Any) -> list[HIT]:
    """``count`` HITs in one batch, each on its own target."""
    batch = batch or make_batch(benchmark, **batch_fields)
    return [make_hit(batch, make_target(benchmark)) for _ in range(count)]


def answers_for(hit: HIT, value: str = "accept") -> dict[int, str]:
    """The same answer on every item."""
    return dict.fromkeys(hit.items.values_list("pk", flat=True), value)


def honest_answers(hit: HIT) -> dict[int, str]:
    """Accept the candidates and the target copy, reject the distractor: controls all correct."""
    return {
        item.pk: "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=hit)
    }


def claim(user: User) -> Assignment:
    """The user's claim on the next HIT of the local queue (there must be one)."""
    assignment = assignment_claim_next(worker=Worker.objects.get(user=user))
    assert assignment is not None
    return assignment
