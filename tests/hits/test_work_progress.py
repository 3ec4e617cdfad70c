"""The HITs done a HIT's page shows (docs/design.md §4), and the bounds of what the page keeps in
memory (docs/design.md §4, "The page's fixed parts")."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.template import Context, Template
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from annotation.models import Worker
from hits import selectors
from hits.models import SUBMITTED_STATUSES, Assignment, AssignmentStatus
from hits.selectors import annotator as annotator_selectors
from hits.services import assignment_claim_next, assignment_return, assignment_submit, assignments_expire_overdue
from hits.templatetags.work_page import kept_fragments_clear
from schemes import get_scheme
from schemes.templatetags import choice_tags
from tests.base import Cast, logged_in
from tests.hits.factories import honest_answers, make_batch, make_benchmark, make_hits

pytestmark = pytest.mark.django_db

DONE_IN_BATCH = re.compile(r"(\d+) in this batch")


def shown_done(cast: Cast, assignment: Assignment) -> int:
    response = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk]))
    assert response.status_code == 200
    found = DONE_IN_BATCH.search(response.content.decode())
    assert found is not None
    return int(found.group(1))


def test_the_page_counts_the_workers_submitted_hits_of_the_batch_whatever_happened_to_the_others(
    cast: Cast,
) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark, assignments_per_hit=2)
    hits = make_hits(benchmark, 8, batch=batch)
    other_batch = make_batch(benchmark, assignments_per_hit=1, status="closed")
    elsewhere = make_hits(benchmark, 2, batch=other_batch)
    alice = Worker.objects.get(user=cast.alice)
    bob = Worker.objects.get(user=cast.bob)
    now = timezone.now()
    # Work elsewhere does not count: another worker's in the batch, Alice's in another batch.
    for worker, hit in [(bob, hits[0]), (bob, hits[1]), (alice, elsewhere[0]), (alice, elsewhere[1])]:
        Assignment.objects.create(
            hit=hit, worker=worker, status=AssignmentStatus.SUBMITTED, claimed_at=now, deadline=now, submitted_at=now
        )

    def next_claim(worker: Worker) -> Assignment:
        found = assignment_claim_next(worker=worker)
        assert found is not None
        return found

    def submit(worker: Worker) -> Assignment:
        assignment = next_claim(worker)
        return assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))

    submitted = [submit(alice) for _ in range(3)]
    assert {assignment.hit.batch_id for assignment in submitted} == {batch.pk}
    returned = next_claim(alice)
    assignment_return(assignment=returned)
    expired = next_claim(alice)
    assignments_expire_overdue(now=expired.deadline + timedelta(seconds=1))
    # Approved and rejected (filtered) work is still the worker's work done; a claim is not.
    Assignment.objects.filter(pk=submitted[0].pk).update(status=AssignmentStatus.APPROVED)
    Assignment.objects.filter(pk=submitted[1].pk).update(status=AssignmentStatus.REJECTED, filtered=True)
    live = next_claim(alice)
    assert live.hit.batch_id == batch.pk
    assert shown_done(cast, live) == 3
    for other in (returned, expired, submitted[2]):
        assert selectors.assignment_progress(assignment=other).done_in_batch == 3
    assert selectors.assignment_progress(assignment=live).done_in_batch == 3

    # The count the page shows is the one the rows give.
    statuses = [str(status) for status in SUBMITTED_STATUSES]
    assert Assignment.objects.filter(worker=alice, hit__batch=batch, status__in=statuses).count() == shown_done(
        cast, live
    )


@pytest.fixture
def forgetful() -> None:
    annotator_selectors._DESIGNED_PAGES.clear()
    choice_tags._CHOICE_MARKUP.clear()
    kept_fragments_clear()


@pytest.mark.usefixtures("forgetful")
def test_the_pages_made_once_per_design_are_bounded_by_the_setting() -> None:
    page = get_scheme("swords", step=2).page
    designs = [{"instructions": f"Design {number}."} for number in range(5)]
    with override_settings(WORK_PAGE_DESIGNS_KEPT=3):
        for design in designs:
            annotator_selectors.designed_page(page, design)
            assert 0 < len(annotator_selectors._DESIGNED_PAGES) <= 3
    with override_settings(WORK_PAGE_DESIGNS_KEPT=10):
        for design in designs:
            annotator_selectors.designed_page(page, design)
        assert len(annotator_selectors._DESIGNED_PAGES) == 5


@pytest.mark.usefixtures("forgetful")
def test_the_fragments_kept_per_tag_are_bounded_by_the_setting() -> None:
    template = Template("{% load work_page %}{% kept_fragment value %}<p>{{ value }}</p>{% endkept_fragment %}")
    node = next(node for node in template.nodelist if hasattr(node, "kept"))
    with override_settings(WORK_PAGE_FRAGMENTS_KEPT=3):
        for value in range(5):
            assert template.render(Context({"value": value})) == f"<p>{value}</p>"
            assert 0 < len(node.kept) <= 3
    with override_settings(WORK_PAGE_FRAGMENTS_KEPT=10):
        for value in range(5):
            assert template.render(Context({"value": value})) == f"<p>{value}</p>"
        assert len(node.kept) == 5


@pytest.mark.usefixtures("forgetful")
def test_the_choices_markup_kept_is_bounded_by_the_setting() -> None:
    page = get_scheme("swords", step=2).page
    choice_sets = [tuple(page.choices[:count]) for count in range(1, len(page.choices) + 1)]
    assert len(choice_sets) >= 2
    with override_settings(WORK_PAGE_CHOICE_SETS_KEPT=1):
        for choices in choice_sets:
            choice_tags._button_pieces(choices, False)
            assert len(choice_tags._CHOICE_MARKUP) == 1
    with override_settings(WORK_PAGE_CHOICE_SETS_KEPT=10):
        for choices in choice_sets:
            choice_tags._button_pieces(choices, False)
            choice_tags._button_pieces(choices, True)
        assert len(choice_tags._CHOICE_MARKUP) == 2 * len(choice_sets)
