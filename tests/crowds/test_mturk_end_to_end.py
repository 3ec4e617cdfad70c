"""The whole MTurk path, with MTurk stubbed: publish a step-2 batch, workers submit through the
external page, sync approves, and the pipeline advances the target to step 3 on MTurk."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from annotation.models import TargetStage
from crowds.services import batch_publish, batch_sync
from hits.models import Assignment, Batch, FilteredPolicy, HITItem
from hits.services import hits_generate
from schemes.swords.items import ItemKind
from tests.crowds.crowd_helpers import SITE, remote_assignment, stubbed_mturk
from tests.hits.factories import make_benchmark, make_target

pytestmark = pytest.mark.django_db(transaction=True)


def _work(client: Client, hit: Any, hit_id: str, worker: str) -> None:
    query = f"assignmentId=A-{worker}&hitId={hit_id}&workerId={worker}&turkSubmitTo=https://workersandbox.mturk.com"
    page = client.get(f"/mturk/hit/{hit.public_token}/?{query}").content.decode()
    token = page.split('name="token" value="', 1)[1].split('"', 1)[0]
    answers = {
        f"item-{item.pk}": "reject" if item.kind == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in HITItem.objects.filter(hit=hit)
    }
    response = client.post(
        f"/mturk/hit/{hit.public_token}/", {"assignmentId": f"A-{worker}", "token": token, **answers}
    )
    assert "/mturk/externalSubmit" in response.content.decode()


def test_a_step_two_batch_on_mturk_runs_to_the_next_step(settings: Any, monkeypatch: Any) -> None:
    settings.SITE_URL = SITE
    benchmark = make_benchmark(scheme_settings={"step2_labels": 3, "step3_labels": 7})
    target = make_target(benchmark)
    batch = hits_generate(benchmark=benchmark, step=2, seed=1, backend="mturk", filtered_policy=FilteredPolicy.REJECT)
    hit = batch.hits.get()
    workers = ["W1", "W2", "W3"]
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1"}})
        batch_publish(batch=batch, options={"sandbox": True, "qualifications": {"approved_hits": None}})

        client = Client()
        for worker in workers:
            _work(client, hit, "H1", worker)

        stub.add_response(
            "list_assignments_for_hit",
            {"Assignments": [remote_assignment(f"A-{worker}", worker, "H1") for worker in workers]},
        )
        for worker in workers:
            stub.add_response("approve_assignment", {}, {"AssignmentId": f"A-{worker}", "OverrideRejection": False})
        report = batch_sync(batch=batch, hold=timedelta(0))

    assert (report.approved, report.flagged_unknown, report.errors) == (3, [], [])
    assert set(Assignment.objects.values_list("status", flat=True)) == {"approved"}
    target.refresh_from_db()
    assert target.stage == TargetStage.SCORE
    step3 = Batch.objects.get(benchmark=benchmark, step=3)
    assert (step3.backend, step3.assignments_per_hit, step3.filtered_policy) == ("mturk", 7, FilteredPolicy.REJECT)
    assert step3.qualifications == {"approved_hits": None}
