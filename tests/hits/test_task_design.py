"""A batch's task design (docs/batches.md, "Task design"): its page and API, what stays once the
batch is published or worked on, the benchmark's template that new batches start from, the
inheritance of follow-ups and clones, the create_batch option, and the worker's preview on each
backend, which creates no assignment and records nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.access import Role, access_grant
from annotation.models import Activity, ActivityKind, Benchmark, Candidate, CandidateStage, Label, Target, Worker
from hits.models import HIT, Assignment, AssignmentTelemetry, Batch, BatchStatus
from hits.services import assignment_claim_next, batch_clone, hits_generate
from hits.services.generation import followup_batches_extend
from tests.base import Cast, logged_in, make_user
from tests.crowds.crowd_helpers import make_batch, publish_locally
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db

DESIGN = {
    "title": "Does the word fit?",
    "description": "Say whether each word could stand in for the highlighted one.",
    "keywords": "words, meaning",
    "instructions": "Read the text <b>first</b>.\n\n- Judge the meaning here\n- Skip nothing",
    "examples": [
        {"text": "The bank of the river was muddy.", "target": "bank", "answer": "shore: fits", "note": "<i>"}
    ],
    "choices": {"accept": {"label": "Fits", "keys": ["y"]}, "reject": {"label": "Does not fit", "keys": ["n"]}},
}


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("designed")


@pytest.fixture
def researcher(cast: Cast) -> Client:
    return logged_in(cast.researcher)


def _page_of_claim(cast: Cast, benchmark: Benchmark) -> str:
    worker = Worker.objects.get(user=cast.alice)
    assignment = assignment_claim_next(worker=worker, benchmark=benchmark)
    assert assignment is not None
    return logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()


def _form(design: dict[str, Any], *, examples: int = 3) -> dict[str, str]:
    """The design page's form fields for ``design`` (SWORDS: accept, reject, abstain in order)."""
    data = {
        "title": design.get("title", ""),
        "description": design.get("description", ""),
        "keywords": design.get("keywords", ""),
        "instructions": design.get("instructions", ""),
        "example-TOTAL_FORMS": str(examples),
        "example-INITIAL_FORMS": "0",
        "example-MIN_NUM_FORMS": "0",
        "example-MAX_NUM_FORMS": "1000",
    }
    if design.get("scheme_instructions", True):
        data["scheme_instructions"] = "on"
    for number, example in enumerate(design.get("examples", [])):
        for name, value in example.items():
            data[f"example-{number}-{name}"] = value
    for number, value in enumerate(("accept", "reject", "abstain"), start=1):
        choice = design.get("choices", {}).get(value, {})
        data[f"choice-{number}-label"] = choice.get("label", "")
        data[f"choice-{number}-keys"] = " ".join(choice.get("keys", []))
    return data


def test_the_design_page_saves_a_design_that_the_workers_page_shows_escaped(
    benchmark: Benchmark, cast: Cast, researcher: Client
) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    url = reverse("batch-design", args=[batch.pk])
    page = researcher.get(url).content.decode()
    assert 'id="batch-design-link"' not in page and "Preview as a worker" in page and "Nothing is locked yet" in page

    response = researcher.post(url, _form(DESIGN))
    assert response.status_code == 302, response.content.decode()[:2000]
    batch.refresh_from_db()
    assert (batch.title, batch.keywords) == (DESIGN["title"], DESIGN["keywords"])
    assert batch.design["choices"] == DESIGN["choices"]
    [entry] = Activity.objects.filter(kind=ActivityKind.SETTING_CHANGED, result__batch=batch.pk)
    assert entry.actor == cast.researcher and "task design of batch" in entry.summary

    html = _page_of_claim(cast, benchmark)
    assert "Read the text &lt;b&gt;first&lt;/b&gt;." in html and "<b>first</b>" not in html
    assert "<li>Judge the meaning here</li>" in html
    assert 'The <mark class="target">bank</mark> of the river was muddy.' in html
    assert "&lt;i&gt;" in html and "<i>" not in html
    assert 'value="accept" data-keys="y"' in html and 'data-label="Fits"' in html
    assert 'value="reject" data-keys="n"' in html and 'value="abstain" data-keys="3 s"' in html
    # The scheme's definitions now name the batch's labels; its instructions are still shown.
    assert '<dt class="accept choice-1">Fits</dt>' in html and "Examples and tips" in html


def test_the_page_names_each_refused_field_and_saves_nothing(benchmark: Benchmark, researcher: Client) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    bad = {**DESIGN, "choices": {"reject": {"keys": ["3"]}}}
    bad["examples"] = [{}, {"text": "A sentence.", "target": "bank"}]
    response = researcher.post(reverse("batch-design", args=[batch.pk]), _form(bad))
    html = response.content.decode()
    assert response.status_code == 200
    assert "&#x27;3&#x27; already chooses reject" in html
    # Named by the form's row, the blank row before it counted.
    assert "Example 2, target: &#x27;bank&#x27; is not a part of the example&#x27;s text" in html
    batch.refresh_from_db()
    assert batch.design == {} and batch.title != DESIGN["title"]


def test_the_scheme_instructions_may_be_hidden_and_the_definitions_stay(
    benchmark: Benchmark, cast: Cast, researcher: Client
) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    design = {"instructions": "Only ours.", "scheme_instructions": False}
    assert researcher.post(reverse("batch-design", args=[batch.pk]), _form(design)).status_code == 302
    html = _page_of_claim(cast, benchmark)
    assert "Only ours." in html and "Examples and tips" not in html
    assert html.count('id="definition-1"') == 1 and 'aria-describedby="definition-1"' in html


def test_a_published_crowd_batch_keeps_its_listing_and_a_worked_batch_keeps_its_keys(
    cast: Cast, researcher: Client
) -> None:
    batch = make_batch(name="published")
    publish_locally(batch)
    Batch.objects.filter(pk=batch.pk).update(external={**batch.external, "published_at": timezone.now().isoformat()})
    url = reverse("api-batch-design", args=[batch.pk])

    answer = researcher.get(url).json()
    assert answer["locked"] == ["title", "description", "keywords"]
    assert "Mechanical Turk shows its own copy" in answer["locked_reason"]
    refused = researcher.put(url, {"title": "A new title"}, content_type="application/json")
    assert refused.status_code == 400 and "title" in refused.json()
    # Instructions and labels may change after publishing; an unchanged title is no change.
    same = {"title": answer["design"]["title"], "instructions": "New words.", "choices": {"accept": {"label": "Ok"}}}
    assert researcher.put(url, same, content_type="application/json").status_code == 200

    hit = batch.hits.first()
    assert hit is not None
    Assignment.objects.create(
        hit=hit, worker=Worker.objects.get(user=cast.alice), claimed_at=timezone.now(), deadline=timezone.now()
    )
    answer = researcher.get(url).json()
    assert answer["locked"] == ["title", "description", "keywords", "keys"]
    refused = researcher.put(url, {"choices": {"accept": {"keys": ["y"]}}}, content_type="application/json")
    assert refused.status_code == 400 and "choices.accept.keys" in refused.json()
    page = researcher.get(reverse("batch-design", args=[batch.pk])).content.decode()
    assert "The keys: workers have already taken HITs" in page
    assert len(re.findall(r'<input[^>]*name="choice-\d-keys"[^>]*disabled', page)) == 3


def test_the_api_reads_and_replaces_a_batch_design_and_refuses_what_the_scheme_lacks(
    benchmark: Benchmark, researcher: Client, cast: Cast
) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=1)
    url = reverse("api-batch-design", args=[batch.pk])
    response = researcher.put(url, DESIGN, content_type="application/json")
    assert response.status_code == 200, response.json()
    answer = response.json()
    assert answer["design"]["choices"]["accept"] == {"label": "Fits", "keys": ["y"]}
    assert answer["design"]["examples"][0]["target"] == "bank"
    assert [choice["value"] for choice in answer["scheme_choices"]] == ["accept", "reject", "abstain"]
    assert answer["editable"] == {"choice_labels": True, "choice_keys": True}
    assert answer["preview_url"] == reverse("batch-worker-preview", args=[batch.pk])

    unknown = researcher.put(url, {"choices": {"maybe": {"label": "x"}}}, content_type="application/json")
    assert unknown.status_code == 400 and "choices.maybe" in unknown.json()
    shifted = researcher.put(url, {"choices": {"accept": {"keys": ["Y"]}}}, content_type="application/json")
    assert shifted.status_code == 400 and "needs Shift" in shifted.json()["choices.accept.keys"][0]
    assert logged_in(cast.alice).get(url).status_code == 403


@pytest.mark.parametrize("scheme_name", ["tsar", "sws"])
def test_a_batch_of_a_scheme_without_choices_takes_instructions_only(
    scheme_name: str, cast: Cast, researcher: Client
) -> None:
    from tests.scheme_benchmarks import scheme_benchmark

    _, batch = scheme_benchmark(scheme_name, cast)
    url = reverse("api-batch-design", args=[batch.pk])
    assert researcher.get(url).json()["editable"] == {"choice_labels": False, "choice_keys": False}
    refused = researcher.put(url, {"choices": {"x": {"label": "y"}}}, content_type="application/json")
    assert refused.status_code == 400 and "give instructions only" in refused.json()["choices"][0]
    assert researcher.put(url, {"instructions": "Una palabra."}, content_type="application/json").status_code == 200
    page = researcher.get(reverse("batch-worker-preview", args=[batch.pk])).content.decode()
    assert "Una palabra." in page and 'id="design-choices"' not in page


def test_new_batches_start_from_the_template_and_follow_ups_and_clones_take_their_parents(
    benchmark: Benchmark, researcher: Client, cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = {
        "title": "Template title",
        "instructions": "From the template.",
        "choices": {"accept": {"label": "Yes"}},
    }
    response = researcher.put(
        reverse("api-benchmark-design", args=[benchmark.name]), template, content_type="application/json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["editable"] == {"choice_labels": True, "choice_keys": True}

    # Step 1 (the generation task) takes the instructions; step 2 the choices too.
    first = hits_generate(benchmark=benchmark, step=1, seed=1)
    assert first.design == {"instructions": "From the template."} and first.title == "Template title"
    parent = hits_generate(benchmark=benchmark, step=2, seed=1, backend="mturk")
    assert parent.design == {"instructions": "From the template.", "choices": {"accept": {"label": "Yes"}}}

    # The parent's own design afterwards: its follow-up and its clone show what it shows.
    own = {"instructions": "The parent's.", "choices": {"accept": {"label": "Fits", "keys": ["y"]}}}
    researcher.put(reverse("api-batch-design", args=[parent.pk]), own, content_type="application/json")
    parent.refresh_from_db()
    Batch.objects.filter(pk=parent.pk).update(status=BatchStatus.CLOSED)
    clone = batch_clone(batch=parent, backend="local")
    assert clone.design == own and clone.title == parent.title
    Candidate.objects.filter(target__benchmark=benchmark).update(stage=CandidateStage.SCORE)
    monkeypatch.setattr("crowds.tasks.batch_publish_task.delay", lambda batch_id: None)
    sat = list(Target.objects.filter(benchmark=benchmark, word="sat").values_list("pk", flat=True))
    [child] = followup_batches_extend(benchmark=benchmark, step=3, targets=sat)
    assert child.parent in (parent, clone) and child.design == own

    # A follow-up without a parent (its earlier step imported) starts from the template.
    Batch.objects.filter(benchmark=benchmark).update(status=BatchStatus.CLOSED)
    HIT.objects.filter(batch__benchmark=benchmark).delete()
    orphan = followup_batches_extend(benchmark=benchmark, step=3, targets=sat)
    expected = {"instructions": "From the template.", "choices": template["choices"]}
    assert [batch.design for batch in orphan] == [expected]


def test_the_batch_form_says_where_the_design_comes_from_and_the_template_page_saves(
    benchmark: Benchmark, researcher: Client
) -> None:
    assert "task design template" in researcher.get(reverse("batch-list", args=[benchmark.name])).content.decode()
    url = reverse("design-template", args=[benchmark.name])
    assert researcher.post(url, _form({"instructions": "Template words."})).status_code == 302
    batch = hits_generate(benchmark=benchmark, step=2, seed=3)
    assert batch.design == {"instructions": "Template words."}
    assert "Template words." in researcher.get(url).content.decode()


def test_create_batch_takes_a_design_file_and_names_what_is_wrong_in_one(
    benchmark: Benchmark, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "design.json"
    good.write_text(json.dumps(DESIGN), encoding="utf-8")
    call_command("create_batch", benchmark.name, "--step", "2", "--seed", "1", "--design", str(good))
    batch = Batch.objects.get(pk=int(capsys.readouterr().out.strip().splitlines()[-1]))
    assert batch.title == DESIGN["title"] and batch.design["choices"] == DESIGN["choices"]

    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "title": "x",\n  "instructions": \n}', encoding="utf-8")
    with pytest.raises(CommandError, match=r"broken.json, line 4, column 1: not JSON"):
        call_command("create_batch", benchmark.name, "--step", "2", "--seed", "2", "--design", str(broken))
    clash = tmp_path / "clash.json"
    clash.write_text(json.dumps({"choices": {"accept": {"keys": ["2"]}}}), encoding="utf-8")
    with pytest.raises(CommandError, match=r"clash.json: choices.reject.keys: '2' already chooses accept"):
        call_command("create_batch", benchmark.name, "--step", "2", "--seed", "2", "--design", str(clash))
    assert Batch.objects.count() == 1


def _recorded() -> tuple[int, int, int, int]:
    models = (Assignment, AssignmentTelemetry, Label, Worker)
    counts = [model.objects.count() for model in models]  # type: ignore[attr-defined]
    return (counts[0], counts[1], counts[2], counts[3])


@pytest.mark.parametrize("backend", ["local", "mturk", "prolific"])
def test_the_preview_shows_the_crowds_page_before_and_after_publishing_and_records_nothing(
    backend: str, cast: Cast, researcher: Client
) -> None:
    batch = make_batch(name=f"preview-{backend}", backend=backend)
    Batch.objects.filter(pk=batch.pk).update(
        status=BatchStatus.OPEN if backend == "local" else BatchStatus.DRAFT,
        design={"instructions": "Preview words.", "choices": {"accept": {"label": "Fits", "keys": ["y"]}}},
    )
    url = reverse("batch-worker-preview", args=[batch.pk])
    before = _recorded()
    templates: dict[str, str] = {
        "local": "hits/assignment.html",
        "mturk": "crowds/mturk/hit.html",
        "prolific": "crowds/prolific/study.html",
    }

    unpublished = researcher.get(url)
    assert unpublished.status_code == 200
    assert templates[backend] in [template.name for template in unpublished.templates]
    html = unpublished.content.decode()
    assert "Preview words." in html and 'data-label="Fits"' in html and 'data-keys="y"' in html
    assert 'data-editable="0"' in html and 'id="hit-submit"' not in html and 'name="token"' not in html
    assert "This is a preview." in html and "Nothing here is recorded" in html
    assert 'id="public-preview"' not in html

    if backend == "mturk":
        publish_locally(batch)
    elif backend == "prolific":
        Batch.objects.filter(pk=batch.pk).update(external={"study_id": "5f" * 12})
    Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.OPEN)
    second = batch.hits.order_by("pk")[1]
    published = researcher.get(f"{url}?hit={second.pk}").content.decode()
    assert "student number 1 &lt;b&gt;solved&lt;/b&gt; it &amp; left." in published
    assert "HIT 2 of 2" in published and "Previous HIT" in published
    # Once published, the crowd's own preview is linked too (MTurk's in preview mode).
    assert ('id="public-preview"' in published) == (backend != "local")
    assert ("?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE" in published) == (backend == "mturk")
    assert researcher.post(url).status_code == 405
    assert _recorded() == before


def test_only_the_benchmarks_researchers_see_a_batch_preview_or_design(cast: Cast) -> None:
    batch = make_batch(name="private", backend="mturk")
    Batch.objects.filter(pk=batch.pk).update(status=BatchStatus.DRAFT)
    access_grant(benchmark=batch.benchmark, user=cast.researcher, role=Role.OWNER, by=None)
    stranger = make_user("stranger", researcher=True)
    viewer = make_user("viewer", researcher=True)
    access_grant(benchmark=batch.benchmark, user=viewer, role=Role.VIEWER, by=cast.researcher)
    for url in (reverse("batch-worker-preview", args=[batch.pk]), reverse("batch-design", args=[batch.pk])):
        assert logged_in(cast.researcher).get(url).status_code == 200
        assert logged_in(viewer).get(url).status_code == 200
        assert logged_in(stranger).get(url).status_code == 404
        assert logged_in(cast.alice).get(url).status_code == 403
        assert Client().get(url).status_code == 302
    # A viewer reads the design without a save button and may not change it.
    assert 'id="design-save"' not in logged_in(viewer).get(reverse("batch-design", args=[batch.pk])).content.decode()
    refused = logged_in(viewer).post(reverse("batch-design", args=[batch.pk]), _form({"instructions": "x"}))
    assert refused.status_code == 403


def test_a_batch_created_through_the_api_takes_the_design_given_with_it(
    benchmark: Benchmark, researcher: Client
) -> None:
    url = reverse("api-batch-list")
    body = {"benchmark": benchmark.name, "step": 2, "seed": 1}
    clash = researcher.post(
        url, {**body, "design": {"choices": {"accept": {"keys": ["2"]}}}}, content_type="application/json"
    )
    assert clash.status_code == 400 and "design.choices.reject.keys" in clash.json()
    assert not Batch.objects.exists()
    # The cost preview takes the same body; what workers read costs nothing.
    preview = researcher.post(reverse("api-batch-preview"), {**body, "design": DESIGN}, content_type="application/json")
    assert preview.status_code == 200
    made = researcher.post(url, {**body, "design": DESIGN}, content_type="application/json")
    assert made.status_code == 201, made.json()
    batch = Batch.objects.get()
    assert (batch.title, batch.design["choices"]) == (DESIGN["title"], DESIGN["choices"])
    assert batch.design["instructions"] == DESIGN["instructions"]
