"""Writes of the qualification test: building it, and a person's one attempt (start, submit).

Who may take a benchmark's HITs once it has a test is decided in the claim query itself
(``hits.services.queue``): only people whose attempt passed.

Every write here moves the benchmark's change key in its transaction, naming no target (no figures
are recomputed): the researcher's qualification page shows the test and each attempt, and is kept
while the key stays (docs/design.md §7, "Kept pages").
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Worker
from hits.qualification.gold import GoldItem, balanced_indices, expectation_error, gold_item_check
from hits.qualification.models import GoldAnswer, QualificationAttempt, QualificationItem, QualificationTest
from schemes import AnnotationScheme, get_scheme
from schemes.base import ItemRef, QualificationGold, scheme_qualification


class QualificationRefused(ValidationError):
    """A test cannot be built or changed as asked, or an attempt cannot be taken; the message says why."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message, code=code)


class GoldScheme(NamedTuple):
    """The scheme whose page a benchmark's test shows, and what its test asks (``QualificationGold``)."""

    scheme: AnnotationScheme
    gold: QualificationGold


def offered_gold_scheme(benchmark: Benchmark) -> GoldScheme | None:
    """The benchmark's scheme and its qualification test, or None when the scheme offers no test."""
    scheme = get_scheme(benchmark)
    gold = scheme_qualification(scheme)
    # A test stores its expectations as the labels a gold item holds (accept, reject).
    if gold is None or not set(gold.labels) <= set(GoldAnswer.values):
        return None
    return GoldScheme(scheme, gold)


def no_test_message(benchmark: Benchmark) -> str:
    return (
        f"{benchmark.name} takes no qualification test: its scheme, {get_scheme(benchmark).title}, offers none "
        "(docs/qualification.md)."
    )


def gold_scheme(benchmark: Benchmark) -> GoldScheme:
    """The scheme whose page and answers the test of ``benchmark`` uses, and what its test asks; a
    scheme that offers no test (``schemes.base.scheme_qualification``) is refused (code ``scheme``)."""
    found = offered_gold_scheme(benchmark)
    if found is None:
        raise QualificationRefused(no_test_message(benchmark), code="scheme")
    return found


def gold_items_expected(items: Sequence[GoldItem], gold: QualificationGold) -> list[GoldItem]:
    """``items`` with each expectation read as the stored label it names (the scheme's word or the label),
    or ``QualificationRefused`` naming the first item whose expectation names neither."""
    read: list[GoldItem] = []
    for number, item in enumerate(items, start=1):
        label = gold.expects_label(item.expected)
        if label is None:
            raise QualificationRefused(
                f"Gold item {number}, field 'expected': {expectation_error(gold, item.expected)}.", code="item"
            )
        read.append(dataclasses.replace(item, expected=label))
    return read


def qualification_build(
    *,
    benchmark: Benchmark,
    items: Sequence[GoldItem],
    length: int,
    pass_mark: float,
    seed: int = 0,
    source: str = "",
    created_by: AbstractBaseUser | None = None,
) -> QualificationTest:
    """Make (or remake) the qualification test of ``benchmark`` from gold ``items``.

    Each attempt shows ``length`` of the items, and passes with at least ``pass_mark`` (a share,
    0 < pass_mark <= 1) of them answered as expected. A test that someone has taken keeps its
    items and marks (an attempt is graded against what it showed); remaking it is refused then.

    Locking: the benchmark's row is locked (``FOR UPDATE``) so two builds of one test, or a build and
    a first attempt (``qualification_attempt_start`` draws its items under the same lock), run one
    after the other.
    """
    gold = gold_scheme(benchmark).gold
    if not items:
        raise QualificationRefused("A qualification test needs at least one gold item.", code="no_items")
    if not 1 <= length <= len(items):
        raise QualificationRefused(
            f"The test's length must be between 1 and the {len(items)} gold items, not {length}.", code="length"
        )
    if not 0 < pass_mark <= 1:
        raise QualificationRefused(
            f"The pass mark is a share of correct answers, above 0 and at most 1, not {pass_mark}.", code="pass_mark"
        )
    items = gold_items_expected(items, gold)
    for number, item in enumerate(items, start=1):
        errors = gold_item_check(item, gold)
        if errors:
            field, message = next(iter(errors.items()))
            raise QualificationRefused(f"Gold item {number}, field {field!r}: {message}.", code="item")
    given = {item.expected for item in items}
    missing = [label for label in gold.labels if label not in given]
    if missing:
        # A test of one answer is passed by anyone who always gives that answer (a bot, a spammer).
        word = gold.word(missing[0])
        raise QualificationRefused(
            f"The gold items need every answer ({', '.join(gold.expects)}), but none expects {word}: someone who "
            f"always answered the other way would pass. Add items that expect {word} (from a finished benchmark, "
            "candidates dropped in step 2 have fewer labels: lower --min-labels, e.g. to 3).",
            code="one_sided",
        )
    with transaction.atomic():
        Benchmark.objects.select_for_update(no_key=True).filter(pk=benchmark.pk).first()
        test = QualificationTest.objects.filter(benchmark=benchmark).first()
        if test is not None:
            taken = test.attempts.count()
            if taken:
                raise QualificationRefused(
                    f"{taken} {'person has' if taken == 1 else 'people have'} taken the qualification test of "
                    f"{benchmark.name}: it stays as it is, so that every result means the same.",
                    code="taken",
                )
            test.items.all().delete()
        else:
            test = QualificationTest(benchmark=benchmark)
        test.length, test.pass_mark, test.seed, test.source = length, pass_mark, seed, source[:300]
        test.active = True
        if created_by is not None and test.created_by_id is None:
            test.created_by_id = created_by.pk
        test.save()
        QualificationItem.objects.bulk_create(
            QualificationItem(
                test=test,
                position=position,
                context=item.context,
                word=item.word,
                offset=item.offset,
                candidate=item.candidate,
                expected=item.expected,
                source_candidate_id=item.source_candidate_id,
                source_score=item.source_score,
            )
            for position, item in enumerate(items, start=1)
        )
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=())
    return test


def qualification_set_active(*, test: QualificationTest, active: bool) -> QualificationTest:
    """Switch the gate on or off; results are kept either way."""
    with transaction.atomic():
        QualificationTest.objects.filter(pk=test.pk).update(active=active)
        benchmark_changed(benchmark_id=test.benchmark_id, target_ids=())
    test.active = active
    return test


def _drawn_items(test: QualificationTest, worker: Worker) -> list[int]:
    """The items one attempt shows: a sample seeded by the test and the person, balanced between
    expected accepts and rejects as far as the items allow."""
    items = list(test.items.order_by("position").values_list("pk", "expected"))
    accepts = [pk for pk, expected in items if expected == GoldAnswer.ACCEPT]
    rejects = [pk for pk, expected in items if expected != GoldAnswer.ACCEPT]
    rng = random.Random(f"qualification:{test.seed}:{test.pk}:{worker.pk}")
    return [
        accepts[i] if side == 0 else rejects[i]
        for side, i in balanced_indices(len(accepts), len(rejects), test.length, rng)
    ]


def qualification_attempt_start(
    *, test: QualificationTest, worker: Worker, now: datetime | None = None
) -> QualificationAttempt:
    """The worker's attempt at ``test``: the one already started (or finished), else a new one with its
    items drawn.

    Locking: a new attempt is made holding the benchmark's row (``FOR UPDATE``, as
    ``qualification_build`` does), so a rebuild never swaps the items under an attempt being drawn;
    the unique (test, worker) constraint makes a second start (another tab) find the first.
    """
    found = QualificationAttempt.objects.filter(test=test, worker=worker).first()
    if found is not None:
        return found
    try:
        with transaction.atomic():
            Benchmark.objects.select_for_update(no_key=True).filter(pk=test.benchmark_id).first()
            current = QualificationTest.objects.filter(pk=test.pk).values_list("active", flat=True).first()
            if not current:
                raise QualificationRefused(
                    f"The qualification test of {test.benchmark.name} is closed.", code="inactive"
                )
            attempt = QualificationAttempt.objects.create(
                test=test, worker=worker, items=_drawn_items(test, worker), started_at=now or timezone.now()
            )
            benchmark_changed(benchmark_id=test.benchmark_id, target_ids=())
            return attempt
    except IntegrityError:
        # A second tab started it at the same moment.
        return QualificationAttempt.objects.get(test=test, worker=worker)


def attempt_item_refs(attempt: QualificationAttempt) -> list[ItemRef]:
    """The attempt's items as the scheme checks answers (kind and candidate mean nothing here)."""
    texts = dict(QualificationItem.objects.filter(pk__in=attempt.items).values_list("pk", "candidate"))
    return [ItemRef(pk, "gold", texts[pk], None, False) for pk in attempt.items if pk in texts]


def answer_is_correct(*, gold: QualificationGold, expected: str, answer: str) -> bool:
    """Whether an answer on the scheme's page meets the item's expected label, as the scheme says
    (``QualificationGold.meets``: SWORDS and ProLex let an abstention meet an expected reject, as for
    the distractor control, docs/design.md §3: not knowing a word that does not fit is no error)."""
    return gold.meets(expected=expected, answer=answer)


def qualification_attempt_submit(
    *, attempt: QualificationAttempt, answers: Mapping[Any, Any], now: datetime | None = None
) -> QualificationAttempt:
    """Grade the attempt: every item shown answered with one of the scheme's choices (else
    ``AnswersInvalid``, and nothing is stored), the share of expected answers against the pass mark.

    Idempotent: the attempt row is locked (``FOR UPDATE``); one already submitted is returned as it
    is, so a second submit never changes a result.
    """
    with transaction.atomic():
        locked = QualificationAttempt.objects.select_for_update().select_related("test__benchmark").get(pk=attempt.pk)
        if locked.submitted_at is not None:
            return locked
        scheme, gold = gold_scheme(locked.test.benchmark)
        cleaned = scheme.clean_answers(items=attempt_item_refs(locked), answers=answers)
        expected = dict(QualificationItem.objects.filter(pk__in=locked.items).values_list("pk", "expected"))
        correct = sum(
            answer_is_correct(gold=gold, expected=expected[item_id], answer=answer.value)
            for item_id, answer in cleaned.items()
        )
        locked.answers = {str(item_id): answer.value for item_id, answer in cleaned.items()}
        locked.correct, locked.total = correct, len(cleaned)
        # Compared in whole numbers so a pass mark of 0.8 on 10 items needs exactly 8.
        locked.passed = correct * 1_000_000 >= round(locked.test.pass_mark * 1_000_000) * len(cleaned)
        locked.submitted_at = now or timezone.now()
        locked.save(update_fields=["answers", "correct", "total", "passed", "submitted_at"])
        benchmark_changed(benchmark_id=locked.test.benchmark_id, target_ids=())
    return locked


def qualification_attempt_reset(*, attempt: QualificationAttempt) -> None:
    """A researcher lets a person take the test again (a mistake, a changed test): the attempt goes."""
    with transaction.atomic():
        QualificationAttempt.objects.filter(pk=attempt.pk).delete()
        benchmark_changed(benchmark_id=attempt.test.benchmark_id, target_ids=())
