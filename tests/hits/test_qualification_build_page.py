"""Building the qualification test on the researcher's page: from an uploaded gold file or from a
finished benchmark's clear scores, with what is wrong shown on the form and nothing built then."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from hits.models import QualificationTest
from tests.base import Cast, logged_in
from tests.hits.factories import make_benchmark
from tests.hits.test_qualification_build import finished

pytestmark = pytest.mark.django_db

GOLD = (
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "clever", "expected": "accept"}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "fast", "expected": "accept"}\n'
    b'{"context": "The bright student solved it.", "target": "bright", "candidate": "table", "expected": "reject"}\n'
    b'{"context": "She ran quickly home.", "target": "quickly", "candidate": "green", "expected": "reject"}\n'
)
SETTINGS = {"length": "3", "pass_mark": "0.75", "min_labels": "10", "accept_min": "0.9", "reject_max": "0", "seed": "0"}


def test_a_researcher_builds_the_test_from_a_gold_file_on_the_page(cast: Cast) -> None:
    benchmark = make_benchmark()
    client = logged_in(cast.researcher)
    page = client.get(f"/benchmarks/{benchmark.name}/qualification/").content.decode()
    assert f'action="/benchmarks/{benchmark.name}/qualification/build/"' in page and 'name="gold_file"' in page

    upload = SimpleUploadedFile("gold.jsonl", GOLD)
    built = client.post(
        f"/benchmarks/{benchmark.name}/qualification/build/",
        {"source": "file", "gold_file": upload, **SETTINGS},
        follow=True,
    )

    test = QualificationTest.objects.get(benchmark=benchmark)
    assert (test.length, test.pass_mark, test.items.count(), test.source) == (3, 0.75, 4, "file gold.jsonl")
    assert sorted(test.items.values_list("expected", flat=True)) == ["accept", "accept", "reject", "reject"]
    assert "The test is built: 3 of its 4 gold items in each attempt." in built.content.decode()


def test_a_bad_gold_file_is_shown_on_the_form_with_its_line_and_field_and_builds_nothing(cast: Cast) -> None:
    benchmark = make_benchmark()
    bad = GOLD.replace(b'"candidate": "fast", "expected": "accept"', b'"candidate": "fast", "expected": "yes"')
    response = logged_in(cast.researcher).post(
        f"/benchmarks/{benchmark.name}/qualification/build/",
        {"source": "file", "gold_file": SimpleUploadedFile("gold.jsonl", bad), **SETTINGS},
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "gold.jsonl, line 2, field &#x27;expected&#x27;" in html
    assert 'value="0.75"' in html  # the settings stay as they were typed
    assert not QualificationTest.objects.exists()


def test_a_researcher_builds_the_test_from_clear_scores_and_sees_what_is_wrong(cast: Cast) -> None:
    benchmark = make_benchmark()
    finished("finished", {"brilliant": "AAAAAAAAAR", "table": "RRRRRRRRRU", "sunny": "RRRRRRRRR"})
    client = logged_in(cast.researcher)
    url = f"/benchmarks/{benchmark.name}/qualification/build/"
    scores = {**SETTINGS, "source": "scores", "from_benchmark": "finished", "length": "2", "pass_mark": "1"}

    unclear = client.post(url, {**scores, "accept_min": "0.5", "reject_max": "0.6"})
    missing = client.post(url, {**scores, "from_benchmark": "nowhere"})
    too_long = client.post(url, {**scores, "length": "3"})
    nameless = client.post(url, {**scores, "from_benchmark": ""})
    assert "Clear scores: need 0 &lt;= reject_max &lt; accept_min &lt;= 1." in unclear.content.decode()
    assert "No benchmark named &#x27;nowhere&#x27; that you may see." in missing.content.decode()
    assert "between 1 and the 2 gold items, not 3" in too_long.content.decode()
    assert "Name the benchmark whose clear scores give the gold items." in nameless.content.decode()
    assert {r.status_code for r in (unclear, missing, too_long, nameless)} == {400}
    assert not QualificationTest.objects.exists()

    built = client.post(url, scores)
    assert built.status_code == 302
    test = QualificationTest.objects.get(benchmark=benchmark)
    assert sorted(test.items.values_list("candidate", "expected")) == [("brilliant", "accept"), ("table", "reject")]
    assert test.source == "benchmark finished (>= 10 labels, score >= 0.9 or <= 0.0)"


def test_a_viewer_cannot_build_the_test(cast: Cast) -> None:
    benchmark = make_benchmark()
    response = logged_in(cast.alice).post(
        f"/benchmarks/{benchmark.name}/qualification/build/",
        {"source": "file", "gold_file": SimpleUploadedFile("gold.jsonl", GOLD), **SETTINGS},
    )
    assert response.status_code == 403 and not QualificationTest.objects.exists()
