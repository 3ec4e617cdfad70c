"""The review room's figures brought up to date right after a change (``annotation.warm``,
docs/design.md §7, "Figures warmed after a change"): the pipeline's progress with its first page of
target rows, its page's first fragments as each role reads them, and the live poll's answers, read
through the functions the pages call."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from annotation.fragments import fragments_rendered_as
from annotation.models import Benchmark, BenchmarkMember, Role
from annotation.warm import register_figures_warmer
from review.selectors import TARGET_ROWS_CHUNK, pipeline_progress
from review.views import LIVE_PARTS, PIPELINE_TEMPLATE, live_body, pipeline_context


def pipeline_warm(benchmark: Benchmark) -> None:
    """The pipeline's summary (the benchmark page, the live poll) and the rows of the pipeline page's
    first page of targets."""
    progress = pipeline_progress(benchmark=benchmark)
    list(progress.targets[:TARGET_ROWS_CHUNK])


def pipeline_page_warm(benchmark: Benchmark) -> None:
    """The pipeline page's fragments (its heading, figures and first 200 target rows) rendered as its
    first reader of each role the benchmark's readers hold finds them: the page as it is first
    opened (no query), in the site's language. What is the reader's own (the form's CSRF token,
    messages, the account) is outside the fragments and rendered for each reader
    (annotation.fragments)."""
    path = reverse("pipeline-progress", args=[benchmark.name])
    # The roles its readers hold: an owner's (a superuser's, every researcher's where nobody owns it)
    # and its members'.
    roles = {Role.OWNER, *map(Role, BenchmarkMember.objects.filter(benchmark=benchmark).values_list("role", flat=True))}
    with translation.override(settings.LANGUAGE_CODE):
        for role in sorted(roles):
            request = HttpRequest()
            request.method, request.path, request.path_info = "GET", path, path
            request.user = AnonymousUser()
            fragments_rendered_as(request, role)
            render_to_string(PIPELINE_TEMPLATE, pipeline_context(request, benchmark), request=request)


def live_warm(benchmark: Benchmark) -> None:
    """The live poll's answer, alone and with each part the pages ask for."""
    live_body(benchmark=benchmark, parts=[])
    for part in sorted(LIVE_PARTS):
        live_body(benchmark=benchmark, parts=[part])


register_figures_warmer("pipeline", pipeline_warm)
register_figures_warmer("pipeline-page", pipeline_page_warm)
register_figures_warmer("live", live_warm)
