"""A second scheme runs through hits and analysis unchanged: generation, the local queue, the work
API and the page; its statistics page, statistics API, plot and export, all declared in its own
package (tests/schemes/toy/)."""

import csv
import io
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from analysis.exports import export_formats
from analysis.services import benchmark_export
from annotation.models import Benchmark, Context, Label
from hits.models import HIT, Answer, Assignment, AssignmentStatus, HITItem
from hits.services import (
    AnswersInvalid,
    assignment_claim_next,
    assignment_return,
    assignment_submit,
    assignments_expire_overdue,
    hits_generate,
)
from review.services import benchmark_refresh
from tests.base import PASSWORD, Cast
from tests.schemes.toy import SENTENCE, TOY, toy_scheme

pytestmark = pytest.mark.django_db

TEXTS = ["The bright sun rose.", "She is a bright student.", "A bright idea came late."]


@pytest.fixture(autouse=True)
def _toy() -> Iterator[None]:
    with toy_scheme():
        yield


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = Benchmark.objects.create(name="toy", scheme=TOY, scheme_settings={"judgments_per_sentence": 2})
    for text in TEXTS:
        context = Context.objects.create(benchmark=benchmark, text=text)
        context.targets.create(benchmark=benchmark, word="bright", offset=text.index("bright"), pos="adj")
    return benchmark


def test_generation_plans_one_hit_per_sentence_with_the_schemes_items(benchmark: Benchmark) -> None:
    batch = hits_generate(benchmark=benchmark, step=1, seed=3)

    assert batch.assignments_per_hit == 2
    items = list(HITItem.objects.filter(hit__batch=batch).order_by("hit__target_id"))
    assert [(item.kind, item.text, item.control, item.candidate_id) for item in items] == [
        (SENTENCE, text, False, None) for text in TEXTS
    ]
    # A second batch of the same step finds nothing new to collect; the scheme's steps are checked.
    with pytest.raises(ValueError, match="nothing needs collecting in step 1"):
        hits_generate(benchmark=benchmark, step=1, seed=3)
    with pytest.raises(ValueError, match="step must be one of 1"):
        hits_generate(benchmark=benchmark, step=2, seed=3)


def test_the_queue_claims_submits_once_returns_and_expires(benchmark: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=3)
    alice, bob = cast.alice.worker, cast.bob.worker

    claim = assignment_claim_next(worker=alice)
    assert claim is not None
    [item] = HITItem.objects.filter(hit=claim.hit)
    with pytest.raises(AnswersInvalid, match="Each answer must be yes or no"):
        assignment_submit(assignment=claim, answers={item.pk: "accept"})
    submitted = assignment_submit(assignment=claim, answers={str(item.pk): "Yes"})
    again = assignment_submit(assignment=claim, answers={item.pk: "no"})
    assert submitted.status == again.status == AssignmentStatus.SUBMITTED
    assert list(Answer.objects.filter(assignment=claim).values_list("value", flat=True)) == ["yes"]
    assert not Label.objects.exists()

    returned = assignment_claim_next(worker=bob)
    assert returned is not None
    assignment_return(assignment=returned)
    assert Assignment.objects.get(pk=returned.pk).status == AssignmentStatus.RETURNED

    overdue = assignment_claim_next(worker=bob, now=timezone.now() - timedelta(hours=2))
    assert overdue is not None
    assert assignments_expire_overdue() == 1
    for hit in HIT.objects.filter(batch__benchmark=benchmark):
        submitted_here = hit.assignments.filter(status=AssignmentStatus.SUBMITTED).count()
        assert hit.assignments_active == submitted_here


def test_the_work_api_serves_and_takes_the_schemes_answers(benchmark: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=3)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.carol).key}")

    claimed = client.post("/api/work/claim", {}, format="json").json()
    [item] = claimed["items"]
    assert item["text"] in TEXTS

    submit = f"/api/work/assignments/{claimed['id']}/submit"
    refused = client.post(submit, {"answers": {item["id"]: "accept"}}, format="json")
    assert refused.status_code == 400 and refused.json()["invalid"] == [item["id"]]
    done = client.post(submit, {"answers": {item["id"]: "no"}}, format="json")
    assert done.status_code == 200 and done.json()["status"] == "submitted"


def test_the_annotator_page_shows_the_schemes_question_and_choices(benchmark: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=3)
    client = Client()
    client.login(username="alice", password=PASSWORD)
    claim = assignment_claim_next(worker=cast.alice.worker)
    assert claim is not None
    url = reverse("work-assignment", args=[claim.pk])

    page = client.get(url).content.decode()
    assert 'Is <mark class="target">bright</mark> meant literally in this text?' in page
    assert 'value="yes" data-keys="1 y"' in page and 'value="no" data-keys="2 n"' in page
    assert "accept" not in page.lower()

    [item] = HITItem.objects.filter(hit=claim.hit)
    response = client.post(url, {f"item-{item.pk}": "no", "seconds_on_page": "4"})
    assert response.status_code == 302
    assert Answer.objects.get(assignment=claim).value == "no"


def test_the_review_refresh_leaves_a_scheme_without_controls_or_steps_to_advance_alone(
    benchmark: Benchmark, cast: Cast
) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=3)
    claim = assignment_claim_next(worker=cast.alice.worker)
    assert claim is not None
    [item] = HITItem.objects.filter(hit=claim.hit)
    assignment_submit(assignment=claim, answers={item.pk: "no"})

    result = benchmark_refresh(benchmark=benchmark, full=True)

    assert (result.filtered, result.advanced_targets, result.done_targets) == (0, [], [])
    assert not Assignment.objects.filter(filtered=True).exists()
    assert set(benchmark.targets.values_list("stage", flat=True)) == {"reduce"}


def test_the_pipeline_page_shows_the_schemes_own_progress_and_stage_names(benchmark: Benchmark, cast: Cast) -> None:
    hits_generate(benchmark=benchmark, step=1, seed=3)
    claim = assignment_claim_next(worker=cast.alice.worker)
    assert claim is not None
    [item] = HITItem.objects.filter(hit=claim.hit)
    assignment_submit(assignment=claim, answers={item.pk: "yes"})
    benchmark_refresh(benchmark=benchmark)

    client = Client()
    client.force_login(cast.researcher)
    page = client.get(reverse("pipeline-progress", args=[benchmark.name])).content.decode()
    # One judgment of the two each sentence needs, in the scheme's words; no other scheme's steps.
    assert "Step 1: judge" in page and f"1 / {2 * len(TEXTS)}" in page and "being judged" in page
    # The stored stage stays a key of the live figures, never a name shown.
    assert ">reduce<" not in page and "step 2" not in page.lower()
    targets = client.get(reverse("target-list", args=[benchmark.name])).content.decode()
    assert "being judged" in targets and "step 2" not in targets


# --- the analysis room: what the toy's own plug-ins declare (tests/schemes/toy/figures.py, exports.py) ---


def _answered(benchmark: Benchmark, cast: Cast) -> None:
    """Alice says one sentence is meant literally, Bob says his is not."""
    hits_generate(benchmark=benchmark, step=1, seed=3)
    for worker, value in ((cast.alice.worker, "yes"), (cast.bob.worker, "no")):
        claim = assignment_claim_next(worker=worker)
        assert claim is not None
        [item] = HITItem.objects.filter(hit=claim.hit)
        assignment_submit(assignment=claim, answers={item.pk: value})


def _researcher() -> Client:
    client = Client()
    client.login(username="rita", password=PASSWORD)
    return client


def test_the_schemes_figures_give_the_statistics_page_api_and_plot(benchmark: Benchmark, cast: Cast) -> None:
    _answered(benchmark, cast)
    client = _researcher()

    api = client.get(f"/api/benchmarks/{benchmark.name}/statistics")
    assert api.status_code == 200
    figures = api.json()
    assert (figures["scheme"], figures["sentences"], figures["answers"]) == (TOY, 3, {"yes": 1, "no": 1})
    assert figures["literal_share"] == 0.5

    page = client.get(reverse("analysis-statistics", args=[benchmark.name]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "<code>answers.yes</code>" in text and "<code>literal_share</code>" in text
    assert reverse("analysis-plot", args=[benchmark.name, "answers", "svg"]) in text

    plots = client.get(f"/api/benchmarks/{benchmark.name}/plots").json()
    assert [plot["name"] for plot in plots["results"]] == ["answers"]
    svg = client.get(reverse("analysis-plot", args=[benchmark.name, "answers", "svg"]))
    assert svg.status_code == 200 and b"<svg" in svg.content and b"Answers" in svg.content


def test_the_schemes_export_format_is_offered_and_the_label_tables_are_not(benchmark: Benchmark, cast: Cast) -> None:
    _answered(benchmark, cast)
    client = _researcher()

    offered = [found.name for found in export_formats(benchmark)]
    assert "toy-answers-csv" in offered
    assert not {"labels-csv", "candidates-csv", "swords", "dataset"} & set(offered)

    response = client.get(reverse("analysis-export-direct", args=[benchmark.name, "toy-answers-csv"]))
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))  # type: ignore[attr-defined]
    assert rows[0] == ["target_id", "sentence", "yes", "no"]
    assert len(rows) == 1 + len(TEXTS) and {row[1] for row in rows[1:]} == set(TEXTS)
    assert (sum(int(row[2]) for row in rows[1:]), sum(int(row[3]) for row in rows[1:])) == (1, 1)

    # The label tables do not fit a scheme whose answers are not labels of candidates: refused, saying why.
    with pytest.raises(ValueError, match=f"does not export {TOY} benchmarks"):
        benchmark_export(benchmark=benchmark, format="labels-csv", out=io.StringIO())
    refused = client.post(
        f"/api/benchmarks/{benchmark.name}/exports", {"format": "candidates-csv"}, content_type="application/json"
    )
    assert refused.status_code == 400 and f"does not export {TOY} benchmarks" in str(refused.json())
    with pytest.raises(CommandError, match=f"does not export {TOY} benchmarks"):
        call_command("export_benchmark", benchmark.name, "--format", "labels-csv", "--output", "-")


def test_no_evaluation_is_offered_to_a_scheme_that_declares_none(benchmark: Benchmark, cast: Cast) -> None:
    client = _researcher()

    detail = client.get(reverse("benchmark-detail", args=[benchmark.name])).content.decode()
    assert reverse("analysis-statistics", args=[benchmark.name]) in detail
    assert reverse("analysis-evaluation", args=[benchmark.name]) not in detail
    assert "candidates-csv" not in detail

    page = client.get(reverse("analysis-evaluation", args=[benchmark.name]))
    assert page.status_code == 404
    api = client.get(f"/api/benchmarks/{benchmark.name}/evaluations")
    assert api.status_code == 404 and "declares no system evaluation" in str(api.json())
    with pytest.raises(CommandError, match="declares no system evaluation"):
        call_command("evaluate_system", benchmark.name, "--result", "missing.json")
