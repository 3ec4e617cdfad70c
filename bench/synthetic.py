"""Synthetic benchmarks of any size, written with bulk inserts (for bench/ and the export memory test).

Shapes follow SWORDS: one target per context, about 60 candidates per target from the thesaurus,
CoInCo or both; a third of the candidates survive step 2 and get 10 labels, the rest keep 3.
Labels come from a pool of imported workers whose reliability varies, so agreement is not trivial.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotation.models import (
    Benchmark,
    Candidate,
    CandidateStage,
    Context,
    Label,
    LabelValue,
    Target,
    TargetStage,
    Worker,
    WorkerKind,
    normalize_candidate,
    text_digest,
)
from crowdlex.dialect import dialect

POS = ["noun", "verb", "adj", "adv"]
SOURCES = [["roget"], ["coinco"], ["coinco", "roget"]]
SOURCE_WEIGHTS = [0.89, 0.06, 0.05]
FULL_SWORDS = {"targets": 1132, "candidates": 68683, "labels": 375855}
BATCH = 5000


@dataclass(frozen=True)
class Shape:
    targets: int
    candidates: int
    labels: int
    workers: int = 300

    @property
    def full_candidates(self) -> int:
        """Candidates with 10 labels so that 3 a + 10 b = labels and a + b = candidates."""
        full = (self.labels - 3 * self.candidates) / 7
        if full < 0 or full != math.floor(full) or full > self.candidates:
            raise ValueError("labels must equal 3 per candidate plus 7 per fully labeled candidate")
        return int(full)


def shape_for(candidates: int, *, targets: int | None = None, workers: int = 300) -> Shape:
    """A shape with about the full-SWORDS share of fully labeled candidates."""
    full = round(candidates * 24258 / 68683)
    return Shape(
        targets=targets or max(1, round(candidates / 60.7)),
        candidates=candidates,
        labels=3 * candidates + 7 * full,
        workers=workers,
    )


def build(*, name: str, shape: Shape, seed: int = 0, origin: str = "synthetic") -> Benchmark:
    """Create the benchmark ``name`` with the given shape; returns it."""
    rng = np.random.default_rng(seed)
    with transaction.atomic():
        benchmark = Benchmark.objects.create(name=name, title=f"synthetic {shape.candidates} candidates", seed=seed)
        texts = [f"Context {i}: the word{i} stands here in a sentence of sample {seed}." for i in range(shape.targets)]
        contexts = Context.objects.bulk_create(
            [Context(benchmark=benchmark, text=text, digest=text_digest(text)) for text in texts], batch_size=BATCH
        )
        targets = Target.objects.bulk_create(
            [
                Target(
                    benchmark=benchmark,
                    context=context,
                    word=f"word{i}",
                    offset=texts[i].index(f"word{i}"),
                    lemma=f"word{i}",
                    pos=POS[i % len(POS)],
                    stage=TargetStage.DONE,
                )
                for i, context in enumerate(contexts)
            ],
            batch_size=BATCH,
        )
        # Spread candidates over targets (sizes differ by at most one), then choose the fully labeled ones.
        per_target = np.diff(np.linspace(0, shape.candidates, shape.targets + 1).round().astype(int))
        target_of = np.repeat(np.arange(shape.targets), per_target)
        full = np.zeros(shape.candidates, dtype=bool)
        full[rng.choice(shape.candidates, size=shape.full_candidates, replace=False)] = True
        quality = np.where(full, rng.beta(2, 3, shape.candidates), rng.beta(0.4, 6, shape.candidates))
        source_index = rng.choice(len(SOURCES), size=shape.candidates, p=SOURCE_WEIGHTS)
        target_ids = [target.pk for target in targets]
        stages = [CandidateStage.FINAL if is_full else CandidateStage.DROPPED for is_full in full.tolist()]
        candidate_ids = _insert_candidates(
            (
                (target_ids[int(target_of[i])], f"sub{i}", SOURCES[int(source_index[i])], stages[i])
                for i in range(shape.candidates)
            ),
            benchmark_id=benchmark.pk,
        )
        workers = Worker.objects.bulk_create(
            [Worker(kind=WorkerKind.IMPORTED, external_id=f"{name}-w{i}") for i in range(shape.workers)]
        )
        worker_ids = np.array([w.pk for w in workers])
        reliability = rng.uniform(0.6, 0.97, shape.workers)
        label_count = np.where(full, 10, 3)
        total = int(label_count.sum())
        label_candidate = np.repeat(np.arange(shape.candidates), label_count)
        position = np.arange(total) - np.repeat(np.cumsum(label_count) - label_count, label_count)
        # Ten distinct workers per candidate: a random start and a stride through the pool.
        start_worker = np.repeat(rng.integers(0, shape.workers, shape.candidates), label_count)
        worker_index = (start_worker + position * 7) % shape.workers
        truth = rng.random(total) < np.repeat(quality, label_count)
        honest = rng.random(total) < reliability[worker_index]
        accept = np.where(honest, truth, rng.random(total) < 0.5)
        abstain = rng.random(total) < 0.012
        values = np.where(abstain, LabelValue.ABSTAIN, np.where(accept, LabelValue.ACCEPT, LabelValue.REJECT))
        raw = {LabelValue.ACCEPT: "TRUE", LabelValue.REJECT: "FALSE", LabelValue.ABSTAIN: "UNSURE"}
        label_candidate_ids = np.asarray(candidate_ids, dtype=np.int64)[label_candidate].tolist()
        label_workers = worker_ids[worker_index].tolist()
        label_values = [str(value) for value in values.tolist()]
        positions = position.tolist()
        _insert_labels(
            (
                (
                    label_candidate_ids[i],
                    label_values[i],
                    raw[LabelValue(label_values[i])],
                    2 if positions[i] < 3 else 3,
                    label_workers[i],
                    origin,
                    positions[i],
                )
                for i in range(total)
            ),
            benchmark_id=benchmark.pk,
        )
    return benchmark


def _insert_candidates(rows: Iterable[tuple[int, str, list[str], str]], *, benchmark_id: int) -> list[int]:
    """(target id, text, sources, stage) rows; returns their ids in order. COPY with ids taken from
    the sequence on PostgreSQL (ten times SWORDS in seconds rather than minutes), bulk_create elsewhere."""
    rows = list(rows)
    if not dialect().bulk_copy:
        made = []
        for start in range(0, len(rows), BATCH):
            made += Candidate.objects.bulk_create(
                Candidate(
                    target_id=target,
                    benchmark_id=benchmark_id,
                    text=text,
                    normalized=normalize_candidate(text),
                    sources=sources,
                    stage=stage,
                )
                for target, text, sources, stage in rows[start : start + BATCH]
            )
        return [candidate.pk for candidate in made]
    ids = dialect().reserve_ids(Candidate, len(rows))
    dialect().copy_rows(
        Candidate,
        ("id", "target", "text", "normalized", "sources", "stage", "external_id", "cefr", "extra", "benchmark"),
        (
            (pk, target, text, normalize_candidate(text), json.dumps(sources), stage, "", "", "{}", benchmark_id)
            for pk, (target, text, sources, stage) in zip(ids, rows, strict=True)
        ),
        not_null=("external_id", "cefr"),
    )
    return ids


def _insert_labels(rows: Iterable[tuple[int, str, str, int, int, str, int]], *, benchmark_id: int) -> None:
    """(candidate id, value, raw value, step, worker id, origin, position) rows of imported labels."""
    if not dialect().bulk_copy:
        batch: list[Label] = []
        for candidate, value, raw_value, step, worker, origin, position in rows:
            batch.append(
                Label(
                    candidate_id=candidate,
                    benchmark_id=benchmark_id,
                    value=value,
                    raw_value=raw_value,
                    step=step,
                    worker_id=worker,
                    origin=origin,
                    position=position,
                )
            )
            if len(batch) >= BATCH:
                Label.objects.bulk_create(batch)
                batch = []
        Label.objects.bulk_create(batch)
        return
    created_at = timezone.now()
    rows = iter(rows)
    # A COPY per 200,000 labels: its buffer stays in tens of megabytes at ten times SWORDS.
    while chunk := list(islice(rows, 200_000)):
        dialect().copy_rows(
            Label,
            ("candidate", "value", "raw_value", "step", "worker", "origin", "position", "created_at", "benchmark"),
            ((*row, created_at, benchmark_id) for row in chunk),
        )
