"""A benchmark's targets one at a time: the search over them (word, part of speech, stage, score
range) and everything known about one target (its context, candidates with sources, labels by
value and by whom, scores and categories, HITs, answers and annotators' flags).

Scheme-blind: what differs between schemes comes from their registries. The scheme's figures name
the stored label values (``SchemeFigures.value_names``: ProLex's "1 acceptable" for accept) and
turn a candidate's label counts into a score and a category (``SchemeFigures.verdict``), and
answers richer than a label (Smart Word Suggestions' spans, the generation task's proposals) are
shown as the HITs stored them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, F, FloatField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Cast

from analysis.figures import scheme_figures
from annotation.models import Benchmark, Candidate, CandidateStage, Label, LabelValue, Target
from hits.models import HIT, VALID_STATUSES, Answer, HITFlag, confirmed
from schemes import get_scheme

# A label counts when it was imported, or collected in an assignment that spam filtering kept (docs/design.md §5).
_VALID_LABEL = Q(labels__assignment__isnull=True) | Q(labels__assignment__filtered=False)
# A HIT's assignment that counts (hits.selectors.VALID_ASSIGNMENT), seen from the HIT.
_VALID_ASSIGNMENT_OF_HIT = Q(assignments__status__in=VALID_STATUSES, assignments__filtered=False) & confirmed(
    "assignments__"
)


def _scored_candidates(benchmark: Benchmark) -> QuerySet[Candidate]:
    """The benchmark's candidates (excluded ones left out) with their valid labels and accepts counted."""
    return (
        Candidate.objects.filter(target__benchmark=benchmark)
        .exclude(stage=CandidateStage.EXCLUDED)
        .annotate(
            valid=Count("labels", filter=_VALID_LABEL),
            accepts=Count("labels", filter=_VALID_LABEL & Q(labels__value=LabelValue.ACCEPT)),
        )
        .filter(valid__gt=0)
        .annotate(score=Cast(F("accepts"), FloatField()) / Cast(F("valid"), FloatField()))
    )


def target_search(
    *,
    benchmark: Benchmark,
    word: str = "",
    pos: str = "",
    stage: str = "",
    score_min: float | None = None,
    score_max: float | None = None,
) -> QuerySet[Target]:
    """The benchmark's targets that match, in id order, with their candidates counted.

    ``word`` matches the word or lemma (case-blind, anywhere) or, all digits, the target's id;
    ``score_min`` / ``score_max`` keep targets with at least one candidate whose score (accepts
    over valid labels) lies in the range, ends included.
    """
    targets = Target.objects.filter(benchmark=benchmark).select_related("context")
    word = word.strip()
    if word:
        by_text = Q(word__icontains=word) | Q(lemma__icontains=word)
        # An id is at most nine digits here: a longer number is a word to match, never an overflowing id.
        targets = targets.filter(by_text | Q(pk=int(word)) if word.isdigit() and len(word) <= 9 else by_text)
    if pos:
        targets = targets.filter(pos=pos)
    if stage:
        targets = targets.filter(stage=stage)
    if score_min is not None or score_max is not None:
        scored = _scored_candidates(benchmark)
        if score_min is not None:
            scored = scored.filter(**{"score__gte": score_min})
        if score_max is not None:
            scored = scored.filter(**{"score__lte": score_max})
        targets = targets.filter(pk__in=scored.values("target_id"))
    candidates = (
        Candidate.objects.filter(target=OuterRef("pk")).order_by().values("target").annotate(n=Count("pk")).values("n")
    )
    return targets.annotate(candidate_count=Subquery(candidates)).order_by("pk")


@dataclass
class CandidateRow:
    """One candidate of the target page: its labels counted by value and by whom."""

    candidate: Candidate
    counts: dict[str, int]
    # (value, count, the workers who gave it: names researchers see, in collection order) in the
    # order of the page's columns (``TargetPage.values``).
    by_value: list[tuple[str, int, list[str]]]
    score: float | None
    category: str
    # Labels that do not count (filtered work), shown apart.
    not_counted: int = 0
    flags: int = 0
    # P(acceptable) under Dawid-Skene and MACE, when the page was asked for them (docs/design.md §13).
    posterior_dawid_skene: float | None = None
    posterior_mace: float | None = None


@dataclass
class HitRow:
    hit: HIT
    assignments_valid: int


@dataclass
class AnswerRow:
    """An answer richer than a label (a structured one, or one to an item without a candidate)."""

    hit_id: int
    worker: str
    item: str
    value: str
    data: Any
    # How the scheme of the HIT's step shows the answer (schemes.base.Page.answers_template), and its choices.
    template: str = "schemes/_answer.html"
    choices: tuple[Any, ...] = ()

    @property
    def text(self) -> str:
        """The item's text, as the answer templates read it (``item.text``)."""
        return self.item


@dataclass
class TargetPage:
    target: Target
    before: str
    after: str
    scheme_title: str
    # (stored label value, the scheme's name for it); values outside LabelValue come after.
    values: list[tuple[str, str]]
    candidates: list[CandidateRow] = field(default_factory=list)
    hits: list[HitRow] = field(default_factory=list)
    answers: list[AnswerRow] = field(default_factory=list)
    flags: list[HITFlag] = field(default_factory=list)
    # Whether the candidates carry their worker-aware posteriors (a fit over the whole benchmark).
    with_posteriors: bool = False


# Who gave a label that no worker gave: it came with the benchmark's file.
_IMPORTED = "imported"


def _worker_name(worker: Any) -> str:
    return _IMPORTED if worker is None else str(worker.external_id)


def target_page(
    *, target: Target, posteriors: Mapping[int, tuple[float | None, float | None]] | None = None
) -> TargetPage:
    """Everything the target page shows (see the module docstring). Queries are per kind of row,
    never per candidate. ``posteriors``: candidate id to its (Dawid-Skene, MACE) posterior, shown
    beside the score when given."""
    benchmark = target.benchmark
    scheme = get_scheme(benchmark)
    figures = scheme_figures(benchmark)
    verdict = figures.verdict
    choices = [(value, figures.value_names.get(value, label)) for value, label in LabelValue.choices]
    text, start = target.context.text, target.offset
    page = TargetPage(
        target=target,
        before=text[:start],
        after=text[start + len(target.word) :],
        scheme_title=scheme.title,
        values=choices,
        with_posteriors=posteriors is not None,
    )
    candidates = list(Candidate.objects.filter(target=target).order_by("pk"))
    # By the candidates' ids, read above: the label index on (candidate, position) answers it, where a
    # join on the target would scan every label of every benchmark.
    # Only the four fields the counts read, as tuples: no label, worker and assignment objects built
    # for each of a target's few hundred labels.
    labels = (
        Label.objects.filter(candidate_id__in=[candidate.pk for candidate in candidates])
        .order_by("candidate_id", "position", "pk")
        .values_list("candidate_id", "value", "worker__external_id", "assignment__filtered")
    )
    counted: dict[int, Counter[str]] = defaultdict(Counter)
    workers: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    not_counted: Counter[int] = Counter()
    for candidate_id, value, worker, filtered in labels:
        if filtered:
            not_counted[candidate_id] += 1
            continue
        counted[candidate_id][value] += 1
        workers[candidate_id][value].append(_IMPORTED if worker is None else str(worker))
    known = {value for value, _ in choices}
    extra = sorted({value for counts in counted.values() for value in counts} - known)
    page.values = choices + [(value, value) for value in extra]
    flags = list(
        HITFlag.objects.filter(assignment__hit__target=target)
        .select_related("assignment__worker", "item__candidate")
        .order_by("assignment__hit_id", F("item__position").asc(nulls_first=True), "created_at", "id")
    )
    page.flags = flags
    flagged = Counter(flag.item.candidate_id for flag in flags if flag.item is not None and flag.item.candidate_id)
    for candidate in candidates:
        counts = {value: counted[candidate.pk].get(value, 0) for value, _ in page.values}
        excluded = candidate.stage == CandidateStage.EXCLUDED
        score, category = (None, "excluded") if excluded else verdict(counts)
        page.candidates.append(
            CandidateRow(
                candidate=candidate,
                counts=counts,
                by_value=[(value, counts[value], workers[candidate.pk].get(value, [])) for value, _ in page.values],
                score=score,
                category=category,
                not_counted=not_counted[candidate.pk],
                flags=flagged[candidate.pk],
                posterior_dawid_skene=(posteriors or {}).get(candidate.pk, (None, None))[0],
                posterior_mace=(posteriors or {}).get(candidate.pk, (None, None))[1],
            )
        )
    hits = (
        HIT.objects.filter(target=target)
        .select_related("batch")
        # The condition on the joined assignments themselves, not membership of every valid assignment
        # of every benchmark (a subquery that reads them all).
        .annotate(valid=Count("assignments", filter=_VALID_ASSIGNMENT_OF_HIT))
        .order_by("batch_id", "part")
    )
    page.hits = [HitRow(hit=hit, assignments_valid=hit.valid) for hit in hits]  # type: ignore[attr-defined]
    # Answers a label does not tell: structured ones, and answers to items that are not candidates
    # (a sentence to mark, a target to propose substitutes for). Controls stay out: they are checks.
    answers = (
        Answer.objects.filter(item__hit__target=target, item__control=False)
        .filter(Q(data__isnull=False) | Q(item__candidate__isnull=True))
        .select_related("assignment__worker", "item__hit__batch")
        .order_by("item__hit_id", "assignment_id", "item__position")
    )
    pages = {step.number: get_scheme(benchmark, step=step.number).page for step in scheme.steps}
    page.answers = []
    for answer in answers[:500]:
        shown = pages.get(answer.item.hit.batch.step, scheme.page)
        page.answers.append(
            AnswerRow(
                hit_id=answer.item.hit_id,
                worker=_worker_name(answer.assignment.worker),
                item=answer.item.text,
                value=answer.value,
                data=answer.data,
                template=shown.answers_template,
                choices=shown.choices,
            )
        )
    return page
