"""Notifications: events recorded once, e-mailed through Django's mail backend to the researchers who
asked, and posted to a local webhook receiver (http.server in a thread) with an HMAC-SHA256 signature
it checks; a 500 is tried again with a doubling wait, and every try is on the benchmark's page."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Benchmark, Worker
from hits.models import CrowdLimits, Notification, NotificationKind, NotificationSettings, WebhookDelivery
from hits.notifications import (
    SIGNATURE_HEADER,
    benchmark_watch,
    notification_deliver,
    notification_record,
    notification_settings_update,
    webhook_verify,
)
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from review.services import benchmark_refresh
from tests.base import Cast, logged_in, make_cast
from tests.hits.factories import answers_for, honest_answers, make_benchmark, make_target
from tests.hits.receiver import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast() -> Cast:
    return make_cast()


@pytest.fixture
def receiver_factory(settings: Any) -> Iterator[Callable[[list[int]], Receiver]]:
    # The receiver listens on 127.0.0.1, which webhooks may reach only when this is on
    # (tests/hits/test_webhook_addresses.py shows the refusal with it off).
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    started: list[Receiver] = []

    def start(statuses: list[int]) -> Receiver:
        receiver = Receiver(statuses).__enter__()
        started.append(receiver)
        return receiver

    yield start
    for receiver in started:
        receiver.__exit__()


def _hooked(benchmark: Benchmark, cast: Cast, url: str = "", email: bool = False) -> str:
    cast.researcher.email = "rita@lab.example.org"
    cast.researcher.save(update_fields=["email"])
    _, secret = notification_settings_update(benchmark=benchmark, webhook_url=url, email_me=email, user=cast.researcher)
    return secret


def test_an_event_is_posted_signed_and_tried_again_after_a_500(
    cast: Cast, receiver_factory: Callable[[list[int]], Receiver], django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = make_benchmark()
    receiver = receiver_factory([500, 200])
    secret = _hooked(benchmark, cast, receiver.url)
    assert len(secret) == 64

    with django_capture_on_commit_callbacks(execute=True):
        notification = notification_record(
            benchmark=benchmark,
            kind=NotificationKind.BATCH_DONE,
            key="batch:7",
            summary="batch 7 is done",
            data={"batch": 7},
        )
    assert notification is not None

    assert len(receiver.received) == 2
    for headers, body in receiver.received:
        header = headers[SIGNATURE_HEADER]
        timestamp, signature = (part.split("=", 1)[1] for part in header.split(","))
        # What a receiver computes: HMAC-SHA256 of "<timestamp>.<body>" with the secret.
        expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(signature, expected)
        assert webhook_verify(secret=secret, header=header, body=body)
        assert not webhook_verify(secret=secret, header=header, body=body + b" ")
        assert not webhook_verify(secret="another", header=header, body=body)
        assert headers["Content-Type"] == "application/json" and headers["Crowdlex-Event"] == "batch_done"
    document = json.loads(receiver.received[0][1])
    assert (document["event"], document["benchmark"], document["data"], document["id"]) == (
        "batch_done",
        benchmark.name,
        {"batch": 7},
        notification.pk,
    )
    deliveries = list(WebhookDelivery.objects.order_by("attempt").values_list("attempt", "status_code"))
    assert deliveries == [(1, 500), (2, 200)]
    notification.refresh_from_db()
    assert notification.delivered_at is not None and notification.webhook_error == ""


def test_the_wait_doubles_and_the_webhook_is_given_up_after_the_last_attempt(
    cast: Cast, receiver_factory: Callable[[list[int]], Receiver], settings: Any
) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    settings.WEBHOOK_RETRY_SECONDS = 30
    benchmark = make_benchmark()
    receiver = receiver_factory([500])
    _hooked(benchmark, cast, receiver.url)
    notification = Notification.objects.create(
        benchmark=benchmark, kind=NotificationKind.WORKER_FLAGGED, key="flag:1", summary="flagged", payload={}
    )
    waits = [notification_deliver(notification_id=notification.pk, attempt=attempt) for attempt in (1, 2, 3)]
    assert waits == [30, 60, None]
    # A task run twice for one attempt posts once.
    assert notification_deliver(notification_id=notification.pk, attempt=3) is None
    assert len(receiver.received) == 3
    notification.refresh_from_db()
    assert notification.webhook_error == "gave up after 3 attempts: the webhook answered 500"


def _statements(run: Callable[[], object]) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        run()
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.production_database("pins the statements as PostgreSQL runs them: SQLite moves a change key in several")
def test_a_delivery_reads_in_one_statement_and_writes_its_attempt_with_its_outcome(
    cast: Cast, receiver_factory: Callable[[list[int]], Receiver]
) -> None:
    """A notification nobody asked for, or that no one takes by e-mail or webhook, costs its task one
    statement; a post's attempt and the notification's outcome are written in one transaction."""
    quiet = make_benchmark()
    event = {"kind": NotificationKind.BATCH_DONE, "key": "batch:1", "summary": "done", "payload": {}}
    unasked = Notification.objects.create(benchmark=quiet, **event)
    assert len(_statements(lambda: notification_deliver(notification_id=unasked.pk))) == 1
    _hooked(quiet, cast)
    assert len(_statements(lambda: notification_deliver(notification_id=unasked.pk))) == 1
    assert len(_statements(lambda: notification_deliver(notification_id=unasked.pk + 1000))) == 1

    hooked = make_benchmark()
    receiver = receiver_factory([200])
    _hooked(hooked, cast, receiver.url)
    posted = Notification.objects.create(benchmark=hooked, **event)
    statements = _statements(lambda: notification_deliver(notification_id=posted.pk))
    assert len(receiver.received) == 1
    # One read, then the attempt, the outcome and the move of the benchmark's change key (the
    # operations page shows the outcome) inside one (here nested) transaction.
    assert len(statements) == 6, statements
    assert statements[1].startswith("SAVEPOINT") and statements[5].startswith("RELEASE SAVEPOINT"), statements
    assert statements[2].startswith("INSERT INTO") and statements[3].startswith("UPDATE"), statements
    assert "annotation_benchmarkchanges" in statements[4], statements
    posted.refresh_from_db()
    assert posted.delivered_at is not None
    # A task run again for the attempt reads once and posts nothing.
    assert len(_statements(lambda: notification_deliver(notification_id=posted.pk))) == 1
    assert len(receiver.received) == 1


def test_an_event_is_recorded_once_and_e_mailed_once_to_those_who_asked(
    cast: Cast, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    benchmark = make_benchmark()
    _hooked(benchmark, cast, email=True)
    with django_capture_on_commit_callbacks(execute=True):
        first = notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:3", summary="batch 3 is done", data={}
        )
        again = notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:3", summary="batch 3 is done", data={}
        )
    assert first is not None and again is None
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["rita@lab.example.org"]
    assert mail.outbox[0].subject == f"[crowdlex] {benchmark.name}: a batch is done"
    assert "batch 3 is done" in mail.outbox[0].body
    # Asking for no more e-mail stops it.
    notification_settings_update(benchmark=benchmark, webhook_url="", email_me=False, user=cast.researcher)
    with django_capture_on_commit_callbacks(execute=True):
        notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:4", summary="batch 4 is done", data={}
        )
    assert len(mail.outbox) == 1


def test_a_batch_is_told_done_once_when_every_hit_has_its_work(cast: Cast) -> None:
    benchmark = make_benchmark(reward=Decimal("0"))
    make_target(benchmark)
    batch = hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=2)
    assert benchmark_watch(benchmark=benchmark) == []
    for user in (cast.alice, cast.bob):
        worker = Worker.objects.get(user=user)
        for _ in batch.hits.all():
            held = assignment_claim_next(worker=worker, batch=batch)
            assert held is not None
            assignment_submit(assignment=held, answers=honest_answers(held.hit), worker=worker)
    told = benchmark_watch(benchmark=benchmark)
    assert [(n.kind, n.payload) for n in told] == [(NotificationKind.BATCH_DONE, {"batch": batch.pk})]
    assert benchmark_watch(benchmark=benchmark) == []


def test_the_budget_warning_comes_once_per_crossing_of_80_percent(cast: Cast) -> None:
    benchmark = make_benchmark(reward=Decimal("0.10"))
    targets = [make_target(benchmark).pk for _ in range(3)]
    CrowdLimits.objects.create(benchmark=benchmark, budget_cap=Decimal("1.00"))
    hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=2)  # $0.60 committed: 60 %
    assert Notification.objects.count() == 0
    hits_generate(
        benchmark=benchmark, step=2, seed=1, assignments_per_hit=1, targets=targets, force=True
    )  # $0.90: 90 %
    warnings = Notification.objects.filter(kind=NotificationKind.BUDGET_WARNING)
    assert warnings.count() == 1
    assert warnings.get().summary == (
        f"{benchmark.name} has used 90 % of its budget cap: $0.90 of $1.00 spent or committed, $0.10 left"
    )
    benchmark_watch(benchmark=benchmark)
    assert warnings.count() == 1
    # Raised above: the warning re-arms; lowered again, the next crossing warns again.
    from hits.services import benchmark_settings_update

    benchmark_settings_update(benchmark=benchmark, budget_cap="2.00")
    assert CrowdLimits.objects.get(benchmark=benchmark).budget_warned_at is None
    benchmark_settings_update(benchmark=benchmark, budget_cap="1.10")
    assert warnings.count() == 2


def test_a_worker_flagged_by_the_review_is_told_once(cast: Cast) -> None:
    benchmark = make_benchmark(reward=Decimal("0"))
    for _ in range(3):
        make_target(benchmark)
    batch = hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=3)
    spammer = Worker.objects.get(user=cast.spammer)
    while (held := assignment_claim_next(worker=spammer, batch=batch)) is not None:
        # Accepting everything accepts the distractor: a failed control on every HIT.
        assignment_submit(assignment=held, answers=answers_for(held.hit, "accept"), worker=spammer)
    benchmark_refresh(benchmark=benchmark)
    flagged = Notification.objects.filter(kind=NotificationKind.WORKER_FLAGGED)
    assert [n.payload["worker"] for n in flagged] == ["sam"]
    assert flagged.get().summary == "worker sam is flagged: control accuracy below the threshold"
    benchmark_refresh(benchmark=benchmark, full=True)
    assert flagged.count() == 1


def test_the_page_sets_the_webhook_shows_its_secret_once_and_lists_every_try(
    cast: Cast, receiver_factory: Callable[[list[int]], Receiver], django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = make_benchmark()
    receiver = receiver_factory([503, 204])
    client = logged_in(cast.researcher)
    answer = client.post(
        f"/benchmarks/{benchmark.name}/operations/",
        {"budget_cap": "", "webhook_url": receiver.url, "email_me": ""},
        follow=True,
    )
    secret = NotificationSettings.objects.get(benchmark=benchmark).webhook_secret
    assert secret and secret in answer.content.decode()
    assert secret not in client.get(f"/benchmarks/{benchmark.name}/operations/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        notification_record(
            benchmark=benchmark, kind=NotificationKind.BATCH_DONE, key="batch:9", summary="batch 9 is done", data={}
        )
    page = client.get(f"/benchmarks/{benchmark.name}/operations/").content.decode()
    assert "batch 9 is done" in page and "try 1:" in page and ">503<" in page and ">204<" in page
    listed = client.get(f"/api/benchmarks/{benchmark.name}/notifications/").json()
    assert [entry["status_code"] for entry in listed["results"][0]["deliveries"]] == [204, 503]
