"""The MTurk backend against botocore's Stubber: every call's parameters are checked against the real service model."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from decimal import Decimal
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from django.utils import timezone

from crowds.interface import get_backend
from crowds.interface.costs import bonus_fee
from crowds.local import LocalBackend
from crowds.mturk import (
    EXPIRE_NOW,
    PRODUCTION,
    SANDBOX,
    MTurkBackend,
    MTurkError,
    Qualifications,
    external_question_xml,
    hit_token,
    mturk_client,
)
from crowds.mturk.fees import MTURK_FEES
from crowds.selectors import batch_publish_plan
from crowds.services import (
    CrowdActionRefused,
    assignment_approve,
    assignment_reject,
    batch_expire,
    batch_publish,
    worker_block_remote,
    worker_bonus,
    workers_notify,
)
from hits.models import HIT, Bonus, BonusStatus, CrowdLimits, RemoteHIT
from tests.crowds.crowd_helpers import (
    SITE,
    make_batch,
    mturk_worker,
    publish_locally,
    stub_client,
    stubbed_mturk,
    submitted_assignment,
)

pytestmark = pytest.mark.django_db

SWORDS_QUALIFICATIONS: list[dict[str, Any]] = [
    {
        "QualificationTypeId": "000000000000000000L0",
        "Comparator": "GreaterThan",
        "IntegerValues": [98],
        "ActionsGuarded": "Accept",
    },
    {
        "QualificationTypeId": "00000000000000000071",
        "Comparator": "EqualTo",
        "LocaleValues": [{"Country": "US"}],
        "ActionsGuarded": "Accept",
    },
    {
        "QualificationTypeId": "00000000000000000040",
        "Comparator": "GreaterThan",
        "IntegerValues": [10000],
        "ActionsGuarded": "Accept",
    },
]


@pytest.fixture(autouse=True)
def _public_site(settings: Any) -> None:
    settings.SITE_URL = SITE


def _hit_type_params(batch: Any, qualifications: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "AutoApprovalDelayInSeconds": 3 * 24 * 3600,
        "AssignmentDurationInSeconds": 30 * 60,
        "Reward": "0.10",
        "Title": batch.title,
        "Keywords": batch.keywords,
        "Description": batch.description,
        "QualificationRequirements": qualifications,
    }


def _create_hit_params(batch: Any, hit: HIT, *, round: int = 0, assignments: int = 3) -> dict[str, Any]:
    token = hit_token(batch=batch, hit=hit, round=round)
    return {
        "HITTypeId": "HT123",
        "MaxAssignments": assignments,
        "LifetimeInSeconds": 7 * 24 * 3600,
        "Question": external_question_xml(f"{SITE}/mturk/hit/{hit.public_token}/"),
        "RequesterAnnotation": token,
        "UniqueRequestToken": token,
    }


def test_it_publishes_a_hit_type_then_one_hit_per_hit_with_swords_qualifications_and_tokens(monkeypatch: Any) -> None:
    batch = make_batch(hits=2)
    hits = list(batch.hits.order_by("id"))
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT123"}, _hit_type_params(batch, SWORDS_QUALIFICATIONS))
        for hit in hits:
            stub.add_response(
                "create_hit_with_hit_type", {"HIT": {"HITId": f"MT{hit.pk}"}}, _create_hit_params(batch, hit)
            )
        result = batch_publish(batch=batch, options={"sandbox": True})

    assert (result.hits_created, result.hits_existing, result.hit_type_id) == (2, 0, "HT123")
    batch.refresh_from_db()
    assert batch.external["hit_type_id"] == "HT123"
    assert batch.external["environment"] == SANDBOX
    assert [hit.external_id for hit in batch.hits.order_by("id")] == [f"MT{hit.pk}" for hit in hits]
    assert list(RemoteHIT.objects.order_by("id").values_list("external_id", "round", "max_assignments")) == [
        (f"MT{hit.pk}", 0, 3) for hit in hits
    ]
    tokens = {hit_token(batch=batch, hit=hit, round=0) for hit in hits}
    assert len(tokens) == 2 and all(len(token) <= 64 for token in tokens)


def test_the_external_question_points_at_the_hit_page_on_the_public_site() -> None:
    xml = external_question_xml("https://crowdlex.example.org/mturk/hit/7/?a=1&b=2", frame_height=640)
    assert "<ExternalURL>https://crowdlex.example.org/mturk/hit/7/?a=1&amp;b=2</ExternalURL>" in xml
    assert "<FrameHeight>640</FrameHeight>" in xml
    assert "ExternalQuestion.xsd" in xml


def test_each_qualification_can_be_changed_or_turned_off_per_batch(monkeypatch: Any) -> None:
    batch = make_batch(hits=1, qualifications={"approval_rate": 95, "locale": None, "approved_hits": False})
    hit = batch.hits.get()
    wanted = [{**SWORDS_QUALIFICATIONS[0], "IntegerValues": [95]}]
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT123"}, _hit_type_params(batch, wanted))
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "MT1"}}, _create_hit_params(batch, hit))
        batch_publish(batch=batch, options={"sandbox": True})


def test_qualification_settings_are_checked_and_explain_what_is_wrong() -> None:
    assert Qualifications.from_json({}).requirements() == SWORDS_QUALIFICATIONS
    with pytest.raises(ValueError, match="unknown key"):
        Qualifications.from_json({"approval": 98})
    with pytest.raises(ValueError, match="locale must be a two-letter"):
        Qualifications.from_json({"locale": "USA"})
    with pytest.raises(ValueError, match="approval_rate is a percentage"):
        Qualifications.from_json({"approval_rate": 120})
    overrides = Qualifications.parse_overrides("approved_hits=off, approval_rate=97", {"locale": "GB"})
    assert overrides == {"approved_hits": None, "approval_rate": 97, "locale": "GB"}
    assert Qualifications.from_json(overrides).describe() == ["approval rate > 97 %", "locale = GB"]


def test_publishing_again_after_success_makes_no_call_and_no_duplicate(monkeypatch: Any) -> None:
    batch = make_batch(hits=2)
    publish_locally(batch)
    with stubbed_mturk(monkeypatch):
        result = batch_publish(batch=batch, options={"sandbox": True})
    assert (result.hits_created, result.hits_existing) == (0, 2)
    assert RemoteHIT.objects.count() == 2


def test_a_publish_retried_after_a_lost_answer_finds_the_hit_by_its_token_instead_of_making_another(
    monkeypatch: Any,
) -> None:
    batch = make_batch(hits=2)
    first, second = batch.hits.order_by("id")
    token = hit_token(batch=batch, hit=second, round=0)
    with stubbed_mturk(monkeypatch) as stub:
        # First attempt: the first HIT is made, the second create fails after MTurk may have made it.
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT123"}, _hit_type_params(batch, SWORDS_QUALIFICATIONS))
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "MTA"}}, _create_hit_params(batch, first))
        stub.add_client_error(
            "create_hit_with_hit_type",
            service_error_code="ServiceFault",
            service_message="We encountered an internal error.",
            http_status_code=500,
            expected_params=_create_hit_params(batch, second),
        )
        with pytest.raises(MTurkError, match="MTurk refused create_hit_with_hit_type: We encountered an internal"):
            batch_publish(batch=batch, options={"sandbox": True})
        assert list(RemoteHIT.objects.values_list("external_id", flat=True)) == ["MTA"]

        # The retry sends the same token; MTurk says it was processed, and the HIT is found by it.
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT123"}, _hit_type_params(batch, SWORDS_QUALIFICATIONS))
        stub.add_client_error(
            "create_hit_with_hit_type",
            service_error_code="RequestError",
            service_message=f'The idempotency token "{token}" has already been processed. (1626172412406)',
            expected_params=_create_hit_params(batch, second),
        )
        stub.add_response(
            "list_hits",
            {"HITs": [{"HITId": "OTHER", "RequesterAnnotation": "someone else"}], "NextToken": "page2"},
            {"MaxResults": 100},
        )
        stub.add_response(
            "list_hits",
            {"HITs": [{"HITId": "MTB", "RequesterAnnotation": token}]},
            {"MaxResults": 100, "NextToken": "page2"},
        )
        result = batch_publish(batch=batch, options={"sandbox": True})
    assert (result.hits_created, result.hits_existing) == (0, 2)
    assert list(RemoteHIT.objects.order_by("hit_id").values_list("external_id", flat=True)) == ["MTA", "MTB"]
    assert HIT.objects.get(pk=second.pk).external_id == "MTB"


def test_publishing_checks_the_account_balance_against_the_cost_with_fees_first(
    monkeypatch: Any, settings: Any
) -> None:
    settings.SITE_URL = SITE
    batch = make_batch(hits=2, assignments=3, reward="0.10")
    with stubbed_mturk(monkeypatch) as stub:
        # Six assignments at $0.10 and $0.02 fee each: $0.72; a cent short creates nothing.
        stub.add_response("get_account_balance", {"AvailableBalance": "0.71"}, {})
        with pytest.raises(MTurkError, match=r"has \$0.71, less than the \$0.72 that 2 HITs may cost"):
            batch_publish(batch=batch, options={"sandbox": True})
    assert not RemoteHIT.objects.exists()


def test_a_request_error_is_surfaced_with_mturks_own_message(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_client_error(
            "create_hit_type",
            service_error_code="RequestError",
            service_message="This Requester has insufficient funds in their account to complete this transaction.",
            modeled_fields={"TurkErrorCode": "AWS.MechanicalTurk.InsufficientFunds"},
        )
        with pytest.raises(MTurkError) as raised:
            batch_publish(batch=batch, options={"sandbox": True})
    assert str(raised.value) == (
        "MTurk refused create_hit_type: This Requester has insufficient funds in their account to complete "
        "this transaction. [AWS.MechanicalTurk.InsufficientFunds]"
    )
    assert raised.value.code == "RequestError" and not raised.value.retryable
    assert not RemoteHIT.objects.exists()
    # Kept on the batch for the researcher's page (publishes often run in the background).
    batch.refresh_from_db()
    assert batch.external["last_error"]["operation"] == "publish"
    assert "insufficient funds" in batch.external["last_error"]["message"]


def test_publishing_needs_a_public_https_address(settings: Any) -> None:
    settings.SITE_URL = "http://127.0.0.1:8000"
    batch = make_batch(hits=1)
    with pytest.raises(MTurkError, match="SITE_URL must be the platform's public https"):
        batch_publish(batch=batch, options={"sandbox": True})


def test_a_batch_stays_on_the_endpoint_it_was_published_to() -> None:
    batch = make_batch(hits=1)
    publish_locally(batch, environment=SANDBOX)
    with pytest.raises(CrowdActionRefused, match="cannot also go to the production"):
        batch_publish(batch=batch, options={"sandbox": False})


def test_clients_use_the_sandbox_or_production_endpoint_and_retry_with_backoff(settings: Any) -> None:
    settings.MTURK_ENDPOINT_URL = ""
    settings.MTURK_RETRY_MODE = "adaptive"
    settings.MTURK_MAX_ATTEMPTS = 7
    sandbox = mturk_client(SANDBOX)
    production = mturk_client(PRODUCTION)
    assert sandbox.meta.endpoint_url == "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
    assert production.meta.endpoint_url == "https://mturk-requester.us-east-1.amazonaws.com"
    retries = sandbox.meta.config.retries  # type: ignore[attr-defined]
    assert retries == {"mode": "adaptive", "total_max_attempts": 7}


def test_a_configured_endpoint_takes_every_call_whatever_the_batch_says(settings: Any) -> None:
    settings.MTURK_ENDPOINT_URL = "http://127.0.0.1:8765"
    assert mturk_client(SANDBOX).meta.endpoint_url == "http://127.0.0.1:8765"
    assert mturk_client(PRODUCTION).meta.endpoint_url == "http://127.0.0.1:8765"
    batch = make_batch(hits=1)
    assert batch_publish_plan(batch=batch, sandbox=False).endpoint == "http://127.0.0.1:8765"


def test_the_endpoint_setting_defaults_to_botocores_own_variable(monkeypatch: Any) -> None:
    monkeypatch.delenv("MTURK_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_MTURK", "http://127.0.0.1:8766")
    output = subprocess.run(
        [sys.executable, "-c", "from crowdlex import settings; print(settings.MTURK_ENDPOINT_URL)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert output.stdout.strip() == "http://127.0.0.1:8766"


def _http_response(status: int, body: dict[str, Any]) -> AWSResponse:
    class Raw:
        def stream(self, **kwargs: Any) -> Any:
            yield json.dumps(body).encode()

    return AWSResponse(
        "https://mturk-requester-sandbox.us-east-1.amazonaws.com/",
        status,
        {"Content-Type": "application/x-amz-json-1.1", "x-amzn-RequestId": "r"},  # type: ignore[arg-type]
        Raw(),
    )


# Adaptive mode also slows the client after throttling (a real wait), so it is paired with a 503 here.
@pytest.mark.parametrize(
    ("mode", "status", "error"),
    [("standard", 400, "ThrottlingException"), ("adaptive", 503, "ServiceUnavailable")],
)
def test_a_throttled_call_is_retried_by_botocore_and_then_succeeds(
    settings: Any, monkeypatch: Any, mode: str, status: int, error: str
) -> None:
    """The Stubber answers before botocore's retry handler runs, so retries are exercised one layer
    down: the HTTP send is replaced and answers throttling, then success."""
    settings.MTURK_RETRY_MODE = mode
    settings.MTURK_MAX_ATTEMPTS = 4
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    client = mturk_client(SANDBOX)
    answers = [
        _http_response(status, {"__type": error, "Message": "Rate exceeded"}),
        _http_response(status, {"__type": error, "Message": "Rate exceeded"}),
        _http_response(200, {}),
    ]
    sent: list[str] = []

    def send(request: Any, **kwargs: Any) -> AWSResponse:
        sent.append(request.headers["X-Amz-Target"].decode())
        return answers.pop(0)

    client.meta.events.register("before-send.mturk.ApproveAssignment", send)  # type: ignore[arg-type]
    MTurkBackend(client_factory=lambda environment: client).call(
        SANDBOX, "approve_assignment", AssignmentId="A1", OverrideRejection=False
    )
    assert sent == ["MTurkRequesterServiceV20170117.ApproveAssignment"] * 3
    assert len(sleeps) >= 2


def test_throttling_that_outlasts_the_retries_is_a_retryable_error_and_the_bonus_is_sent_later_once(
    monkeypatch: Any,
) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    hit = batch.hits.get()
    assignment = submitted_assignment(hit, mturk_worker("W1"), external_id="A1", external_status="Approved")
    assignment.status = "approved"
    assignment.save()
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_bonus_payments", {"BonusPayments": []}, {"AssignmentId": "A1", "MaxResults": 100})
        stub.add_client_error(
            "send_bonus",
            service_error_code="ThrottlingException",
            service_message="Rate exceeded",
            http_status_code=400,
        )
        bonus = worker_bonus(assignment=assignment, amount="0.25", reason="Careful work")
        assert bonus.status == BonusStatus.PENDING
        assert "Rate exceeded" in bonus.error

        stub.add_response("list_bonus_payments", {"BonusPayments": []}, {"AssignmentId": "A1", "MaxResults": 100})
        stub.add_response(
            "send_bonus",
            {},
            {
                "WorkerId": "W1",
                "BonusAmount": "0.25",
                "AssignmentId": "A1",
                "Reason": "Careful work",
                "UniqueRequestToken": bonus.token,
            },
        )
        from crowds.services import bonus_send

        assert bonus_send(bonus=bonus).status == BonusStatus.SENT


def test_a_bonus_already_paid_is_not_paid_again_even_after_the_token_lapsed(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    assignment = submitted_assignment(
        batch.hits.get(), mturk_worker("W1"), external_id="A1", external_status="Approved"
    )
    bonus = Bonus.objects.create(
        assignment=assignment, worker=assignment.worker, amount=Decimal("0.50"), reason="Thanks", token="t-1"
    )
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_bonus_payments",
            {"BonusPayments": [{"WorkerId": "W1", "BonusAmount": "0.50", "AssignmentId": "A1", "Reason": "Thanks"}]},
            {"AssignmentId": "A1", "MaxResults": 100},
        )
        from crowds.services import bonus_send

        assert bonus_send(bonus=bonus).status == BonusStatus.SENT


def test_a_bonus_is_paid_once_per_assignment_and_reason_however_often_it_is_asked_for(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    assignment = submitted_assignment(
        batch.hits.get(), mturk_worker("W1"), external_id="A1", external_status="Approved"
    )
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("list_bonus_payments", {"BonusPayments": []}, {"AssignmentId": "A1", "MaxResults": 100})
        stub.add_response("send_bonus", {}, None)
        first = worker_bonus(assignment=assignment, amount="0.25", reason="Careful work")
        # A re-run command or a double-posted form: the Stubber would refuse a second send_bonus.
        again = worker_bonus(assignment=assignment, amount="0.25", reason="  Careful work ")
    assert (again.pk, again.status) == (first.pk, BonusStatus.SENT)
    with pytest.raises(CrowdActionRefused, match=r"already has a \$0.25 bonus for this reason"):
        worker_bonus(assignment=assignment, amount="0.50", reason="Careful work")
    assert Bonus.objects.count() == 1


def test_a_bonus_above_the_benchmarks_limit_needs_the_researchers_confirmation(monkeypatch: Any) -> None:
    batch = make_batch(hits=1, reward="0.10")
    publish_locally(batch)
    assignment = submitted_assignment(
        batch.hits.get(), mturk_worker("W1"), external_id="A1", external_status="Approved"
    )
    with pytest.raises(CrowdActionRefused, match=r"above this benchmark's bonus limit of \$1.00 \(10 rewards\)"):
        worker_bonus(assignment=assignment, amount="1.01", reason="Careful work")
    CrowdLimits.objects.create(benchmark=batch.benchmark, bonus_limit_rewards=20)
    with stubbed_mturk(monkeypatch) as stub:
        for _ in range(2):
            stub.add_response("list_bonus_payments", {"BonusPayments": []}, {"AssignmentId": "A1", "MaxResults": 100})
            stub.add_response("send_bonus", {}, None)
        assert worker_bonus(assignment=assignment, amount="2.00", reason="Careful work").status == BonusStatus.SENT
        confirmed = worker_bonus(
            assignment=assignment, amount="5.00", reason="Very careful work", above_limit_confirmed=True
        )
    assert confirmed.status == BonusStatus.SENT
    assert bonus_fee(confirmed.amount, MTURK_FEES) == Decimal("1.00")


def test_a_bonus_is_refused_for_work_the_crowd_has_not_confirmed() -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    assignment = submitted_assignment(batch.hits.get(), mturk_worker("W1"), external_id="A1")
    with pytest.raises(CrowdActionRefused, match="sync the batch first"):
        worker_bonus(assignment=assignment, amount="0.25", reason="Careful work")
    with pytest.raises(CrowdActionRefused, match="more than two decimals"):
        worker_bonus(assignment=assignment, amount="0.255", reason="Careful work")
    assert not Bonus.objects.exists()


def test_approve_and_reject_call_mturk_and_record_the_outcome(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    hit = batch.hits.get()
    good = submitted_assignment(hit, mturk_worker("W1"), external_id="A1", external_status="Submitted")
    bad = submitted_assignment(hit, mturk_worker("W2"), external_id="A2", external_status="Submitted")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("approve_assignment", {}, {"AssignmentId": "A1", "OverrideRejection": False})
        stub.add_response("reject_assignment", {}, {"AssignmentId": "A2", "RequesterFeedback": "Controls failed."})
        assert assignment_approve(assignment=good).status == "approved"
        rejected = assignment_reject(assignment=bad, message="Controls failed.")
        # Approving again is a no-op: no second call.
        assignment_approve(assignment=good)
    assert (rejected.status, rejected.filtered, rejected.external_status) == ("rejected", True, "Rejected")
    hit.refresh_from_db()
    assert hit.assignments_active == 1  # the rejected work's slot reopened


def test_work_not_yet_confirmed_by_a_sync_is_never_approved() -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    assignment = submitted_assignment(batch.hits.get(), mturk_worker("W1"), external_id="A1")
    with pytest.raises(CrowdActionRefused, match="sync the batch first"):
        assignment_approve(assignment=assignment)


def test_block_and_notify_reach_the_workers_on_their_endpoint(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    publish_locally(batch)
    hit = batch.hits.get()
    workers = [mturk_worker(f"W{n}") for n in range(3)]
    for n, worker in enumerate(workers):
        submitted_assignment(hit, worker, external_id=f"A{n}")
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("create_worker_block", {}, {"WorkerId": "W0", "Reason": "Failed the check questions."})
        stub.add_response(
            "notify_workers",
            {"NotifyWorkersFailureStatuses": [{"WorkerId": "W2", "NotifyWorkersFailureMessage": "no such worker"}]},
            {"Subject": "New HITs", "MessageText": "More work is up.", "WorkerIds": ["W0", "W1", "W2"]},
        )
        blocked = worker_block_remote(worker=workers[0], reason="Failed the check questions.")
        result = workers_notify(workers=workers, subject="New HITs", text="More work is up.")
    assert blocked.blocked and blocked.blocked_reason == "Failed the check questions."
    assert result.notified == 2 and result.failures == {"W2": "no such worker"}
    batch.refresh_from_db()
    assert batch.external["blocked_workers"] == ["W0"]


def test_expiring_a_batch_expires_every_posting_now_and_closes_it(monkeypatch: Any) -> None:
    batch = make_batch(hits=2)
    postings = publish_locally(batch)
    with stubbed_mturk(monkeypatch) as stub:
        for posting in postings:
            stub.add_response("update_expiration_for_hit", {}, {"HITId": posting.external_id, "ExpireAt": EXPIRE_NOW})
        assert batch_expire(batch=batch) == 2
        # Expiring again makes no further calls.
        assert batch_expire(batch=batch) == 0
    batch.refresh_from_db()
    assert batch.status == "closed"
    assert timezone.now() > EXPIRE_NOW


def test_missing_credentials_are_explained(monkeypatch: Any) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # boto3's default session keeps credentials it found earlier in this process.
    monkeypatch.setattr("boto3.DEFAULT_SESSION", None)
    monkeypatch.setattr(MTurkBackend, "_shared_clients", {})
    backend = MTurkBackend()
    with pytest.raises(MTurkError, match="No AWS credentials found"):
        backend.call(SANDBOX, "get_account_balance")


def test_backends_are_found_by_name() -> None:
    assert isinstance(get_backend("local"), LocalBackend)
    assert isinstance(get_backend("mturk"), MTurkBackend)
    from crowds.interface import BackendError

    with pytest.raises(BackendError, match="unknown crowd backend 'upwork'"):
        get_backend("upwork")


def test_parameters_mturk_would_refuse_are_caught_before_sending() -> None:
    # botocore validates against the service model before anything is sent: no network here.
    backend = MTurkBackend(client_factory=lambda environment: stub_client())
    with pytest.raises(MTurkError, match="Invalid parameters for MTurk's create_hit_type"):
        backend.call(SANDBOX, "create_hit_type", Reward="0.10", Title="t")
