"""The researcher's pages, read from the URL resolver, and their URLs for one benchmark.

Shared by the tests that walk every researcher page (the statement counts, the phone walk) and by
``bench.pages``, which times the same pages: a page added later is pinned, walked and measured
without a change to any of them. Every id a URL takes is one of the walked benchmark's own rows
(``benchmark_ids``), never a placeholder that exists only when other tests have advanced the
sequences.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

ROOMS = {"annotation", "hits", "crowds", "review", "analysis", "schemes"}
# Annotators' pages and the crowds' public pages have their own checks
# (tests/hits/test_annotator_accessibility_browser.py); these are the researchers'.
NOT_RESEARCHER = ("api/", "work/", "mturk/", "prolific/", "^mturk/", "^prolific/", "accounts/", "admin/", "docs/")
# A converter's value no row ever takes: a route whose id the walk does not know answers 404 or 405.
UNKNOWN = "0"


def _walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    from django.urls import URLResolver

    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern), pattern


def researcher_routes() -> list[tuple[str, str]]:
    """(name, route) of every page pattern of the rooms a researcher reads."""
    from django.urls import get_resolver

    found = []
    for route, pattern in _walk(get_resolver().url_patterns):
        view = getattr(pattern.callback, "view_class", pattern.callback)
        if view.__module__.split(".")[0] in ROOMS and not route.startswith(NOT_RESEARCHER) and pattern.name:
            found.append((pattern.name, route))
    return sorted(found)


def route_url(route: str, ids: Mapping[str, object]) -> str:
    """The URL of ``route`` with each ``<converter:key>`` filled from ``ids``: first by the route's first
    segment and the key (``"batches/pk"``, ``"exports/job_id"``: the same key names different rows
    under different prefixes), then by the key alone (``"name"``, ``"target_id"``), else ``UNKNOWN``."""
    first = route.split("/", 1)[0]

    def value(match: re.Match[str]) -> str:
        key = match.group(2)
        return str(ids.get(f"{first}/{key}", ids.get(key, UNKNOWN)))

    return "/" + re.sub(r"<(?:(\w+):)?(\w+)>", value, route)


def researcher_urls(ids: Mapping[str, object]) -> dict[str, str]:
    """Route name → URL of every researcher page for the benchmark whose ids these are (``benchmark_ids``),
    and the live poll's batches part."""
    urls = {name: route_url(route, ids) for name, route in researcher_routes()}
    urls["benchmark-live?part=batches"] = f"/benchmarks/{ids['name']}/live/?part=batches"
    return urls


def benchmark_ids(benchmark: Any, *, batch: Any = None) -> dict[str, Any]:
    """The ids the researcher pages of ``benchmark`` take, each from the benchmark's own rows (its
    first batch unless ``batch`` is given, that batch's first HIT, its first target and candidate, a
    target with submitted work for the adjudication item, its latest import and export jobs, its
    latest activity entry, a submitted assignment and its worker); a key whose row the benchmark lacks
    is left out."""
    from analysis.exports import export_formats
    from analysis.models import ExportJob
    from annotation.models import Activity, Candidate, ImportJob, Target
    from hits.models import HIT, Assignment, Batch

    if batch is None:
        batch = Batch.objects.filter(benchmark=benchmark).order_by("pk").first()
    submitted = (
        Assignment.objects.filter(hit__batch__benchmark=benchmark, submitted_at__isnull=False).order_by("pk").first()
    )
    found: dict[str, object | None] = {
        "name": benchmark.name,
        "batches/pk": batch.pk if batch else None,
        "batch_id": batch.pk if batch else None,
        "hits/pk": HIT.objects.filter(batch=batch).order_by("pk").values_list("pk", flat=True).first(),
        "targets/pk": Target.objects.filter(benchmark=benchmark).order_by("pk").values_list("pk", flat=True).first(),
        "candidates/pk": Candidate.objects.filter(target__benchmark=benchmark)
        .order_by("pk")
        .values_list("pk", flat=True)
        .first(),
        "target_id": Target.objects.filter(benchmark=benchmark, hits__assignments__submitted_at__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
        .first(),
        "job_id": ImportJob.objects.filter(benchmark=benchmark).order_by("-pk").values_list("pk", flat=True).first(),
        "exports/job_id": ExportJob.objects.filter(benchmark=benchmark)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first(),
        "activity_id": Activity.objects.filter(benchmark=benchmark)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first(),
        "assignment_id": submitted.pk if submitted else None,
        "worker_id": submitted.worker_id if submitted else None,
        "format": export_formats(benchmark)[0].name,
    }
    return {key: value for key, value in found.items() if value is not None}
