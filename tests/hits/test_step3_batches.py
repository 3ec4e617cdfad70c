"""Step 3 has one batch per step-2 batch: it follows its parent's backend, endpoint and publishing
(docs/design.md §3)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from annotation.models import Activity, ActivityKind, Benchmark, Candidate, CandidateStage, Target
from crowds.services import batch_publish
from hits.models import Batch, FilteredPolicy
from hits.services import hits_generate
from hits.services.generation import followup_batches_extend
from tests.crowds.crowd_helpers import SITE, stubbed_mturk
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("three")


def step2_on_mturk(benchmark: Benchmark, **external: str) -> Batch:
    """A step-2 batch on MTurk, after which every candidate survived and waits for step 3."""
    batch = hits_generate(benchmark=benchmark, step=2, seed=4, backend="mturk")
    Batch.objects.filter(pk=batch.pk).update(external=external)
    survive(benchmark)
    batch.refresh_from_db()
    return batch


def survive(benchmark: Benchmark) -> None:
    Candidate.objects.filter(target__benchmark=benchmark).update(stage=CandidateStage.SCORE)


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Ids of the batches whose publishing was queued."""
    queued: list[int] = []
    monkeypatch.setattr("crowds.tasks.batch_publish_task.delay", lambda batch_id: queued.append(batch_id))
    return queued


def targets(benchmark: Benchmark, *words: str) -> list[int]:
    return list(Target.objects.filter(benchmark=benchmark, word__in=words).values_list("pk", flat=True))


def test_the_step3_batch_of_a_published_parent_is_published_to_the_parents_endpoint_as_hits_come(
    benchmark: Benchmark, published: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    parent = step2_on_mturk(benchmark, environment="sandbox", published_at=timezone.now().isoformat())
    Batch.objects.filter(pk=parent.pk).update(filtered_policy=FilteredPolicy.REJECT)

    with django_capture_on_commit_callbacks(execute=True):
        [child] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "sat"))
    with django_capture_on_commit_callbacks(execute=True):
        [same] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "bright", "quickly"))

    assert same.pk == child.pk and published == [child.pk, child.pk]
    assert (child.parent, child.backend, child.seed, child.external) == (parent, "mturk", 4, {"environment": "sandbox"})
    assert (child.step, child.assignments_per_hit, child.filtered_policy) == (3, 7, FilteredPolicy.REJECT)
    assert child.hits.count() == 5
    # The pipeline made it, once: the platform's own entry in the activity log.
    [made] = Activity.objects.filter(kind=ActivityKind.BATCH_CREATED, result__batch=child.pk)
    assert made.actor is None and f"targets of batch {parent.pk}" in made.summary


def test_the_step3_batch_of_an_unpublished_parent_waits_to_be_published_like_it(
    benchmark: Benchmark, published: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    step2_on_mturk(benchmark)
    with django_capture_on_commit_callbacks(execute=True):
        [child] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "sat", "bright"))
    assert child.backend == "mturk" and child.external == {}
    assert published == []


def test_targets_with_imported_step2_labels_share_one_local_step3_batch(benchmark: Benchmark) -> None:
    survive(benchmark)
    [first] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "sat"))
    [second] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "bright"))
    assert first.pk == second.pk and first.parent is None and first.backend == "local"
    assert followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "sat")) == []
    assert Batch.objects.filter(step=3).count() == 1


def test_publishing_without_an_endpoint_uses_the_one_the_batch_took_from_its_parent(
    benchmark: Benchmark, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.SITE_URL = SITE
    settings.MTURK_SANDBOX = False
    step2_on_mturk(benchmark, environment="sandbox")
    [child] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets(benchmark, "quickly"))
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT3"})
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1", "HITGroupId": "G3"}})
        batch_publish(batch=child)
    child.refresh_from_db()
    assert child.external["environment"] == "sandbox"
