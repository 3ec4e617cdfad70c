"""The qualification test on MTurk: the platform's own qualification type per endpoint.

``CreateQualificationType`` makes it once per endpoint, with MTurk's own form of the test (a
QuestionForm of ``length`` gold items, the same for everyone, and its AnswerKey), so an MTurk worker
can take the test where they find the HITs and MTurk scores it as a percentage. Workers who passed
the test on this platform are granted the type (``AssociateQualificationWithWorker``, value 100), and
a sync reads back who holds it (``ListWorkersWithQualificationType``) for the researcher's page. The
batches of a benchmark with an active test require a value of at least the pass mark in percent
(``QualificationRequirements`` of the HIT type; ``hit_type_params`` below).

All calls go through ``MTurkBackend.call`` (boto3's ``mturk`` client, errors as ``MTurkError``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from xml.sax.saxutils import escape

from django.db import transaction
from django.utils import timezone

from annotation.changes import benchmark_changed
from annotation.models import Worker
from crowds.mturk.client import NAME, Qualifications, batch_environment
from hits.qualification.gold import balanced_indices
from hits.qualification.models import GoldAnswer, QualificationAttempt, QualificationItem, QualificationTest
from hits.qualification.services import answer_is_correct, gold_scheme

if TYPE_CHECKING:
    from mypy_boto3_mturk.type_defs import QualificationRequirementTypeDef

    from hits.models import Batch

QUESTION_FORM_SCHEMA = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2017-11-06/QuestionForm.xsd"
ANSWER_KEY_SCHEMA = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/AnswerKey.xsd"
# The value a worker who passed on this platform is granted: the top of MTurk's percentage scale.
PASSED_VALUE = 100
# MTurk's form gives a worker this long to answer (the test is a few short questions).
TEST_SECONDS = 30 * 60


class MTurkCalls(Protocol):
    """What the test's type needs of the MTurk backend (``MTurkBackend``, which imports this module)."""

    def call(self, environment: str, operation: str, **params: Any) -> dict[str, Any]: ...

    def _pages(self, environment: str, operation: str, key: str, **params: Any) -> Iterator[dict[str, Any]]: ...


def _backend(backend: MTurkCalls | None) -> MTurkCalls:
    if backend is not None:
        return backend
    from crowds.interface import get_backend

    return get_backend(NAME)  # type: ignore[return-value]


def mark_percent(test: QualificationTest) -> int:
    """The pass mark as MTurk compares it: a whole percentage, rounded up so it is never easier."""
    return math.ceil(round(test.pass_mark * 100, 6))


def mturk_form_items(test: QualificationTest) -> list[QualificationItem]:
    """The items of MTurk's form of the test: one seeded, balanced draw of ``length`` (the form is the
    same for every worker there)."""
    items = list(test.items.order_by("position"))
    accepts = [item for item in items if item.expected == GoldAnswer.ACCEPT]
    rejects = [item for item in items if item.expected != GoldAnswer.ACCEPT]
    rng = random.Random(f"qualification:{test.seed}:{test.pk}:mturk")
    drawn = balanced_indices(len(accepts), len(rejects), test.length, rng)
    return [accepts[i] if side == 0 else rejects[i] for side, i in drawn]


def question_form_xml(test: QualificationTest, items: list[QualificationItem]) -> str:
    """MTurk's QuestionForm of the test: per item, the text with the target in brackets and the
    scheme's choices as radio buttons. Every text is XML-escaped (contexts are arbitrary text)."""
    scheme = gold_scheme(test.benchmark).scheme
    before, after = scheme.page.question_around_target()
    selections = "".join(
        f"<Selection><SelectionIdentifier>{escape(choice.value)}</SelectionIdentifier>"
        f"<Text>{escape(choice.label)}</Text></Selection>"
        for choice in scheme.page.choices
    )
    questions = []
    for number, item in enumerate(items, start=1):
        end = item.offset + len(item.word)
        text = f"{item.context[: item.offset]}[{item.context[item.offset : end]}]{item.context[end:]}"
        questions.append(
            "<Question>"
            f"<QuestionIdentifier>item-{item.pk}</QuestionIdentifier>"
            "<IsRequired>true</IsRequired>"
            "<QuestionContent>"
            f"<Text>{number}. {escape(before)}[{escape(item.word)}]{escape(after)}</Text>"
            f"<Text>{escape(text)}</Text>"
            f"<Text>Candidate: {escape(item.candidate)}</Text>"
            "</QuestionContent>"
            "<AnswerSpecification><SelectionAnswer><StyleSuggestion>radiobutton</StyleSuggestion>"
            f"<Selections>{selections}</Selections></SelectionAnswer></AnswerSpecification>"
            "</Question>"
        )
    overview = (
        f"Before working on these HITs, please answer {len(items)} questions as you would in a HIT. "
        f"You need {mark_percent(test)} % of answers as expected; the test is taken once."
    )
    return (
        f'<QuestionForm xmlns="{QUESTION_FORM_SCHEMA}"><Overview><Text>{escape(overview)}</Text></Overview>'
        + "".join(questions)
        + "</QuestionForm>"
    )


def answer_key_xml(test: QualificationTest, items: list[QualificationItem]) -> str:
    """The AnswerKey that scores MTurk's form as this platform grades an attempt: one point per answer
    as expected (``answer_is_correct``), mapped to a percentage."""
    scheme, gold = gold_scheme(test.benchmark)
    questions = []
    for item in items:
        options = "".join(
            f"<AnswerOption><SelectionIdentifier>{escape(choice.value)}</SelectionIdentifier>"
            f"<AnswerScore>{int(answer_is_correct(gold=gold, expected=item.expected, answer=choice.value))}"
            "</AnswerScore></AnswerOption>"
            for choice in scheme.page.choices
        )
        questions.append(f"<Question><QuestionIdentifier>item-{item.pk}</QuestionIdentifier>{options}</Question>")
    return (
        f'<AnswerKey xmlns="{ANSWER_KEY_SCHEMA}">'
        + "".join(questions)
        + "<QualificationValueMapping><PercentageMapping>"
        f"<MaximumSummedScore>{len(items)}</MaximumSummedScore>"
        "</PercentageMapping></QualificationValueMapping></AnswerKey>"
    )


def type_name(test: QualificationTest) -> str:
    """Unique per requester account, as MTurk wants: the benchmark and the test's own id and date."""
    return f"Qualification for {test.benchmark.name} (test {test.pk}, {test.created_at:%Y-%m-%d %H:%M})"


def qualification_type_params(test: QualificationTest) -> dict[str, Any]:
    items = mturk_form_items(test)
    title = test.benchmark.title or test.benchmark.name
    return {
        "Name": type_name(test),
        "Keywords": "language, words, qualification",
        "Description": f"A short test before the HITs of “{title}”: judge whether words fit in a text.",
        "QualificationTypeStatus": "Active",
        # No RetryDelayInSeconds: on MTurk, too, the test is taken once.
        "Test": question_form_xml(test, items),
        "AnswerKey": answer_key_xml(test, items),
        "TestDurationInSeconds": TEST_SECONDS,
    }


def mturk_qualification_type(*, test: QualificationTest, environment: str, backend: MTurkCalls | None = None) -> str:
    """The test's qualification type on ``environment``, created on first use and remembered in
    ``QualificationTest.crowd_types``. Idempotent: when MTurk already has a type of this name (a
    create that timed out), it is found by name instead of made twice.

    Locking: the test's row is locked (``FOR UPDATE``) around the create, so two publishes of the
    benchmark's batches make one type."""
    from crowds.mturk.client import MTurkError

    mturk = _backend(backend)
    with transaction.atomic():
        locked = QualificationTest.objects.select_for_update().select_related("benchmark").get(pk=test.pk)
        found = locked.crowd_types.get(environment)
        if found:
            test.crowd_types = locked.crowd_types
            return str(found)
        params = qualification_type_params(locked)
        try:
            response = mturk.call(environment, "create_qualification_type", **params)
            type_id = str(response["QualificationType"]["QualificationTypeId"])
        except MTurkError as error:
            type_id = _type_named(mturk, environment, params["Name"])
            if not type_id:
                raise error
        locked.crowd_types = {**locked.crowd_types, environment: type_id}
        locked.save(update_fields=["crowd_types"])
        # The researcher's qualification page shows the type (docs/design.md §7, "Kept pages").
        benchmark_changed(benchmark_id=locked.benchmark_id, target_ids=())
        test.crowd_types = locked.crowd_types
    return type_id


def _type_named(mturk: MTurkCalls, environment: str, name: str) -> str:
    for found in mturk._pages(
        environment,
        "list_qualification_types",
        "QualificationTypes",
        Query=name,
        MustBeRequestable=False,
        MustBeOwnedByCaller=True,
    ):
        if found.get("Name") == name:
            return str(found["QualificationTypeId"])
    return ""


def batch_requirement(batch: Batch, environment: str) -> list[QualificationRequirementTypeDef]:
    """The requirement a batch of a benchmark with an active test adds to its HIT type: the test's
    type with at least the pass mark. Empty when there is no active test, or its type is not made
    yet on ``environment`` (``mturk_qualification_type`` makes it when the batch is published)."""
    test = QualificationTest.objects.filter(benchmark_id=batch.benchmark_id, active=True).first()
    type_id = test.crowd_types.get(environment) if test is not None else None
    if test is None or not type_id:
        return []
    return [
        {
            "QualificationTypeId": str(type_id),
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [mark_percent(test)],
            # Workers without it still find and preview the HITs, and MTurk offers them the test.
            "ActionsGuarded": "Accept",
        }
    ]


@dataclass
class GrantResult:
    type_id: str = ""
    granted: list[str] = field(default_factory=list)
    already: int = 0


def mturk_qualification_grant(
    *, test: QualificationTest, environment: str, backend: MTurkCalls | None = None
) -> GrantResult:
    """Grant the test's type (value 100) to every MTurk worker who passed the test on this platform and
    has not been granted it on ``environment`` yet; each grant is recorded on the attempt
    (``granted_on``) as soon as MTurk took it, so a failure midway loses nothing and a retry skips it."""
    mturk = _backend(backend)
    result = GrantResult(type_id=mturk_qualification_type(test=test, environment=environment, backend=mturk))
    attempts = test.attempts.filter(passed=True, worker__kind="mturk").select_related("worker")
    for attempt in attempts.order_by("pk"):
        if environment in attempt.granted_on:
            result.already += 1
            continue
        mturk.call(
            environment,
            "associate_qualification_with_worker",
            QualificationTypeId=result.type_id,
            WorkerId=attempt.worker.external_id,
            IntegerValue=PASSED_VALUE,
            SendNotification=True,
        )
        attempt.granted_on = [*attempt.granted_on, environment]
        attempt.save(update_fields=["granted_on"])
        result.granted.append(attempt.worker.external_id)
    return result


def mturk_qualification_sync(*, test: QualificationTest, environment: str, backend: MTurkCalls | None = None) -> int:
    """Record the results of workers who took MTurk's form of the test (their value, a percentage) as
    their attempts, so the researcher's page shows them; returns how many were new. A worker's value
    is MTurk's score: ``correct`` holds it and ``total`` is 100."""
    type_id = test.crowd_types.get(environment)
    if not type_id:
        return 0
    mturk = _backend(backend)
    mark = mark_percent(test)
    known = set(test.attempts.values_list("worker__external_id", "worker__kind"))
    added = 0
    for held in mturk._pages(
        environment,
        "list_workers_with_qualification_type",
        "Qualifications",
        QualificationTypeId=type_id,
        Status="Granted",
    ):
        worker_id = str(held.get("WorkerId", ""))
        if not worker_id or (worker_id, "mturk") in known:
            continue
        worker, _ = Worker.objects.get_or_create(kind="mturk", external_id=worker_id)
        value = int(held.get("IntegerValue", 0))
        when = held.get("GrantTime") or timezone.now()
        _, created = QualificationAttempt.objects.get_or_create(
            test=test,
            worker=worker,
            defaults={
                "items": [],
                "correct": max(0, min(value, PASSED_VALUE)),
                "total": PASSED_VALUE,
                "passed": value >= mark,
                "started_at": when,
                "submitted_at": when,
                "granted_on": [environment],
            },
        )
        added += created
    return added


def hit_type_params(batch: Batch) -> dict[str, Any]:
    """The arguments of create_hit_type for a batch (also what the dry run prints). A benchmark with
    an active qualification test adds its type once it exists (``batch_requirement``)."""
    requirements = Qualifications.from_json(batch.qualifications).requirements()
    requirements += batch_requirement(batch, batch_environment(batch))
    return {
        "AutoApprovalDelayInSeconds": int(batch.auto_approval_delay.total_seconds()),
        "AssignmentDurationInSeconds": int(batch.assignment_duration.total_seconds()),
        "Reward": f"{batch.reward:.2f}",
        "Title": batch.title,
        "Keywords": batch.keywords,
        "Description": batch.description,
        "QualificationRequirements": requirements,
    }
