"""The count of a benchmark's valid labels that decides whether a format downloads directly
(``analysis.selectors.benchmark_valid_label_count``: each target's candidates' tallies, kept per
target) equals a fresh count of ``benchmark_valid_labels`` after any sequence of claims, submits,
returns, expiries, refreshes that filter work, blocks, exclusions, closes and reopens, for a
benchmark of every scheme; after a submit only its target is summed again; and the exports page
offers a direct download by that count."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from analysis import selectors as analysis_selectors
from analysis.api.exports import direct_export_allowed
from analysis.selectors import benchmark_valid_label_count, benchmark_valid_labels
from annotation import changes as kept_figures
from annotation.changes import benchmark_changed
from annotation.models import Worker
from annotation.warm import benchmark_figures_warm
from hits.models import HIT, HITItem
from hits.services import assignment_claim_next, assignment_submit
from schemes import get_scheme
from tests.base import Cast
from tests.hits.test_kept_shares import _RandomChanges
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, scheme_answer, scheme_benchmark

pytestmark = pytest.mark.django_db

FORMAT = "swords"


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[list[int] | None]:
    computed: list[list[int] | None] = []
    counted = analysis_selectors._valid_labels_by_target

    def recording(benchmark: Any, target_ids: list[int] | None) -> dict[int, int]:
        computed.append(target_ids)
        return counted(benchmark, target_ids)

    monkeypatch.setattr(analysis_selectors, "_valid_labels_by_target", recording)
    return computed


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_after_any_sequence_of_changes_the_kept_count_equals_a_fresh_count(
    cast: Cast, scheme_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    computed = _recording(monkeypatch)
    # Buckets of two targets: the benchmark's targets sit in several, as at full size.
    monkeypatch.setattr(kept_figures, "BUCKET_TARGETS", 2)
    world = _RandomChanges(cast, scheme_name, f"valid-{scheme_name}")
    benchmark = world.benchmark

    seen: set[int] = set()

    def check() -> None:
        fresh = benchmark_valid_labels(benchmark=benchmark).count()
        assert benchmark_valid_label_count(benchmark=benchmark) == fresh
        seen.add(fresh)

    check()
    world.run(world.every_change(), check)
    if get_scheme(benchmark).judges_candidates:  # a scheme of suggestions writes no candidate label
        assert len(seen) > 3, "the count moved up and down through the sequence"
    assert any(target_ids for target_ids in computed), "some reads summed only the targets changed"


def test_after_a_submit_only_its_target_is_summed_again(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    computed = _recording(monkeypatch)
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(4))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    before = benchmark_valid_label_count(benchmark=benchmark)
    assert computed == [None]
    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
    assert assignment is not None
    items = list(HITItem.objects.filter(hit_id=assignment.hit_id))
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})
    after = benchmark_valid_label_count(benchmark=benchmark)
    assert computed[-1] == [HIT.objects.get(pk=assignment.hit_id).target_id]
    assert after == benchmark_valid_labels(benchmark=benchmark).count() > before


def test_the_exports_page_offers_direct_downloads_by_the_kept_count(cast: Cast, settings: Any) -> None:
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(3))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.bob), benchmark=benchmark)
    assert assignment is not None
    items = list(HITItem.objects.filter(hit_id=assignment.hit_id))
    assignment_submit(assignment=assignment, answers={item.pk: scheme_answer("swords", item) for item in items})
    labels = benchmark_valid_labels(benchmark=benchmark).count()
    assert labels > 0
    client = Client()
    client.force_login(cast.researcher)
    url = reverse("analysis-exports", kwargs={"name": benchmark.name})
    for limit, allowed in ((labels, True), (labels - 1, False)):
        settings.ANALYSIS_DIRECT_EXPORT_MAX_LABELS = limit
        assert direct_export_allowed(benchmark=benchmark, format=FORMAT) is allowed
        page = client.get(url).content.decode()
        assert ("too large: create an export job" in page) is not allowed


def test_after_a_change_and_its_warm_the_exports_page_sums_nothing(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    sentences = tuple(f"The cat sat on mat number {index} all afternoon." for index in range(3))
    benchmark, _ = scheme_benchmark("swords", cast, sentences=sentences)
    computed = _recording(monkeypatch)
    benchmark_changed(benchmark_id=benchmark.pk)
    assert not benchmark_figures_warm(benchmark=benchmark).failed
    assert computed == [None], "the warm summed every target once"
    client = Client()
    client.force_login(cast.researcher)
    assert client.get(reverse("analysis-exports", kwargs={"name": benchmark.name})).status_code == 200
    assert computed == [None], "the page read the warmed count"
