"""What the annotator's page is given: an assignment's addresses as ``reverse`` spells them under any
script prefix, and every name its template reads (docs/design.md §4, "The page's fixed parts")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.template import base as template_base
from django.test import override_settings
from django.urls import clear_script_prefix, get_script_prefix, reverse, set_script_prefix

from annotation.models import Worker
from hits.services import assignment_claim_next
from hits.views import annotator
from hits.views.annotator import assignment_url
from tests.base import Cast, logged_in
from tests.hits.factories import make_benchmark, make_hits

ROUTES = ("work-assignment", "work-flag", "work-return", "api-work-draft")


@pytest.fixture
def script_prefix() -> Iterator[None]:
    kept = get_script_prefix()
    yield
    clear_script_prefix()
    set_script_prefix(kept)


@pytest.mark.usefixtures("script_prefix")
def test_an_assignments_addresses_are_reverses_under_each_script_prefix() -> None:
    for prefix in ("/", "/crowdlex/", "/other/path/", "/"):
        set_script_prefix(prefix)
        for name in ROUTES:
            for assignment_id in (1, 7, 12345, 987654321987654322):
                assert assignment_url(name, assignment_id) == reverse(name, args=[assignment_id])


def test_the_addresses_kept_are_bounded_by_the_setting() -> None:
    with override_settings(WORK_PAGE_FRAGMENTS_KEPT=2):
        for name in ROUTES:
            assert assignment_url(name, 3) == reverse(name, args=[3])
            assert len(annotator._ASSIGNMENT_URLS) <= 2
        assert assignment_url(ROUTES[0], 4) == reverse(ROUTES[0], args=[4])


@pytest.mark.django_db
def test_the_page_reads_no_name_its_context_lacks(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name the template reads and the context lacks is an exception caught inside the template
    engine, each time the page is rendered: the page's context names them all."""
    make_hits(make_benchmark(), 2)
    assignment = assignment_claim_next(worker=Worker.objects.get(user=cast.alice))
    assert assignment is not None
    client = logged_in(cast.alice)
    lacking: list[str] = []
    resolve = template_base.Variable._resolve_lookup  # type: ignore[attr-defined]

    def recorded(variable: template_base.Variable, context: Any) -> Any:
        try:
            return resolve(variable, context)
        except template_base.VariableDoesNotExist:
            lacking.append(str(variable.var))
            raise

    monkeypatch.setattr(template_base.Variable, "_resolve_lookup", recorded)
    response = client.get(reverse("work-assignment", args=[assignment.pk]))
    assert response.status_code == 200
    assert 'id="hit-flag-form"' in response.content.decode()
    assert lacking == []
