"""Builders for the qualification tests: gold items, a benchmark with a test, answering it."""

from __future__ import annotations

from annotation.models import Benchmark, Worker
from hits.qualification import (
    GoldItem,
    gold_scheme,
    qualification_attempt_start,
    qualification_attempt_submit,
    qualification_build,
)
from hits.qualification.models import QualificationAttempt, QualificationItem, QualificationTest

ACCEPTS = [("The bright student solved it.", "bright", "clever"), ("She ran quickly home.", "quickly", "fast")]
REJECTS = [("The bright student solved it.", "bright", "table"), ("She ran quickly home.", "quickly", "green")]


def gold_items(accepts: int = 4, rejects: int = 4) -> list[GoldItem]:
    items = []
    for number in range(accepts):
        context, word, candidate = ACCEPTS[number % len(ACCEPTS)]
        items.append(GoldItem(context, word, context.index(word), f"{candidate}{number or ''}", "accept"))
    for number in range(rejects):
        context, word, candidate = REJECTS[number % len(REJECTS)]
        items.append(GoldItem(context, word, context.index(word), f"{candidate}{number or ''}", "reject"))
    return items


def with_test(benchmark: Benchmark, *, length: int = 6, pass_mark: float = 0.8) -> QualificationTest:
    return qualification_build(benchmark=benchmark, items=gold_items(), length=length, pass_mark=pass_mark)


def expected_answers(attempt: QualificationAttempt, *, wrong: int = 0) -> dict[int, str]:
    """The expected answer to every item shown, but the first ``wrong`` of them answered otherwise."""
    expected = dict(QualificationItem.objects.filter(pk__in=attempt.items).values_list("pk", "expected"))
    scheme, gold = gold_scheme(attempt.test.benchmark)
    choices = [option.value for option in scheme.page.choices]

    def answer(label: str, *, meets: bool) -> str:
        # The first of the scheme's choices that meets (or misses) the expectation: ProLex's 1 or -1.
        return next(value for value in choices if gold.meets(expected=label, answer=value) == meets)

    return {pk: answer(expected[pk], meets=number >= wrong) for number, pk in enumerate(attempt.items)}


def take(test: QualificationTest, worker: Worker, *, wrong: int = 0) -> QualificationAttempt:
    attempt = qualification_attempt_start(test=test, worker=worker)
    return qualification_attempt_submit(attempt=attempt, answers=expected_answers(attempt, wrong=wrong))
