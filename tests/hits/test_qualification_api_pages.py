"""The qualification test's pages and REST API: taking it (page and API), the researcher's page
with pass rates and each person's result, building it over the API, and its place in the schema."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.models import Label
from crowds.interface import ARRIVAL_QUEUE, QUALIFICATION, backends
from hits.models import QualificationAttempt, QualificationItem
from hits.qualification import qualification_attempt_start
from hits.qualification.selectors import crowds_held_to_test
from tests.base import Cast, logged_in
from tests.hits.factories import make_benchmark, make_hits
from tests.hits.qualification_data import expected_answers, take, with_test

pytestmark = pytest.mark.django_db


def api(user: User) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_page_shows_the_drawn_items_in_the_schemes_rows_without_the_expected_answers(cast: Cast) -> None:
    benchmark = make_benchmark(title="Bright words")
    test = with_test(benchmark, length=6)
    page = logged_in(cast.alice).get(f"/work/qualification/{benchmark.name}/")

    attempt = QualificationAttempt.objects.get(worker__user=cast.alice)
    html = page.content.decode()
    assert page.status_code == 200 and len(attempt.items) == 6
    assert test.items.filter(expected="accept", pk__in=attempt.items).count() == 3
    for pk in attempt.items:
        assert f'name="item-{pk}"' in html
    assert "data-expected" not in html and "expected" not in html.lower().replace("as expected", "")
    assert '<mark class="target">bright</mark>' in html
    assert "schemes/choices.js" in html and "hits/hit_page.js" in html


def test_submitting_on_the_page_grades_once_and_shows_the_result(cast: Cast) -> None:
    benchmark = make_benchmark()
    make_hits(benchmark, 1)
    with_test(benchmark, length=6, pass_mark=0.8)
    client = logged_in(cast.alice)
    client.get(f"/work/qualification/{benchmark.name}/")
    attempt = QualificationAttempt.objects.get(worker__user=cast.alice)
    answers = {f"item-{pk}": value for pk, value in expected_answers(attempt).items()}

    missing = client.post(f"/work/qualification/{benchmark.name}/", {next(iter(answers)): "accept"})
    done = client.post(f"/work/qualification/{benchmark.name}/", answers, follow=True)
    again = client.post(f"/work/qualification/{benchmark.name}/", {key: "accept" for key in answers}, follow=True)

    assert missing.status_code == 400 and "Please answer every row" in missing.content.decode()
    assert "You passed the qualification test" in done.content.decode()
    assert "6 of 6 as expected" in again.content.decode()
    attempt.refresh_from_db()
    assert (attempt.correct, attempt.passed) == (6, True)
    assert Label.objects.count() == 0


def test_the_researchers_page_shows_pass_rate_results_and_items(cast: Cast) -> None:
    benchmark = make_benchmark()
    test = with_test(benchmark, length=6, pass_mark=0.8)
    take(test, cast.alice.worker)
    take(test, cast.bob.worker, wrong=3)
    take(test, cast.carol.worker, wrong=1)
    qualification_attempt_start(test=test, worker=cast.spammer.worker)

    html = logged_in(cast.researcher).get(f"/benchmarks/{benchmark.name}/qualification/").content.decode()

    assert 'id="pass-rate">67 %' in html
    assert "alice" in html and "bob" in html and "sam" in html
    assert "not finished" in html and "failed" in html and "passed" in html
    assert html.count("<tr>") == 1 + 4 + 1 + 8  # headers, people, gold items
    assert logged_in(cast.alice).get(f"/benchmarks/{benchmark.name}/qualification/").status_code == 403


def test_the_researchers_page_names_the_crowds_the_test_holds_back(cast: Cast) -> None:
    benchmark = make_benchmark()
    test = with_test(benchmark)
    # Those claiming from the queue and those whose crowd keeps a type that follows the test; a crowd
    # whose participants arrive by link with no such type is not held back.
    held = crowds_held_to_test()
    assert held == [
        backend.short_label
        for backend in backends()
        if backend.arrival == ARRIVAL_QUEUE or QUALIFICATION in backend.capabilities
    ]
    assert "local queue" in held and "MTurk" in held and "Prolific" not in held

    html = logged_in(cast.researcher).get(f"/benchmarks/{benchmark.name}/qualification/").content.decode()

    assert test.active and "offered this benchmark's HITs (local queue and MTurk)." in html


def test_a_researcher_turns_the_test_off_and_lets_someone_retake_it(cast: Cast) -> None:
    benchmark = make_benchmark()
    test = with_test(benchmark)
    attempt = take(test, cast.bob.worker, wrong=6)
    client = logged_in(cast.researcher)

    client.post(f"/benchmarks/{benchmark.name}/qualification/active/", {"active": "0"})
    test.refresh_from_db()
    assert test.active is False
    client.post(f"/benchmarks/{benchmark.name}/qualification/attempts/{attempt.pk}/reset/")
    assert not QualificationAttempt.objects.exists()


def test_an_annotator_takes_the_test_over_the_api(cast: Cast) -> None:
    benchmark = make_benchmark()
    [hit] = make_hits(benchmark, 1)
    with_test(benchmark, length=4, pass_mark=0.75)
    alice = api(cast.alice)

    shown = alice.get(f"/api/work/qualification/{benchmark.name}").json()
    attempt = QualificationAttempt.objects.get(worker__user=cast.alice)
    bad = alice.post(f"/api/work/qualification/{benchmark.name}/submit", {"answers": {"1": "maybe"}}, format="json")
    answers = {str(pk): value for pk, value in expected_answers(attempt, wrong=1).items()}
    result = alice.post(f"/api/work/qualification/{benchmark.name}/submit", {"answers": answers}, format="json")
    claim = alice.post("/api/work/claim", {"benchmark": benchmark.name}, format="json")

    assert [item["id"] for item in shown["items"]] == attempt.items
    assert set(shown["items"][0]) == {"id", "context_text", "word", "offset", "text"}
    assert shown["choices"] == ["accept", "reject", "abstain"] and shown["passed"] is None
    assert bad.status_code == 400
    assert (result.json()["correct"], result.json()["total"], result.json()["passed"]) == (3, 4, True)
    assert claim.status_code == 200 and claim.json()["hit"] == hit.pk


def test_a_researcher_builds_reads_and_lists_results_over_the_api(cast: Cast) -> None:
    benchmark = make_benchmark()
    client = api(cast.researcher)
    items = [
        {"context": "The bright student.", "target": "bright", "candidate": "clever", "expected": "accept"},
        {"context": "The bright student.", "target": "bright", "candidate": "table", "expected": "reject"},
    ]

    built = client.put(
        f"/api/benchmarks/{benchmark.name}/qualification", {"items": items, "length": 2, "pass_mark": 1}, format="json"
    )
    neither = client.put(
        f"/api/benchmarks/{benchmark.name}/qualification", {"length": 2, "pass_mark": 1}, format="json"
    )
    too_long = client.put(
        f"/api/benchmarks/{benchmark.name}/qualification", {"items": items, "length": 3, "pass_mark": 1}, format="json"
    )
    take(benchmark.qualification_test, cast.alice.worker)
    taken = client.put(
        f"/api/benchmarks/{benchmark.name}/qualification", {"items": items, "length": 1, "pass_mark": 1}, format="json"
    )
    read = client.get(f"/api/benchmarks/{benchmark.name}/qualification").json()
    attempts = client.get(f"/api/benchmarks/{benchmark.name}/qualification/attempts").json()

    assert built.status_code == 200 and built.json()["items"][0]["offset"] == 4
    assert neither.status_code == 400 and too_long.status_code == 400
    assert taken.status_code == 409 and "1 person has taken" in taken.json()["detail"]
    assert (read["taken"], read["passed"], read["pass_rate"]) == (1, 1, 1.0)
    assert [item["shown"] for item in read["items"]] == [1, 1]
    assert attempts["results"][0]["worker"] == "alice" and attempts["results"][0]["passed"] is True
    assert QualificationItem.objects.count() == 2


def test_annotators_never_reach_the_researchers_api(cast: Cast) -> None:
    benchmark = make_benchmark()
    with_test(benchmark)

    assert api(cast.alice).get(f"/api/benchmarks/{benchmark.name}/qualification").status_code == 403
    assert api(cast.alice).get(f"/api/benchmarks/{benchmark.name}/qualification/attempts").status_code == 403


def test_the_schema_documents_the_qualification_endpoints(cast: Cast) -> None:
    schema = api(cast.researcher).get("/api/schema/?format=json").json()

    assert {"put", "get"} <= set(schema["paths"]["/api/benchmarks/{name}/qualification"])
    assert "get" in schema["paths"]["/api/benchmarks/{name}/qualification/attempts"]
    assert "get" in schema["paths"]["/api/work/qualification/{name}"]
    assert "post" in schema["paths"]["/api/work/qualification/{name}/submit"]
    assert {"403", "409"} <= set(schema["paths"]["/api/work/claim"]["post"]["responses"])


def test_the_admin_shows_tests_and_attempts_and_only_switches_a_test(cast: Cast) -> None:
    benchmark = make_benchmark()
    test = with_test(benchmark)
    attempt = take(test, cast.alice.worker)
    cast.researcher.is_superuser = True
    cast.researcher.save()
    admin = logged_in(cast.researcher)

    assert admin.get("/admin/hits/qualificationtest/").status_code == 200
    assert admin.get(f"/admin/hits/qualificationtest/{test.pk}/change/").status_code == 200
    assert admin.get(f"/admin/hits/qualificationattempt/{attempt.pk}/change/").status_code == 200
    assert admin.get("/admin/hits/qualificationtest/add/").status_code == 403
    admin.post(f"/admin/hits/qualificationtest/{test.pk}/change/", {"active": "", "items-TOTAL_FORMS": "8",
               "items-INITIAL_FORMS": "8", "items-MIN_NUM_FORMS": "0", "items-MAX_NUM_FORMS": "1000",
               **{f"items-{n}-id": str(pk) for n, pk in enumerate(test.items.values_list("pk", flat=True))},
               **{f"items-{n}-test": str(test.pk) for n in range(8)}})  # fmt: skip
    test.refresh_from_db()
    assert test.active is False and test.length == 6
