"""The qualification test on MTurk, against botocore's Stubber (every call checked against MTurk's
real service model): the platform's own type, grants to those who passed, the batch's requirement."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.stub import ANY
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from crowds.mturk.qualification import (
    answer_key_xml,
    mturk_form_items,
    mturk_qualification_grant,
    mturk_qualification_sync,
    question_form_xml,
    type_name,
)
from crowds.selectors import batch_publish_plan
from crowds.services import batch_publish
from hits.models import QualificationAttempt
from hits.qualification import GoldItem, qualification_build
from tests.crowds.crowd_helpers import SITE, make_batch, mturk_worker, stubbed_mturk
from tests.hits.factories import make_benchmark
from tests.hits.qualification_data import take, with_test

pytestmark = pytest.mark.django_db

QUALIFICATION_TYPE = "3QUALTYPE0000000000000000000"
ANSWER_KEY_NS = "{http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/AnswerKey.xsd}"


@pytest.fixture(autouse=True)
def _public_site(settings: Any) -> None:
    settings.SITE_URL = SITE


def _create_type(stub: Any, test: Any) -> None:
    stub.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": QUALIFICATION_TYPE, "Name": type_name(test)}},
        {
            "Name": type_name(test),
            "Keywords": ANY,
            "Description": ANY,
            "QualificationTypeStatus": "Active",
            "Test": ANY,
            "AnswerKey": ANY,
            "TestDurationInSeconds": 1800,
        },
    )


def test_publishing_a_batch_of_a_benchmark_with_a_test_makes_its_type_and_requires_the_pass_mark(
    monkeypatch: Any,
) -> None:
    batch = make_batch(hits=1, qualifications={"approval_rate": None, "locale": None, "approved_hits": None})
    test = with_test(batch.benchmark, pass_mark=0.75)
    hit = batch.hits.get()
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "100.00"}, {})
        _create_type(stub, test)
        stub.add_response(
            "create_hit_type",
            {"HITTypeId": "HT123"},
            {
                "AutoApprovalDelayInSeconds": ANY,
                "AssignmentDurationInSeconds": ANY,
                "Reward": "0.10",
                "Title": batch.title,
                "Keywords": batch.keywords,
                "Description": batch.description,
                "QualificationRequirements": [
                    {
                        "QualificationTypeId": QUALIFICATION_TYPE,
                        "Comparator": "GreaterThanOrEqualTo",
                        "IntegerValues": [75],
                        "ActionsGuarded": "Accept",
                    }
                ],
            },
        )
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": f"MT{hit.pk}"}}, None)
        batch_publish(batch=batch, options={"sandbox": True})

    test.refresh_from_db()
    assert test.crowd_types == {"sandbox": QUALIFICATION_TYPE}
    plan = batch_publish_plan(batch=batch)
    assert plan.qualifications == [f"qualification test of {batch.benchmark.name} >= 75 % (type {QUALIFICATION_TYPE})"]


def test_a_second_publish_reuses_the_type_it_made(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    test = with_test(batch.benchmark)
    test.crowd_types = {"sandbox": QUALIFICATION_TYPE}
    test.save()
    hit = batch.hits.get()
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "100.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT123"}, None)
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": f"MT{hit.pk}"}}, None)
        batch_publish(batch=batch, options={"sandbox": True})


def test_those_who_passed_are_granted_the_type_once_and_those_who_failed_never(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    test = with_test(batch.benchmark)
    take(test, mturk_worker("A1PASSEDWORKER"))
    take(test, mturk_worker("A2FAILEDWORKER"), wrong=6)
    with stubbed_mturk(monkeypatch) as stub:
        _create_type(stub, test)
        stub.add_response(
            "associate_qualification_with_worker",
            {},
            {
                "QualificationTypeId": QUALIFICATION_TYPE,
                "WorkerId": "A1PASSEDWORKER",
                "IntegerValue": 100,
                "SendNotification": True,
            },
        )
        first = mturk_qualification_grant(test=test, environment="sandbox")
        again = mturk_qualification_grant(test=test, environment="sandbox")

    assert (first.type_id, first.granted, first.already) == (QUALIFICATION_TYPE, ["A1PASSEDWORKER"], 0)
    assert (again.granted, again.already) == ([], 1)
    assert QualificationAttempt.objects.get(worker__external_id="A1PASSEDWORKER").granted_on == ["sandbox"]


def test_a_type_made_by_a_create_that_timed_out_is_found_by_its_name(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    test = with_test(batch.benchmark)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_client_error(
            "create_qualification_type",
            service_error_code="ServiceFault",
            service_message="You have already created a QualificationType with this name.",
        )
        stub.add_response(
            "list_qualification_types",
            {"QualificationTypes": [{"QualificationTypeId": QUALIFICATION_TYPE, "Name": type_name(test)}]},
            {"Query": type_name(test), "MustBeRequestable": False, "MustBeOwnedByCaller": True},
        )
        result = mturk_qualification_grant(test=test, environment="sandbox")

    assert result.type_id == QUALIFICATION_TYPE


def test_results_of_mturks_own_form_are_recorded_against_the_pass_mark(monkeypatch: Any) -> None:
    batch = make_batch(hits=1)
    test = with_test(batch.benchmark, pass_mark=0.8)
    test.crowd_types = {"sandbox": QUALIFICATION_TYPE}
    test.save()
    granted = datetime(2026, 11, 1, tzinfo=UTC)
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response(
            "list_workers_with_qualification_type",
            {
                "Qualifications": [
                    {"WorkerId": "A3GOOD", "IntegerValue": 83, "GrantTime": granted, "Status": "Granted"},
                    {"WorkerId": "A4POOR", "IntegerValue": 50, "GrantTime": granted, "Status": "Granted"},
                ]
            },
            {"QualificationTypeId": QUALIFICATION_TYPE, "Status": "Granted"},
        )
        added = mturk_qualification_sync(test=test, environment="sandbox")

    assert added == 2
    results = dict(QualificationAttempt.objects.values_list("worker__external_id", "passed"))
    assert results == {"A3GOOD": True, "A4POOR": False}


def test_mturks_form_scores_answers_as_the_platform_grades_them() -> None:
    batch = make_batch(hits=1)
    test = with_test(batch.benchmark, length=4)
    items = mturk_form_items(test)
    key = ET.fromstring(answer_key_xml(test, items))
    form = question_form_xml(test, items)

    assert len(items) == 4 and {item.expected for item in items} == {"accept", "reject"}
    assert key.findtext(f".//{ANSWER_KEY_NS}MaximumSummedScore") == "4"
    for item, question in zip(items, key.findall(f"{ANSWER_KEY_NS}Question"), strict=True):
        scores = {
            option.findtext(f"{ANSWER_KEY_NS}SelectionIdentifier"): option.findtext(f"{ANSWER_KEY_NS}AnswerScore")
            for option in question.findall(f"{ANSWER_KEY_NS}AnswerOption")
        }
        wanted = {"accept": "1", "reject": "0", "abstain": "0"}
        if item.expected == "reject":
            wanted = {"accept": "0", "reject": "1", "abstain": "1"}
        assert scores == wanted
    assert ET.fromstring(form).tag.endswith("QuestionForm")


def test_mturks_form_escapes_texts_that_look_like_markup() -> None:
    batch = make_batch(hits=1)
    context = "A <b>bright</b> & able student."
    items = [
        GoldItem(context, "bright", context.index("bright"), "clever & quick", "accept"),
        GoldItem(context, "bright", context.index("bright"), "<table>", "reject"),
    ]
    test = qualification_build(benchmark=batch.benchmark, items=items, length=2, pass_mark=1.0)

    form = ET.fromstring(question_form_xml(test, mturk_form_items(test)))

    texts = [element.text for element in form.iter() if element.tag.endswith("Text")]
    assert "A <b>[bright]</b> & able student." in texts
    assert "Candidate: <table>" in texts


def test_the_command_grants_and_reads_back_in_one_run(monkeypatch: Any, capsys: Any) -> None:
    batch = make_batch(hits=1)
    test = with_test(batch.benchmark)
    take(test, mturk_worker("A1PASSEDWORKER"))
    with stubbed_mturk(monkeypatch) as stub:
        _create_type(stub, test)
        stub.add_response("associate_qualification_with_worker", {}, None)
        stub.add_response("list_workers_with_qualification_type", {"Qualifications": []}, None)
        call_command("qualification_mturk", batch.benchmark.name, "--sandbox")

    assert f"qualification type {QUALIFICATION_TYPE}; granted to 1 worker(s)" in capsys.readouterr().out
    # The researcher's page of the test names the type it made on the crowd.
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("owner", "owner@example.org", "pass"))
    page = client.get(reverse("qualification-detail", args=[batch.benchmark.name])).content.decode()
    assert f"sandbox: <code>{QUALIFICATION_TYPE}</code>" in page


def test_mturks_form_of_a_prolex_test_offers_its_answers_and_scores_them_as_it_says() -> None:
    benchmark = make_benchmark(scheme="prolex")
    test = with_test(benchmark, length=4)
    items = mturk_form_items(test)
    key = ET.fromstring(answer_key_xml(test, items))
    form = question_form_xml(test, items)

    assert "<SelectionIdentifier>-1</SelectionIdentifier><Text>-1 unacceptable</Text>" in form
    for item, question in zip(items, key.findall(f"{ANSWER_KEY_NS}Question"), strict=True):
        scores = {
            option.findtext(f"{ANSWER_KEY_NS}SelectionIdentifier"): option.findtext(f"{ANSWER_KEY_NS}AnswerScore")
            for option in question.findall(f"{ANSWER_KEY_NS}AnswerOption")
        }
        wanted = {"1": "1", "-1": "0", "0": "0"} if item.expected == "accept" else {"1": "0", "-1": "1", "0": "1"}
        assert scores == wanted
