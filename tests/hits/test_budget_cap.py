"""A benchmark's budget cap: spent, committed and remaining from hand-built work on each crowd's
price, the refusal of what would pass the cap (a local batch, an MTurk or Prolific publish, a bonus)
saying what it costs and what remains, and approval and payment of submitted work never blocked."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from annotation.models import Benchmark
from crowds.services import CrowdActionRefused, assignment_approve, batch_publish, batch_sync, worker_bonus
from hits.budget import BudgetExceeded, budget_check, budget_status, budget_status_shown
from hits.models import HIT, Assignment, AssignmentStatus, Batch, CrowdLimits
from hits.services import (
    HitsGenerationError,
    assignment_claim_next,
    assignment_submit,
    benchmark_settings_update,
    hits_generate,
)
from tests.base import make_cast
from tests.crowds.crowd_helpers import (
    make_batch,
    mturk_worker,
    publish_locally,
    stubbed_mturk,
    submitted_assignment,
)
from tests.crowds.prolific_fake import FakeProlific, fake_prolific
from tests.hits.factories import honest_answers, make_benchmark, make_target

pytestmark = pytest.mark.django_db

SITE = "https://crowdlex.example.org"


def _cap(benchmark: Benchmark, amount: str | None) -> None:
    CrowdLimits.objects.update_or_create(
        benchmark=benchmark, defaults={"budget_cap": None if amount is None else Decimal(amount)}
    )


def test_local_work_counts_at_its_reward_spent_once_submitted_and_committed_while_offered() -> None:
    cast = make_cast()
    benchmark = make_benchmark(reward=Decimal("0.10"))
    for _ in range(2):
        make_target(benchmark)
    batch = hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=3)
    assert batch.hits.count() == 2
    status = budget_status(benchmark=benchmark)
    # No cap: the figures still show; six open slots at $0.10, nothing paid.
    assert (status.cap, status.spent, status.committed, status.remaining) == (
        None,
        Decimal("0.00"),
        Decimal("0.60"),
        None,
    )
    alice = cast.alice.worker  # type: ignore[attr-defined]
    held = assignment_claim_next(worker=alice, batch=batch)
    assert held is not None
    assignment_submit(assignment=held, answers=honest_answers(held.hit), worker=alice)
    _cap(benchmark, "1.00")
    status = budget_status(benchmark=benchmark)
    assert (status.spent, status.committed, status.remaining) == (Decimal("0.10"), Decimal("0.50"), Decimal("0.40"))
    assert status.burn[-1].spent == Decimal("0.10") and status.burn[-1].remaining == Decimal("0.90")


def test_a_local_batch_past_the_cap_is_refused_saying_what_it_costs_and_what_remains() -> None:
    benchmark = make_benchmark(reward=Decimal("0.10"))
    for _ in range(3):
        make_target(benchmark)
    _cap(benchmark, "0.50")
    with pytest.raises(HitsGenerationError) as refused:
        hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=2)
    assert str(refused.value) == (
        f"a batch of 3 HITs on the local queue would cost $0.60, but only $0.50 remains of {benchmark.name}'s "
        "budget cap of $0.50 ($0.00 spent, $0.00 committed): raise the cap in the benchmark's settings, or commit less"
    )
    assert not Batch.objects.filter(benchmark=benchmark).exists()
    # A batch that pays nothing costs nothing on the local queue.
    free = hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=2, reward=Decimal("0"))
    assert free.hits.count() == 3


def test_an_mturk_publish_past_the_cap_makes_no_call_and_keeps_the_refusal_on_the_batch(
    monkeypatch: Any, settings: Any
) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=2, assignments=3, reward="0.10")
    _cap(batch.benchmark, "0.71")
    # Six assignments at $0.10 and MTurk's $0.02 fee each: $0.72, a cent over the cap. No call at all.
    refusal = r"publishing 2 HITs of batch \d+ would cost \$0\.72, but only \$0\.71"
    with stubbed_mturk(monkeypatch), pytest.raises(CrowdActionRefused, match=refusal):
        batch_publish(batch=batch, options={"sandbox": True})
    assert not HIT.objects.filter(batch=batch).exclude(external_id="").exists()
    assert "would cost $0.72" in Batch.objects.get(pk=batch.pk).external["last_error"]["message"]

    _cap(batch.benchmark, "0.72")
    with stubbed_mturk(monkeypatch) as stub:
        # Within the cap, the publish goes on to the crowd (which here has no funds).
        stub.add_response("get_account_balance", {"AvailableBalance": "0.00"}, {})
        with pytest.raises(Exception, match="add funds"):
            batch_publish(batch=batch, options={"sandbox": True})


@pytest.fixture
def fake(settings: Any) -> Any:
    settings.SITE_URL = SITE
    with fake_prolific(settings) as running:
        yield running


def test_a_prolific_publish_past_the_cap_creates_no_study(fake: FakeProlific, settings: Any) -> None:
    batch = make_batch(backend="prolific", hits=2, assignments=2, reward="0.20")
    # Four places at $0.20 with Prolific's fee on each.
    fee = (Decimal("0.20") * settings.PROLIFIC_SERVICE_FEE_RATE).quantize(Decimal("0.01"))
    cost = 4 * (Decimal("0.20") + fee)
    _cap(batch.benchmark, str(cost - Decimal("0.01")))
    with pytest.raises(CrowdActionRefused, match=rf"would cost \${cost}"):
        batch_publish(batch=batch, options={"estimated_minutes": 1})
    assert fake.studies == {}
    _cap(batch.benchmark, str(cost))
    batch_publish(batch=batch, options={"estimated_minutes": 1})
    assert len(fake.studies) == 1
    status = budget_status(benchmark=batch.benchmark)
    assert (status.spent, status.committed, status.remaining) == (Decimal("0.00"), cost, Decimal("0.00"))


def test_at_the_cap_submitted_work_is_still_approved_and_paid_but_a_bonus_is_refused(
    fake: FakeProlific, settings: Any
) -> None:
    from django.test import Client

    batch = make_batch(backend="prolific", hits=1, assignments=1, reward="0.20")
    batch_publish(batch=batch, options={"estimated_minutes": 1})
    batch.refresh_from_db()
    session, path = fake.take_place(batch.external["study_id"], "P" * 24)
    client = Client()
    page = client.get(path)
    token = page.content.decode().split('name="token" value="', 1)[1].split('"', 1)[0]
    assignment = Assignment.objects.get(external_id=session)
    answers = {f"item-{item.pk}": "accept" for item in assignment.hit.items.all()}
    assert client.post(f"/prolific/study/{batch.public_token}/", {"token": token, **answers}).status_code == 302
    fake.complete(session, batch.external["completion_code"])
    # The cap is lowered below what is committed already: nothing new may be committed.
    _cap(batch.benchmark, "0.00")

    report = batch_sync(batch=batch, hold=timedelta(0))

    assert report.approved == 1
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.APPROVED
    status = budget_status(benchmark=batch.benchmark)
    assert status.spent > 0 and status.remaining is not None and status.remaining < 0
    with pytest.raises(CrowdActionRefused, match=r"a \$1\.00 bonus for assignment \d+ would cost"):
        worker_bonus(assignment=assignment, amount="1.00", reason="thanks")


def test_approving_confirmed_mturk_work_ignores_the_cap(monkeypatch: Any, settings: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=1, assignments=1, reward="0.50")
    publish_locally(batch)
    hit = batch.hits.get()
    work = submitted_assignment(hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    _cap(batch.benchmark, "0.00")
    with pytest.raises(BudgetExceeded):
        budget_check(benchmark=batch.benchmark, cost=Decimal("0.01"), what="anything new")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A1", "OverrideRejection": False})
        approved = assignment_approve(assignment=work)
    assert approved.status == AssignmentStatus.APPROVED
    # $0.50 and MTurk's $0.10 fee: spent, over a cap of nothing.
    assert budget_status(benchmark=batch.benchmark).spent == Decimal("0.60")


def test_the_pipelines_follow_up_hits_past_the_cap_are_not_made_and_the_log_says_why() -> None:
    from annotation.models import Activity, ActivityKind, Candidate, CandidateStage
    from hits.services.generation import followup_batches_extend
    from tests.hits.generation_data import build_benchmark

    benchmark = build_benchmark("capped")
    parent = hits_generate(benchmark=benchmark, step=2, seed=4)
    Candidate.objects.filter(target__benchmark=benchmark).update(stage=CandidateStage.SCORE)
    # What step 2 committed, and a cent more: step 3's HITs (7 assignments each) do not fit.
    _cap(benchmark, str(budget_status(benchmark=benchmark).committed + Decimal("0.01")))
    targets = list(benchmark.targets.values_list("pk", flat=True))

    assert followup_batches_extend(benchmark=benchmark, step=3, targets=targets) == []

    assert list(Batch.objects.filter(benchmark=benchmark).values_list("pk", flat=True)) == [parent.pk]
    [entry] = Activity.objects.filter(kind=ActivityKind.BUDGET_REFUSED)
    assert entry.summary.startswith(
        f"the pipeline did not add follow-up HITs: adding 5 follow-up HITs to a follow-up of batch {parent.pk} "
        "would cost $"
    )
    assert "but only $0.01 remains" in entry.summary
    # Raised, the next advance makes them.
    _cap(benchmark, None)
    [child] = followup_batches_extend(benchmark=benchmark, step=3, targets=targets)
    assert child.parent_id == parent.pk and child.hits.count() == 5


def test_the_block_the_pages_show_follows_submitted_work_and_a_new_cap() -> None:
    cast = make_cast()
    benchmark = make_benchmark(reward=Decimal("0.10"))
    for _ in range(2):
        make_target(benchmark)
    batch = hits_generate(benchmark=benchmark, step=2, seed=0, assignments_per_hit=3)
    assert budget_status_shown(benchmark=benchmark) == budget_status(benchmark=benchmark)
    alice = cast.alice.worker  # type: ignore[attr-defined]
    held = assignment_claim_next(worker=alice, batch=batch)
    assert held is not None
    assignment_submit(assignment=held, answers=honest_answers(held.hit), worker=alice)
    shown = budget_status_shown(benchmark=benchmark)
    assert shown == budget_status(benchmark=benchmark)
    assert shown.spent == Decimal("0.10")
    benchmark_settings_update(benchmark=benchmark, budget_cap="1.00", by=cast.researcher)
    shown = budget_status_shown(benchmark=benchmark)
    assert (shown.cap, shown.remaining) == (Decimal("1.00"), Decimal("0.40"))
    assert shown == budget_status(benchmark=benchmark)
