"""Reads of the qualification test: where a person stands, what the test page shows, and the
researcher's figures (pass rate, each person's result, how each item fares)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet

from annotation.access import role_of
from annotation.models import Benchmark, TargetStage, Worker
from annotation.roles import is_researcher
from crowds.interface import ARRIVAL_QUEUE, QUALIFICATION, backends, queue_backend_names
from hits.models import HIT, BatchStatus
from hits.qualification.models import QualificationAttempt, QualificationItem, QualificationTest
from hits.qualification.services import answer_is_correct, gold_scheme, offered_gold_scheme


def crowds_held_to_test() -> list[str]:
    """What the pages call the crowds whose workers an active test holds back: those who claim from the
    local queue, and those whose crowd keeps a qualification type that follows the test."""
    return [
        backend.short_label
        for backend in backends()
        if backend.arrival == ARRIVAL_QUEUE or QUALIFICATION in backend.capabilities
    ]


def benchmark_to_take(*, user: object, name: str) -> Benchmark | None:
    """The benchmark ``name`` for someone about to take its test, or None where there is none to show
    them. A researcher takes tests as an annotator does, but a benchmark they may not see (another's
    private one) is, for them, exactly as if it did not exist: the name does not leak
    (docs/permissions.md)."""
    benchmark = Benchmark.objects.filter(name=name).first()
    if benchmark is None or (is_researcher(user) and role_of(user, benchmark) is None):
        return None
    return benchmark


class Standing:
    """Where a person stands with a benchmark's test."""

    NONE = "none"  # the benchmark has no active test: its HITs are open to all
    PENDING = "pending"  # not taken (or not finished) yet
    PASSED = "passed"
    FAILED = "failed"


def offers_test(benchmark: Benchmark) -> bool:
    """Whether the benchmark's scheme offers a qualification test (its pages are linked only then)."""
    return offered_gold_scheme(benchmark) is not None


def standing(*, worker: Worker, benchmark: Benchmark) -> str:
    test = QualificationTest.objects.filter(benchmark=benchmark, active=True).first()
    if test is None:
        return Standing.NONE
    passed = QualificationAttempt.objects.filter(test=test, worker=worker).values_list("passed", flat=True).first()
    if passed is None:
        return Standing.PENDING
    return Standing.PASSED if passed else Standing.FAILED


def failed_annotators(*, benchmark: Benchmark, workers: Sequence[Worker]) -> list[str]:
    """Of ``workers``, those who failed the benchmark's active test (by id, in the order given)."""
    failed = set(
        QualificationAttempt.objects.filter(
            test__benchmark=benchmark, test__active=True, passed=False, worker__in=workers
        ).values_list("worker_id", flat=True)
    )
    return [worker.external_id for worker in workers if worker.pk in failed]


def _gated_with_work(*, batch_id: int | None, benchmark_id: int | None) -> QuerySet[QualificationTest]:
    """Active tests of benchmarks with local HITs on offer in scope: an open local batch, a target not
    done, a free slot (what the claim query walks, ``hits.services.queue``)."""
    offered = HIT.objects.filter(
        batch__benchmark_id=OuterRef("benchmark_id"),
        batch__status=BatchStatus.OPEN,
        batch__backend__in=queue_backend_names(),
        assignments_active__lt=F("assignments_required"),
    ).exclude(target__stage=TargetStage.DONE)
    if batch_id is not None:
        offered = offered.filter(batch_id=batch_id)
    tests = QualificationTest.objects.filter(active=True).filter(Exists(offered))
    if benchmark_id is not None:
        tests = tests.filter(benchmark_id=benchmark_id)
    return tests.select_related("benchmark").order_by("benchmark__name")


def pending_test(
    *, worker: Worker, batch_id: int | None = None, benchmark_id: int | None = None
) -> QualificationTest | None:
    """A test the worker has yet to take (or finish) before the queue may offer them work in scope."""
    attempted = QualificationAttempt.objects.filter(test=OuterRef("pk"), worker=worker, submitted_at__isnull=False)
    return _gated_with_work(batch_id=batch_id, benchmark_id=benchmark_id).exclude(Exists(attempted)).first()


def failed_tests(
    *, worker: Worker, batch_id: int | None = None, benchmark_id: int | None = None
) -> list[QualificationTest]:
    """Tests the worker failed, of benchmarks with work on offer in scope: the queue says why it has none."""
    failed = QualificationAttempt.objects.filter(test=OuterRef("pk"), worker=worker, passed=False)
    return list(_gated_with_work(batch_id=batch_id, benchmark_id=benchmark_id).filter(Exists(failed)))


@dataclass(frozen=True)
class GoldRow:
    """One row of the test page: an item to judge, its number, and the answer given so far."""

    id: int
    number: int
    text: str
    selected: str = ""
    missing: bool = False


@dataclass(frozen=True)
class GoldGroup:
    """Consecutive items of one context and target, shown under one text."""

    before: str
    target: str
    after: str
    word: str
    rows: list[GoldRow]


def attempt_page(
    *, attempt: QualificationAttempt, selected: dict[int, str] | None = None, missing: set[int] | None = None
) -> list[GoldGroup]:
    """The attempt's items in the order drawn, grouped by context and target as they follow each other."""
    items = QualificationItem.objects.in_bulk(attempt.items)
    selected = selected if selected is not None else {int(key): value for key, value in attempt.answers.items()}
    missing = missing or set()
    groups: list[GoldGroup] = []
    for number, pk in enumerate((pk for pk in attempt.items if pk in items), start=1):
        item = items[pk]
        row = GoldRow(id=pk, number=number, text=item.candidate, selected=selected.get(pk, ""), missing=pk in missing)
        end = item.offset + len(item.word)
        before, target, after = item.context[: item.offset], item.context[item.offset : end], item.context[end:]
        if groups and (groups[-1].before, groups[-1].target, groups[-1].after) == (before, target, after):
            groups[-1].rows.append(row)
        else:
            groups.append(GoldGroup(before=before, target=target, after=after, word=item.word, rows=[row]))
    return groups


@dataclass(frozen=True)
class ItemFigures:
    item: QualificationItem
    shown: int
    correct: int
    # What the item expects, in the scheme's words (ProLex: "1" for accept).
    expected: str

    @property
    def share_correct(self) -> float | None:
        return self.correct / self.shown if self.shown else None


@dataclass(frozen=True)
class TestSummary:
    test: QualificationTest
    items: int
    started: int
    taken: int
    passed: int
    # How many items expect each answer, in the scheme's words and order: (("1", 4), ("-1", 4)).
    by_answer: tuple[tuple[str, int], ...]

    @property
    def failed(self) -> int:
        return self.taken - self.passed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.taken if self.taken else None


def test_summary(test: QualificationTest) -> TestSummary:
    gold = gold_scheme(test.benchmark).gold
    items = list(test.items.values_list("expected", flat=True))
    attempts = test.attempts.aggregate(
        started=_count(), taken=_count(submitted_at__isnull=False), passed=_count(passed=True)
    )
    return TestSummary(
        test=test,
        items=len(items),
        started=attempts["started"],
        taken=attempts["taken"],
        passed=attempts["passed"],
        by_answer=tuple((gold.word(label), items.count(label)) for label in gold.labels),
    )


def _count(**conditions: object) -> Count:
    return Count("id", filter=Q(**conditions)) if conditions else Count("id")


def test_attempts(test: QualificationTest) -> QuerySet[QualificationAttempt]:
    """Each person's result, newest first."""
    return test.attempts.select_related("worker").order_by("-started_at", "-id")


def item_figures(test: QualificationTest, items: Iterable[QualificationItem] | None = None) -> list[ItemFigures]:
    """How often each item was shown and answered as expected: an item most people miss may not be
    gold. ``items``: those of the test to count (one page of them); every item by default."""
    gold = gold_scheme(test.benchmark).gold
    items = list(test.items.order_by("position") if items is None else items)
    shown = dict.fromkeys((item.pk for item in items), 0)
    correct = dict.fromkeys((item.pk for item in items), 0)
    expected = {item.pk: item.expected for item in items}
    for answers in test.attempts.filter(submitted_at__isnull=False).values_list("answers", flat=True):
        for key, value in answers.items():
            pk = int(key)
            if pk in shown:
                shown[pk] += 1
                correct[pk] += answer_is_correct(gold=gold, expected=expected[pk], answer=value)
    return [
        ItemFigures(item=item, shown=shown[item.pk], correct=correct[item.pk], expected=gold.word(item.expected))
        for item in items
    ]


FAILED_MESSAGE = "You did not pass the qualification test of {name}, so its HITs are not offered to you."
PENDING_MESSAGE = "Take the qualification test of {name} first: its HITs are offered to those who pass it."


@dataclass(frozen=True)
class ClaimRefusal:
    """Why a claim found nothing that a qualification test keeps back: ``failed`` or ``pending``."""

    reason: str
    test: QualificationTest

    @property
    def message(self) -> str:
        template = FAILED_MESSAGE if self.reason == Standing.FAILED else PENDING_MESSAGE
        return template.format(name=self.test.benchmark.name)


def claim_refusal(
    *, worker: Worker, batch_id: int | None = None, benchmark: Benchmark | None = None
) -> ClaimRefusal | None:
    """After a claim found no HIT: the test that stood in the way, if one did. A claim scoped to a
    benchmark (or one of its batches) whose test the worker failed is refused outright; otherwise a
    test not taken yet in front of work on offer in scope is named."""
    if benchmark is not None and standing(worker=worker, benchmark=benchmark) == Standing.FAILED:
        return ClaimRefusal(
            Standing.FAILED, QualificationTest.objects.select_related("benchmark").get(benchmark=benchmark)
        )
    test = pending_test(worker=worker, batch_id=batch_id, benchmark_id=benchmark.pk if benchmark else None)
    return ClaimRefusal(Standing.PENDING, test) if test is not None else None
