"""Every benchmark-scoped researcher page and API of the review, analysis and hits rooms, for every
registered scheme, with every setting of the scheme moved from its default: each answers 200, or
the documented 404 of a page the scheme does not offer (and the benchmark page then never links
it), or 405 for an action that only takes a POST.

The list of URLs is read from the URL resolver, so a page added later is covered without a change
here; each benchmark holds targets, candidates where the scheme has them, a batch of its first step
and one submitted assignment, so pages show collected work and not only empty tables.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from analysis.evaluation import scheme_evaluator
from analysis.exports import DATASET, export_formats
from analysis.figures import offers_evaluation, scheme_figures
from annotation.models import Benchmark
from schemes import get_scheme
from schemes.base import scheme_qualification
from tests.base import Cast
from tests.scheme_benchmarks import BENCHMARK_SCHEMES, moved_settings, scheme_benchmark
from tests.schemes.toy import TOY, toy_scheme

pytestmark = pytest.mark.django_db

# The rooms whose researcher pages and APIs are walked; the annotator's routes (``work/``) are not
# researcher pages even where they take a benchmark's name (the qualification test to take).
# A scheme's own pages are served from its package (its analysis plug-in), so "schemes" is walked too.
ROOMS = ("review", "analysis", "hits", "schemes")
ANNOTATOR_PREFIXES = ("work/", "api/work/")
# Actions that take a POST only: a GET is refused with 405, never run.
POST_ONLY = {
    "activity-undo",
    "analysis-evaluation-judge",
    "analysis-evaluation-rescore",
    "adjudication-apply",
    "adjudication-decide",
    "adjudication-resolve",
    "analysis-reannotation",
    "benchmark-webhook-secret",
    "data-view-delete",
    "data-view-rename",
    "data-view-save",
    "api-benchmark-evaluation-rescore",
    "api-benchmark-reannotation",
    "api-pipeline-refresh",
    "pipeline-refresh",
    "pipeline-review-settings",
    "pipeline-flag-clear",
    "pipeline-worker-block",
    "pipeline-worker-unblock",
    "qualification-active",
    "qualification-build",
    "qualification-reset",
}
# Pages a scheme offers only for its own figures (docs/analysis.md): 404 for any other scheme.
SCHEME_PAGES = {
    "analysis-sws-suggestions": {"sws"},
    "api-benchmark-suggestions": {"sws"},
}
# The qualification test's API answers 404 for a benchmark without a test (its schema says so);
# these benchmarks have none.
WITHOUT_A_TEST = {"api-qualification", "api-qualification-attempts"}
# The dataset folder is written by an export job, never streamed from a request: 409 (docs/api.md).
JOB_ONLY_FORMATS = {DATASET}
# Pages a scheme offers only when it declares what they need (docs/architecture.md, "How to add a
# scheme"): the system evaluation when its figures declare it, the filter audit when a reduce step
# moves its targets on to a follow-up step. Another scheme gets 404, and no link to them.
EVALUATION_PAGES = {"analysis-evaluation", "api-benchmark-evaluations"}
AUDIT_PAGES = {"api-benchmark-filter-audit"}
# The complete evaluations, where the scheme's evaluation judges unscored substitutes (docs/evaluation.md).
JUDGING_PAGES = {"api-benchmark-evaluation-judgements"}
# The proposals of the generation task, for a scheme one of whose steps that task runs.
PROPOSALS_PAGES = {"analysis-proposals", "api-benchmark-proposals"}
# The qualification test's page, for a scheme that offers a test (docs/qualification.md).
QUALIFICATION_PAGES = {"qualification-detail"}
# Which source pays off, for a scheme whose figures say how its candidates are judged one by one
# (docs/design.md §14).
SOURCE_YIELD_PAGES = {"api-benchmark-source-yield"}
# The data browser's front page sends the researcher on to its first table (docs/analysis.md).
REDIRECTS = {"data-browser"}


@dataclasses.dataclass(frozen=True)
class Route:
    name: str
    route: str
    room: str

    def url(self, benchmark: str, **values: Any) -> str:
        """The route with the benchmark's name and ``values`` (ids, formats) put in its converters."""

        def value(match: re.Match[str]) -> str:
            key = match.group(2)
            return benchmark if key == "name" else str(values.get(key, 1))

        return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, self.route)


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def benchmark_routes() -> list[Route]:
    """Every pattern of the review, analysis and hits URL confs (pages and APIs) that takes a benchmark's name."""
    found = []
    for route, pattern in _walk(get_resolver().url_patterns):
        view = getattr(pattern.callback, "view_class", pattern.callback)
        room = view.__module__.split(".")[0]
        if "<slug:name>" in route and room in ROOMS and not route.startswith(ANNOTATOR_PREFIXES):
            found.append(Route(name=str(pattern.name), route=route, room=room))
    return sorted(found, key=lambda found_route: found_route.name)


ROUTES = benchmark_routes()


def make_benchmark(scheme_name: str, cast: Cast) -> Benchmark:
    scheme = get_scheme(scheme_name)
    benchmark, _ = scheme_benchmark(scheme_name, cast, settings=moved_settings(scheme.settings_type))
    return benchmark


@pytest.fixture(autouse=True)
def toy() -> Iterator[None]:
    with toy_scheme():
        yield


# Every scheme a benchmark may take (a scheme that only runs another's step, the generation task,
# has no benchmarks of its own), and the toy scheme of the tests.
SCHEMES = sorted({*BENCHMARK_SCHEMES, TOY})


def _offered(benchmark: Benchmark, route: Route) -> bool:
    """Whether the benchmark's scheme offers the page of ``route`` (the pages above that depend on it)."""
    offered = SCHEME_PAGES.get(route.name)
    if offered is not None:
        return benchmark.scheme in offered
    if route.name in EVALUATION_PAGES:
        return offers_evaluation(benchmark)
    if route.name in JUDGING_PAGES:
        evaluator = scheme_evaluator(benchmark)
        return evaluator is not None and evaluator.judges_unscored
    if route.name in AUDIT_PAGES:
        return get_scheme(benchmark).followup_step is not None
    if route.name in PROPOSALS_PAGES:
        return any(step.scheme == "generation" for step in get_scheme(benchmark).steps)
    if route.name in QUALIFICATION_PAGES:
        return scheme_qualification(get_scheme(benchmark)) is not None
    if route.name in SOURCE_YIELD_PAGES:
        return scheme_figures(benchmark).source_categories is not None
    return True


def _expected(benchmark: Benchmark, route: Route) -> int:
    if route.name in POST_ONLY:
        return 405
    if route.name in WITHOUT_A_TEST:
        return 404
    if route.name in REDIRECTS:
        return 302
    return 200 if _offered(benchmark, route) else 404


def _cases() -> list[Any]:
    return [
        pytest.param(scheme_name, route, id=f"{scheme_name}-{route.name}")
        for scheme_name, route in itertools.product(SCHEMES, ROUTES)
    ]


def _urls(client: Client, benchmark: Benchmark, route: Route, expected: int) -> dict[str, int]:
    """The URLs of one route for the benchmark, each with the status it must answer: one per export
    format that fits its scheme and per plot (and file type) it lists; placeholder ids for an action."""
    if "<str:format>" in route.route or "<str:export_format>" in route.route:
        formats = [found.name for found in export_formats(benchmark)]
        assert formats, "every scheme exports something"
        return {
            route.url(benchmark.name, format=name, export_format=name): 409 if name in JOB_ONLY_FORMATS else expected
            for name in formats
        }
    if "<slug:plot>" in route.route:
        listed = client.get(f"/api/benchmarks/{benchmark.name}/plots").json()
        rows = listed["results"] if isinstance(listed, dict) else listed
        return {
            route.url(benchmark.name, plot=row["name"], file_type=file_type): expected
            for row in rows
            for file_type in row
            if file_type != "name"
        }
    if "<int:target_id>" in route.route:
        # An item of the benchmark (the adjudication pages).
        return {route.url(benchmark.name, target_id=benchmark.targets.order_by("pk").first().pk): expected}  # type: ignore[union-attr]
    return {route.url(benchmark.name): expected}


def test_the_walk_finds_the_pages_and_apis_of_each_room() -> None:
    names = {route.name for route in ROUTES}
    assert {"pipeline-progress", "api-pipeline-progress", "pipeline-workers", "target-list", "batch-list"} <= names
    assert {route.room for route in ROUTES} == set(ROOMS)
    assert not {"qualification-take", "api-work-qualification"} & names
    listed = POST_ONLY | set(SCHEME_PAGES) | WITHOUT_A_TEST | EVALUATION_PAGES | AUDIT_PAGES | PROPOSALS_PAGES
    listed |= QUALIFICATION_PAGES | JUDGING_PAGES | SOURCE_YIELD_PAGES | REDIRECTS
    assert listed <= names, "the lists above name routes that exist"


@pytest.mark.parametrize(("scheme_name", "route"), _cases())
def test_every_researcher_url_answers_for_every_scheme_with_its_settings_moved(
    scheme_name: str, route: Route, cast: Cast
) -> None:
    benchmark = make_benchmark(scheme_name, cast)
    client = Client(raise_request_exception=False)
    client.force_login(cast.researcher)
    expected = _expected(benchmark, route)
    urls = _urls(client, benchmark, route, expected)
    answers = {url: client.get(url).status_code for url in urls}
    assert answers == urls
    if not _offered(benchmark, route):
        page = client.get(f"/benchmarks/{benchmark.name}/").content.decode()
        assert route.url(benchmark.name) not in page, "the benchmark page links a page its scheme does not offer"
