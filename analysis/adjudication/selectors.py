"""What the adjudication pages read (docs/design.md §17, docs/adjudication.md): one item with every
submission side by side as submitted, and the queue of items the crowd disagrees on most.

Scheme-blind: an item is a target (a SWORDS or ProLex target, a Smart Word Suggestions sentence, a
TSAR instance); its candidates' labels are laid out per submission where the scheme judges
candidates, and every other answer is shown by the scheme's own read-only template
(``schemes.base.Page.answers_template``: SWS's spans drawn on the sentence). Workers are named by
the benchmark's pseudonyms, as in its exports (``analysis.pseudonyms``).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
from django.core.paginator import Page, Paginator
from django.db.models import Count, F, FloatField, Q, TextField
from django.db.models.functions import Abs, Cast, Concat

from analysis.agreement import krippendorff_alpha
from analysis.exports.base import benchmark_worker_names
from analysis.figures import scheme_figures
from annotation.changes import KeptFigures, benchmark_kept
from annotation.models import Benchmark, Candidate, CandidateStage, CandidateTally, Label, LabelValue, Target
from hits.models import Answer, Assignment, AssignmentStatus
from review.adjudication import candidate_overrides, overrides_applied
from review.models import ItemResolution, OverrideDecision
from schemes import get_scheme
from schemes.scores import DEFAULT_THRESHOLDS, category_of, override_score

#: A candidate is contested when its score lies this close to the acceptable threshold, ends
#: included (docs/design.md §17).
CONTESTED_MARGIN = 0.2
#: Items on a page of the disagreement queue (docs/design.md §17).
QUEUE_ITEMS_PER_PAGE = 50

_SUBMITTED = (AssignmentStatus.SUBMITTED, AssignmentStatus.APPROVED, AssignmentStatus.REJECTED)


@dataclass
class AnswerCell:
    """One submission's answer to an item that is not a candidate, for the scheme's template."""

    item_text: str
    answer: dict[str, Any] | None

    @property
    def text(self) -> str:
        return self.item_text


@dataclass
class Submission:
    """One submitted assignment of the item: a column of the page."""

    assignment_id: int
    worker: str
    hit_id: int
    step: int
    filtered: bool
    status: str
    # Its answers that a label does not tell (spans and suggestions, a simpler word, proposals),
    # shown by the template of the scheme that runs its step, with that scheme's choices.
    answers: list[AnswerCell] = field(default_factory=list)
    template: str = "schemes/_answer.html"
    choices: tuple[Any, ...] = ()


@dataclass
class CandidateLine:
    """One candidate with the label each submission gave it (None: not asked in it), as submitted."""

    candidate: Candidate
    cells: list[str | None]
    counts: dict[str, int]
    # The counts in the order of the page's columns (``ItemPage.values``).
    value_counts: list[int]
    imported: int
    crowd_score: float | None
    crowd_category: str
    score: float | None
    category: str
    decision: str = ""
    reason: str = ""


@dataclass
class ItemPage:
    target: Target
    before: str
    after: str
    scheme_title: str
    judges_candidates: bool
    values: list[tuple[str, str]]
    submissions: list[Submission] = field(default_factory=list)
    candidates: list[CandidateLine] = field(default_factory=list)
    # Whether any submission holds an answer that a label does not tell.
    has_answers: bool = False
    choices: tuple[Any, ...] = ()
    alpha: float | None = None
    contested: int = 0
    resolved: bool = False
    applied: bool = False
    decisions: tuple[tuple[str, str], ...] = tuple(OverrideDecision.choices)


def item_page(*, target: Target) -> ItemPage:
    """Everything the item page shows, in a fixed number of statements whatever the item's size."""
    benchmark = target.benchmark
    scheme = get_scheme(benchmark)
    figures = scheme_figures(benchmark)
    names = benchmark_worker_names(benchmark=benchmark)
    text, start = target.context.text, target.offset
    page = ItemPage(
        target=target,
        before=text[:start],
        after=text[start + len(target.word) :],
        scheme_title=scheme.title,
        judges_candidates=scheme.judges_candidates,
        values=[(value, figures.value_names.get(value, label)) for value, label in LabelValue.choices],
        choices=scheme.page.choices,
        resolved=ItemResolution.objects.filter(target=target).exists(),
        applied=overrides_applied(benchmark=benchmark),
    )
    assignments = list(
        Assignment.objects.filter(hit__target=target, status__in=_SUBMITTED)
        .select_related("worker", "hit__batch")
        .order_by("submitted_at", "pk")
    )
    column = {assignment.pk: index for index, assignment in enumerate(assignments)}
    pages = {step.number: get_scheme(benchmark, step=step.number).page for step in scheme.steps}
    page.submissions = [
        Submission(
            assignment_id=assignment.pk,
            worker=names(f"{assignment.worker.kind}:{assignment.worker.external_id}"),
            hit_id=assignment.hit_id,
            step=assignment.hit.batch.step,
            filtered=assignment.filtered,
            status=assignment.get_status_display(),
            template=pages.get(assignment.hit.batch.step, scheme.page).answers_template,
            choices=pages.get(assignment.hit.batch.step, scheme.page).choices,
        )
        for assignment in assignments
    ]
    candidates = list(Candidate.objects.filter(target=target).order_by("pk"))
    cells: dict[int, list[str | None]] = {candidate.pk: [None] * len(assignments) for candidate in candidates}
    counts: dict[int, Counter[str]] = defaultdict(Counter)
    imported: Counter[int] = Counter()
    labels = Label.objects.filter(candidate__target=target).values_list(
        "candidate_id", "assignment_id", "value", "assignment__filtered"
    )
    for candidate_id, assignment_id, value, filtered in labels:
        if assignment_id is None:
            imported[candidate_id] += 1
        elif assignment_id in column:
            cells[candidate_id][column[assignment_id]] = value
        if not filtered:
            counts[candidate_id][value] += 1
    decisions = candidate_overrides(benchmark=benchmark, candidate_ids=cells)
    table = []
    for candidate in candidates:
        tally = {value: counts[candidate.pk].get(value, 0) for value, _ in page.values}
        excluded = candidate.stage == CandidateStage.EXCLUDED
        crowd_score, crowd_category = (None, "excluded") if excluded else figures.verdict(tally)
        decision, reason = decisions.get(candidate.pk, ("", ""))
        score, category = crowd_score, crowd_category
        if page.applied and decision and not excluded:
            score = override_score(decision)
            category = category_of(score)
        if not excluded:
            table.append([tally.get(value, 0) for value in ("accept", "reject", "abstain")])
            if crowd_score is not None and abs(crowd_score - DEFAULT_THRESHOLDS.acceptable) <= CONTESTED_MARGIN:
                page.contested += 1
        page.candidates.append(
            CandidateLine(
                candidate=candidate,
                cells=cells[candidate.pk],
                counts=tally,
                value_counts=list(tally.values()),
                imported=imported[candidate.pk],
                crowd_score=crowd_score,
                crowd_category=crowd_category,
                score=score,
                category=category,
                decision=decision,
                reason=reason,
            )
        )
    if scheme.judges_candidates and table:
        alpha = krippendorff_alpha(np.asarray(table))
        page.alpha = None if math.isnan(alpha) else alpha
    # Answers a label does not tell (spans and suggestions, a simpler word, proposals), per submission.
    answers = (
        Answer.objects.filter(assignment_id__in=column, item__control=False)
        .filter(Q(data__isnull=False) | Q(item__candidate__isnull=True))
        .values_list("assignment_id", "item__text", "value", "data")
        .order_by("assignment_id", "item__position")
    )
    for assignment_id, item_text, value, data in answers:
        page.submissions[column[assignment_id]].answers.append(AnswerCell(item_text, {"value": value, "data": data}))
        page.has_answers = True
    return page


@dataclass(frozen=True)
class QueueEntry:
    """An item of the disagreement queue: its target, its disagreement, whether it is resolved."""

    target_id: int
    contested: int
    resolved: bool


#: A target's disagreement as the queue keeps it: (target id, disagreement), the id carried with it
#: so that the queue's order can take the target out again (``queue_order_taken``).
Disagreement = tuple[int, int]


@dataclass(frozen=True)
class QueueOrder:
    """Disagreeing items in the queue's order, most disagreement first, then by id: their target ids
    and each one's disagreement, as two arrays of one length. Kept beside the figures per target as
    their total (docs/design.md §17, §7 "Incremental figures"), so that a page of the queue reads
    this order alone, not every target's figures."""

    target_ids: np.ndarray
    contested: np.ndarray


def queue_order_of(figures: Iterable[Disagreement]) -> QueueOrder:
    """Some targets' disagreements in the queue's order. Pure."""
    found = [(target_id, n) for target_id, n in figures if n > 0]
    ids = np.fromiter((target_id for target_id, _ in found), dtype=np.int64, count=len(found))
    contested = np.fromiter((n for _, n in found), dtype=np.int64, count=len(found))
    return _ordered(ids, contested)


def _ordered(ids: np.ndarray, contested: np.ndarray) -> QueueOrder:
    order = np.lexsort((ids, -contested))
    return QueueOrder(target_ids=ids[order], contested=contested[order])


def queue_orders_merged(orders: Iterable[QueueOrder]) -> QueueOrder:
    """Orders of distinct targets merged into one. Pure."""
    parts = list(orders)
    if not parts:
        return queue_order_of(())
    return _ordered(
        np.concatenate([part.target_ids for part in parts]), np.concatenate([part.contested for part in parts])
    )


def queue_order_taken(order: QueueOrder, figures: Iterable[Disagreement]) -> QueueOrder:
    """``order`` less the targets of ``figures`` (as kept in it), still in order. Pure."""
    taken = np.fromiter((target_id for target_id, _ in figures), dtype=np.int64)
    kept = ~np.isin(order.target_ids, taken)
    return QueueOrder(target_ids=order.target_ids[kept], contested=order.contested[kept])


def _kept_disagreement(benchmark: Benchmark) -> KeptFigures[Disagreement, QueueOrder]:
    """Each target's disagreement kept per target, with the queue's order of every disagreeing item
    kept beside it by difference (``annotation.changes.benchmark_kept``): a change computes again
    the targets it touched and moves them alone in the order."""
    scheme = get_scheme(benchmark)

    def compute(target_ids: list[int] | None) -> dict[int, Disagreement]:
        found = _disagreement(benchmark, scheme.judges_candidates, target_ids)
        return {target_id: (target_id, n) for target_id, n in found.items()}

    return benchmark_kept(
        benchmark_id=benchmark.pk,
        # Named apart from the figures kept without their order by an earlier version.
        name=f"disagreement-order:{scheme.name}",
        compute=compute,
        summarise=queue_order_of,
        combine=queue_orders_merged,
        take=queue_order_taken,
    )


def disagreement_by_target(*, benchmark: Benchmark) -> dict[int, int]:
    """Each target's disagreement (targets without any left out), kept per target so that after a
    change only the targets it touched are computed again (docs/design.md §7, "Incremental
    figures"; §17)."""
    return {target_id: n for target_id, n in _kept_disagreement(benchmark).all().values()}


def _disagreement(benchmark: Benchmark, judges_candidates: bool, target_ids: list[int] | None) -> dict[int, int]:
    """The disagreement of the targets ``target_ids`` (every target when None) that have any: where
    the scheme judges candidates, the number of candidates whose score (accepts over valid labels,
    read from their tallies, docs/design.md §7 "Tallies") lies within ``CONTESTED_MARGIN`` of the
    acceptable threshold; elsewhere, the number of distinct answers beyond the first among the
    item's submissions that spam filtering kept. One statement."""
    if judges_candidates:
        tallies = CandidateTally.objects.filter(candidate__target__benchmark=benchmark, labels__gt=0).exclude(
            candidate__stage=CandidateStage.EXCLUDED
        )
        if target_ids is not None:
            tallies = tallies.filter(candidate__target_id__in=target_ids)
        contested = (
            tallies.annotate(score=Cast(F("accepts"), FloatField()) / Cast(F("labels"), FloatField()))
            .annotate(distance=Abs(F("score") - DEFAULT_THRESHOLDS.acceptable))
            .filter(distance__lte=CONTESTED_MARGIN + 1e-9)
            .order_by()
            .values_list("candidate__target_id")
            .annotate(n=Count("pk"))
        )
        return {target_id: n for target_id, n in contested}
    targets = Target.objects.filter(benchmark=benchmark)
    if target_ids is not None:
        targets = targets.filter(pk__in=target_ids)
    answered = targets.annotate(
        contested=Count(
            Concat(
                Cast("hits__items__answers__value", TextField()),
                Cast("hits__items__answers__data", TextField()),
            ),
            distinct=True,
            filter=Q(hits__items__control=False, hits__items__answers__assignment__filtered=False),
        )
        - 1
    )
    return {target_id: n for target_id, n in answered.filter(contested__gt=0).values_list("pk", "contested")}


def _queue_order(benchmark: Benchmark, include_resolved: bool) -> tuple[QueueOrder, set[int]]:
    """The queue's order (resolved items left out unless asked) and the resolved items' ids: the
    kept order and one statement, whatever the benchmark's size."""
    order = _kept_disagreement(benchmark).total
    resolved = set(ItemResolution.objects.filter(target__benchmark=benchmark).values_list("target_id", flat=True))
    if resolved and not include_resolved:
        kept = ~np.isin(order.target_ids, np.fromiter(resolved, dtype=np.int64, count=len(resolved)))
        order = QueueOrder(target_ids=order.target_ids[kept], contested=order.contested[kept])
    return order, resolved


def disagreement_queue(*, benchmark: Benchmark, include_resolved: bool = False) -> list[QueueEntry]:
    """The benchmark's items by disagreement, most first (then by id): those with any
    (``disagreement_by_target``); resolved ones are left out unless asked. One statement besides
    the kept figures' own, whatever the benchmark's size."""
    order, resolved = _queue_order(benchmark, include_resolved)
    return [
        QueueEntry(target_id=target_id, contested=n, resolved=target_id in resolved)
        for target_id, n in zip(order.target_ids.tolist(), order.contested.tolist(), strict=True)
    ]


class _Entries(Sequence[QueueEntry]):
    """The queue's entries as the paginator slices them: only a page's are made."""

    def __init__(self, order: QueueOrder, resolved: set[int]) -> None:
        self._order = order
        self._resolved = resolved

    def __len__(self) -> int:
        return len(self._order.target_ids)

    @overload
    def __getitem__(self, index: int) -> QueueEntry: ...
    @overload
    def __getitem__(self, index: slice) -> list[QueueEntry]: ...
    def __getitem__(self, index: int | slice) -> QueueEntry | list[QueueEntry]:
        if isinstance(index, slice):
            ids = self._order.target_ids[index].tolist()
            counts = self._order.contested[index].tolist()
            return [QueueEntry(t, n, t in self._resolved) for t, n in zip(ids, counts, strict=True)]
        target_id = int(self._order.target_ids[index])
        return QueueEntry(target_id, int(self._order.contested[index]), target_id in self._resolved)


def disagreement_queue_page(
    *, benchmark: Benchmark, include_resolved: bool = False, number: str | int | None = None
) -> Page:
    """A page of ``QUEUE_ITEMS_PER_PAGE`` items of the queue (``number``: as the request gives it;
    out of range or not a number gives the nearest page), its targets read for that page alone,
    each with its ``contested`` and ``resolved``. Reads the queue's kept order, not every target's
    figures (docs/design.md §17)."""
    order, resolved = _queue_order(benchmark, include_resolved)
    page = Paginator(_Entries(order, resolved), QUEUE_ITEMS_PER_PAGE)
    shown = page.get_page(number)
    entries: list[QueueEntry] = list(shown.object_list)
    targets = Target.objects.select_related("context").in_bulk([entry.target_id for entry in entries])
    listed = []
    for entry in entries:
        target = targets.get(entry.target_id)
        if target is None:
            continue  # removed since the figures were read
        target.contested = entry.contested  # type: ignore[attr-defined]
        target.resolved = entry.resolved  # type: ignore[attr-defined]
        listed.append(target)
    # The page shows the targets of its entries, in their order.
    shown.object_list = listed  # type: ignore[assignment]
    return shown
