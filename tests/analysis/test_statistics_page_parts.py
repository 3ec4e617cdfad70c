"""The statistics page's figures kept for a change (the scheme's, the interactions and the source
yield, one entry: analysis.statistics_page.statistics_page_context) and its parts drawn from the figures
computed in the background (SWORDS's agreement, workers, pairs of workers and filter audit, rendered
when those are computed: schemes.swords.figures.background_context), docs/design.md §7 "Rendered
fragments": after each kind of change that should show, the page shows it, and the parts shown as
kept are byte for byte those the page renders itself."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from django.utils import translation

import schemes.swords.figures as swords_figures
from analysis.background import background_cache_key, background_figures_refresh
from analysis.services import benchmark_source_yield
from annotation.changes import benchmark_changed
from annotation.models import Benchmark, Worker
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit
from review.selectors import interaction_summary
from schemes.swords.figures import AGREEMENT_FIGURES
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.review.builders import make_benchmark, simulated, step2_batch, work_once
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db


def _answers(rng: random.Random, *, controls_right: bool = True) -> Callable[[HITItem], str]:
    def answer(item: HITItem) -> str:
        if item.kind == ItemKind.CONTROL_TARGET:
            return "accept" if controls_right else "reject"
        if item.kind == ItemKind.CONTROL_DISTRACTOR:
            return "reject" if controls_right else "accept"
        return rng.choice(["accept", "accept", "reject", "abstain"])

    return answer


def _body(response: Any) -> bytes:
    """The page without its form's token, which differs from one request to the next."""
    assert response.status_code == 200
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", response.content)


def _kept_and_rendered(client: Client, url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, bytes]:
    """The page as served (its response), and the same page with every part rendered by the page
    itself: no part kept with the background figures matches what it shows."""
    kept = client.get(url)
    with monkeypatch.context() as patch:
        patch.setattr(swords_figures, "_shown_as", lambda benchmark, threshold: ("rendered by the page",))
        rendered = _body(client.get(url))
    assert _body(kept) == rendered, "the parts shown as kept are those the page renders"
    return kept, rendered


def _kept_parts_shown(response: Any) -> bool:
    return response.context["agreement_html"] is not None and response.context["workers_html"] is not None


def test_the_parts_drawn_from_the_background_figures_follow_every_change(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    benchmark = make_benchmark(targets=3, candidates=6, created_by=cast.researcher)
    step2_batch(benchmark)
    for number in range(3):
        work_once(simulated(f"early-{number}"), benchmark, _answers(random.Random(number)))
    client.force_login(cast.researcher)
    url = reverse("analysis-statistics", args=[benchmark.name])

    first, first_body = _kept_and_rendered(client, url, monkeypatch)
    assert _kept_parts_shown(first), "rendered with the figures, shown as kept"
    assert b"early-0" in first_body

    # A submit: the figures of the background are older than the benchmark until their task runs;
    # the page shows them as last computed, with the parts kept with them.
    work_once(simulated("later"), benchmark, _answers(random.Random(9), controls_right=False))
    with django_capture_on_commit_callbacks():
        stale, stale_body = _kept_and_rendered(client, url, monkeypatch)
    assert _kept_parts_shown(stale)
    assert b"being computed again" in stale_body
    assert b"later" not in stale_body, "the workers as last computed"

    background_figures_refresh(benchmark_id=benchmark.pk, name=AGREEMENT_FIGURES)
    current, current_body = _kept_and_rendered(client, url, monkeypatch)
    assert _kept_parts_shown(current)
    assert b"being computed again" not in current_body
    assert b"later" in current_body, "the new worker, once the task brought the figures up to date"

    # A setting the workers' part shows (the control accuracy they are marked and plotted under):
    # the kept parts were rendered under the old one, so the page renders its own at once.
    threshold = swords_figures.settings_of(benchmark).min_control_accuracy
    Benchmark.objects.filter(pk=benchmark.pk).update(
        scheme_settings={**benchmark.scheme_settings, "min_control_accuracy": threshold / 2}
    )
    benchmark_changed(benchmark_id=benchmark.pk)
    with django_capture_on_commit_callbacks():
        moved, moved_body = _kept_and_rendered(client, url, monkeypatch)
    assert not _kept_parts_shown(moved), "parts rendered under another threshold are not shown"
    assert moved_body != current_body
    background_figures_refresh(benchmark_id=benchmark.pk, name=AGREEMENT_FIGURES)
    again, _ = _kept_and_rendered(client, url, monkeypatch)
    assert _kept_parts_shown(again), "kept again once computed under the new threshold"

    # Each worker's reliability, asked for: the workers' part is rendered with it.
    reliability = client.get(f"{url}?reliability=1")
    assert reliability.context["agreement_html"] is not None
    assert b"reliability (Dawid-Skene)" in _body(reliability)

    # A new name: the parts' links name the benchmark.
    Benchmark.objects.filter(pk=benchmark.pk).update(name=f"{benchmark.name}-renamed")
    renamed_url = reverse("analysis-statistics", args=[f"{benchmark.name}-renamed"])
    renamed, renamed_body = _kept_and_rendered(client, renamed_url, monkeypatch)
    assert not _kept_parts_shown(renamed)
    assert f"/benchmarks/{benchmark.name}/plots/".encode() not in renamed_body


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_interactions_and_source_yield_kept_with_the_page_follow_each_submit(
    scheme_name: str, cast: Cast, client: Client
) -> None:
    benchmark, _ = scheme_benchmark(scheme_name, cast)
    client.force_login(cast.researcher)
    url = reverse("analysis-statistics", args=[benchmark.name])
    before = client.get(url)
    assert before.status_code == 200
    assert before.context["interaction"] == interaction_summary(benchmark=benchmark)
    for user in (cast.bob, cast.carol, cast.alice):
        assignment = assignment_claim_next(worker=Worker.objects.get(user=user), benchmark=benchmark)
        if assignment is not None:
            break
    else:
        raise AssertionError(f"{scheme_name}: a HIT is left to submit")
    items = HITItem.objects.filter(hit_id=assignment.hit_id)
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer(scheme_name, item) for item in items})
    after = client.get(url)
    assert after.context["interaction"] == interaction_summary(benchmark=benchmark)
    assert after.context["interaction"]["assignments"] == before.context["interaction"]["assignments"] + 1
    assert after.context["source_yield"] == benchmark_source_yield(benchmark=benchmark)
    shown = f"Of {after.context['interaction']['assignments']} submitted assignments"
    assert shown.encode() in after.content


def test_the_parts_kept_with_the_background_figures_are_found_by_what_they_show(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parts rendered with the background figures are kept under the values they were rendered
    as (the benchmark's name, the language, the separation of thousands, the script prefix, the
    control accuracy): the page looks them up by its own, so parts kept under any other values are
    never shown, and those under its own are shown as they are."""
    benchmark = make_benchmark(targets=3, candidates=6, created_by=cast.researcher)
    step2_batch(benchmark)
    work_once(simulated("early"), benchmark, _answers(random.Random(1)))
    background_figures_refresh(benchmark_id=benchmark.pk, name=AGREEMENT_FIGURES)
    client.force_login(cast.researcher)
    url = reverse("analysis-statistics", args=[benchmark.name])
    key = background_cache_key(benchmark.pk, AGREEMENT_FIGURES)
    found_key, value, computed_at = cache.get(key)
    threshold = swords_figures.settings_of(benchmark).min_control_accuracy
    with translation.override(settings.LANGUAGE_CODE):
        own = swords_figures._shown_as(benchmark, threshold)
    assert list(value["shown_by"]) == [own], "kept under the values they were rendered as"

    def kept_under(values: tuple[object, ...]) -> bytes:
        marked = {"agreement": "<p>kept-agreement-part</p>", "workers": "<p>kept-workers-part</p>"}
        cache.set(key, (found_key, {**value, "shown_by": {values: marked}}, computed_at))
        return _body(client.get(url))

    assert b"kept-agreement-part" in kept_under(own) and b"kept-workers-part" in kept_under(own)
    for other in (
        (f"{benchmark.name}-other", *own[1:]),
        (own[0], "xx", *own[2:]),
        (*own[:2], not own[2], *own[3:]),
        (*own[:3], "/elsewhere/", own[4]),
        (*own[:4], threshold / 2),
    ):
        body = kept_under(other)
        assert b"kept-agreement-part" not in body and b"kept-workers-part" not in body, other
        assert b"early" in body, "rendered by the page instead"
