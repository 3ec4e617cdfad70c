"""The benchmark and pipeline pages' empty target search form, kept as rendered per process by what
it shows (analysis.templatetags.analysis_tags.target_search, docs/design.md §7 "Kept widgets"): it is
the form its template renders, for a benchmark of every scheme, and follows a new name at once."""

from __future__ import annotations

from typing import Any

import pytest
from django.template import Context, Template
from django.template.loader import render_to_string

from analysis.forms import TargetSearchForm
from analysis.templatetags import analysis_tags
from annotation.models import Benchmark
from tests.scheme_benchmarks import BENCHMARK_SCHEMES

pytestmark = pytest.mark.django_db


def _tag(benchmark: Benchmark) -> str:
    return Template("{% load analysis_tags %}{% target_search benchmark %}").render(Context({"benchmark": benchmark}))


def _rendered(benchmark: Benchmark) -> str:
    context = {"benchmark": benchmark, "form": TargetSearchForm(benchmark=benchmark)}
    return render_to_string("analysis/_target_search.html", context)


@pytest.mark.parametrize("scheme_name", BENCHMARK_SCHEMES)
def test_the_kept_form_is_the_form_its_template_renders(scheme_name: str) -> None:
    analysis_tags._SEARCH_FORMS.clear()
    benchmark = Benchmark.objects.create(name=f"search-{scheme_name}", scheme=scheme_name)
    assert _tag(benchmark) == _rendered(benchmark)
    assert _tag(benchmark) == _rendered(benchmark), "kept, the same"
    assert len(analysis_tags._SEARCH_FORMS) == 1

    benchmark.name = f"renamed-{scheme_name}"
    benchmark.save()
    assert _tag(benchmark) == _rendered(benchmark)
    assert f'action="/benchmarks/renamed-{scheme_name}/targets/"' in _tag(benchmark)


def test_past_its_limit_the_kept_forms_are_forgotten_and_none_kept_at_zero(settings: Any) -> None:
    analysis_tags._SEARCH_FORMS.clear()
    settings.TARGET_SEARCH_FORMS_KEPT = 2
    benchmarks = [Benchmark.objects.create(name=f"limit-{number}", scheme="swords") for number in range(5)]
    for benchmark in benchmarks:
        assert _tag(benchmark) == _rendered(benchmark)
        assert len(analysis_tags._SEARCH_FORMS) <= 2
    settings.TARGET_SEARCH_FORMS_KEPT = 0
    analysis_tags._SEARCH_FORMS.clear()
    assert _tag(benchmarks[0]) == _rendered(benchmarks[0])
    assert analysis_tags._SEARCH_FORMS == {}
