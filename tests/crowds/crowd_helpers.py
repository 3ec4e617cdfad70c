"""Small builders for crowd-backend tests: a benchmark with HITs made by hand, and a stubbed MTurk client.

The HITs are built directly (not by generation) so these tests pin the crowd behaviour alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from django.utils import timezone

from annotation.models import Benchmark, Candidate, Context, Target, Worker
from hits.models import HIT, Answer, Assignment, AssignmentStatus, Batch, HITItem, RemoteHIT
from schemes.swords.items import ItemKind

SITE = "https://crowdlex.example.org"


def stub_client() -> Any:
    """A real botocore MTurk client (parameters are checked against the service model), never sent anywhere."""
    return boto3.client(
        "mturk",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        endpoint_url="https://mturk-requester-sandbox.us-east-1.amazonaws.com",
    )


@contextmanager
def stubbed_mturk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    client = stub_client()
    stubber = Stubber(client)
    monkeypatch.setattr("crowds.mturk.client.mturk_client", lambda environment: client)
    with stubber:
        yield stubber
    stubber.assert_no_pending_responses()


def make_batch(
    *,
    name: str = "bench",
    backend: str = "mturk",
    hits: int = 2,
    assignments: int = 3,
    step: int = 2,
    reward: str = "0.10",
    **options: Any,
) -> Batch:
    benchmark = Benchmark.objects.create(name=name)
    batch = Batch.objects.create(
        benchmark=benchmark,
        step=step,
        backend=backend,
        assignments_per_hit=assignments,
        reward=Decimal(reward),
        **options,
    )
    for number in range(hits):
        text = f"The bright student number {number} <b>solved</b> it & left."
        context = Context.objects.create(benchmark=benchmark, text=text)
        target = Target.objects.create(
            context=context, benchmark=benchmark, word="bright", offset=text.index("bright"), pos="adj"
        )
        hit = HIT.objects.create(batch=batch, target=target, part=0, assignments_required=assignments)
        words = ["clever", "smart", "intelligent"]
        items: list[tuple[str, Candidate | None, str]] = [
            (ItemKind.CANDIDATE, Candidate.objects.create(target=target, text=word), word) for word in words
        ]
        items.insert(1, (ItemKind.CONTROL_TARGET, None, "bright"))
        items.append((ItemKind.CONTROL_DISTRACTOR, None, "table"))
        for position, (kind, candidate, text_) in enumerate(items):
            HITItem.objects.create(
                hit=hit, position=position, kind=kind, control=candidate is None, candidate=candidate, text=text_
            )
    return batch


def publish_locally(batch: Batch, *, environment: str = "sandbox") -> list[RemoteHIT]:
    """Record the batch as published without a crowd call (for tests that start after publishing)."""
    batch.external = {"environment": environment, "hit_type_id": "HT1"}
    batch.save(update_fields=["external"])
    found = []
    for hit in batch.hits.order_by("id"):
        hit_id = f"HIT{hit.pk:027d}"
        HIT.objects.filter(pk=hit.pk).update(external_id=hit_id)
        found.append(
            RemoteHIT.objects.create(hit=hit, round=0, external_id=hit_id, max_assignments=hit.assignments_required)
        )
    return found


def mturk_worker(name: str) -> Worker:
    return Worker.objects.get_or_create(kind="mturk", external_id=name)[0]


def submitted_assignment(
    hit: HIT,
    worker: Worker,
    *,
    external_id: str,
    filtered: bool = False,
    submitted_at: datetime | None = None,
    external_status: str = "",
) -> Assignment:
    """A submitted assignment as the MTurk page's submit leaves it (no slot), or, with
    ``external_status``, as a sync's confirmation leaves it, or local (no ``external_id``): these
    hold a slot unless filtered."""
    submitted_at = submitted_at or timezone.now() - timedelta(hours=2)
    assignment = Assignment.objects.create(
        hit=hit,
        worker=worker,
        status=AssignmentStatus.SUBMITTED,
        external_id=external_id,
        claimed_at=submitted_at - timedelta(minutes=3),
        deadline=submitted_at + timedelta(minutes=30),
        submitted_at=submitted_at,
        seconds_on_page=120.0,
        filtered=filtered,
        external_status=external_status,
    )
    Answer.objects.bulk_create(
        Answer(
            assignment=assignment, item=item, value="reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        )
        for item in hit.items.all()
    )
    if (external_status or not external_id) and not filtered:
        HIT.objects.filter(pk=hit.pk).update(assignments_active=hit.assignments_active + 1)
        hit.refresh_from_db()
    return assignment


def remote_assignment(
    assignment_id: str, worker_id: str, hit_id: str, status: str = "Submitted", **extra: Any
) -> dict[str, Any]:
    return {
        "AssignmentId": assignment_id,
        "WorkerId": worker_id,
        "HITId": hit_id,
        "AssignmentStatus": status,
        "SubmitTime": timezone.now() - timedelta(hours=2),
        **extra,
    }
