"""The crowd commands: a dry run that needs no credentials, and publishing/syncing through the services."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from hits.models import RemoteHIT
from tests.crowds.crowd_helpers import SITE, make_batch, stubbed_mturk, submitted_assignment

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_dry_run_prints_what_would_be_published_and_its_cost_without_any_aws_call(
    settings: Any, monkeypatch: Any
) -> None:
    settings.SITE_URL = SITE
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)

    def no_client(environment: str) -> None:
        raise AssertionError("a dry run must not build an MTurk client")

    monkeypatch.setattr("crowds.mturk.client.mturk_client", no_client)
    batch = make_batch(hits=4)
    hit = batch.hits.order_by("id").first()
    assert hit is not None
    from tests.crowds.crowd_helpers import mturk_worker

    timed = submitted_assignment(hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    timed.seconds_on_page = 24.0
    timed.save()
    out = _run("mturk_publish", str(batch.pk), "--dry-run", "--sandbox", "--qualifications", "approved_hits=off")
    assert "Dry run: nothing is sent to MTurk." in out
    # The endpoint comes from configuration (the tests' settings point it at a closed local port).
    assert "sandbox (http://127.0.0.1:9)" in out
    assert "Reward: $0.10 per assignment" in out
    assert "Qualifications: approval rate > 98 %; locale = US" in out
    assert "HITs: 4 to publish (0 already published), 3 assignments each, 12 assignments in all" in out
    assert f"ExternalQuestion URL of the first HIT: {SITE}/mturk/hit/{hit.public_token}/" in out
    assert "Cost: rewards $1.20 + fee $0.24 = $1.44 ($0.12 per assignment)" in out
    assert "Hourly wage: $15.00/h at the measured median of 24 s" in out
    batch.refresh_from_db()
    assert batch.qualifications == {}  # a dry run stores nothing
    assert not RemoteHIT.objects.exists()


def test_the_dry_run_warns_about_a_site_mturk_cannot_reach(settings: Any) -> None:
    settings.SITE_URL = "http://127.0.0.1:8000"
    settings.MTURK_ENDPOINT_URL = ""
    batch = make_batch(hits=1)
    out = _run("mturk_publish", str(batch.pk), "--dry-run", "--production")
    assert "production (https://mturk-requester.us-east-1.amazonaws.com)" in out
    assert "Warning: SITE_URL is http://127.0.0.1:8000" in out


def test_publish_reports_mturks_refusal_as_a_command_error(settings: Any, monkeypatch: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_client_error("create_hit_type", service_error_code="RequestError", service_message="Bad reward")
        with pytest.raises(CommandError, match="MTurk refused create_hit_type: Bad reward"):
            _run("mturk_publish", str(batch.pk), "--sandbox")


def test_publish_prints_where_workers_find_the_batch(settings: Any, monkeypatch: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT9"})
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1", "HITGroupId": "G1"}})
        out = _run("mturk_publish", str(batch.pk), "--sandbox", "--qualifications", "approved_hits=off")
    assert "1 HITs created, 0 already there (HIT type HT9, sandbox)" in out
    assert "https://workersandbox.mturk.com/projects/G1/tasks" in out
    batch.refresh_from_db()
    assert batch.qualifications == {"approved_hits": None}


def test_unknown_batches_and_assignments_are_named_in_the_error() -> None:
    with pytest.raises(CommandError, match="no batch with id '999'"):
        _run("mturk_sync", "999")
    with pytest.raises(CommandError, match="no assignment with id 'NOPE' here, nor with that id on a crowd"):
        _run("mturk_approve", "NOPE")


def test_sync_without_batches_says_there_is_nothing_to_sync() -> None:
    assert "No published MTurk batch to sync." in _run("mturk_sync")


def _crashed_after_mturk_approved(monkeypatch: Any) -> Any:
    """Work MTurk approved while the record here still says submitted (the process died in between)."""
    from tests.crowds.crowd_helpers import mturk_worker, publish_locally

    batch = make_batch(hits=1)
    publish_locally(batch)
    return submitted_assignment(batch.hits.get(), mturk_worker("W1"), external_id="A1", external_status="Submitted")


def test_rerunning_mturk_approve_after_a_crash_records_mturks_approval(monkeypatch: Any) -> None:
    assignment = _crashed_after_mturk_approved(monkeypatch)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_client_error(
            "approve_assignment",
            service_error_code="RequestError",
            service_message="This operation can be called with a status of: Submitted",
            expected_params={"AssignmentId": "A1", "OverrideRejection": False},
        )
        stub.add_response(
            "get_assignment",
            {"Assignment": {"AssignmentId": "A1", "AssignmentStatus": "Approved"}},
            {"AssignmentId": "A1"},
        )
        out = _run("mturk_approve", "A1")

    assert f"assignment {assignment.pk} (A1): approved" in out
    assignment.refresh_from_db()
    assert (assignment.status, assignment.external_status) == ("approved", "Approved")
    assert assignment.hit.batch.benchmark.activities.filter(kind="approved").count() == 1


def test_mturk_approve_still_fails_when_mturk_refuses_work_it_has_not_approved(monkeypatch: Any) -> None:
    assignment = _crashed_after_mturk_approved(monkeypatch)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_client_error(
            "approve_assignment",
            service_error_code="RequestError",
            service_message="This operation can be called with a status of: Submitted",
        )
        stub.add_response("get_assignment", {"Assignment": {"AssignmentId": "A1", "AssignmentStatus": "Rejected"}})
        with pytest.raises(CommandError, match="1 of 1 assignments could not be changed"):
            _run("mturk_approve", "A1")

    assignment.refresh_from_db()
    assert (assignment.status, assignment.external_status) == ("submitted", "Submitted")
