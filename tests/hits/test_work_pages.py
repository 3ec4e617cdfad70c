import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from hits.models import HIT, Assignment, AssignmentStatus, HITItem
from hits.services import assignment_submit
from tests.base import PASSWORD, Cast, logged_in
from tests.hits.factories import claim, honest_answers, make_batch, make_benchmark, make_hit, make_hits, make_target

pytestmark = pytest.mark.django_db


def form_answers(hit: HIT) -> dict[str, str]:
    return {f"item-{pk}": value for pk, value in honest_answers(hit).items()}


def test_start_claims_a_hit_and_opens_it(cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    client = logged_in(cast.alice)

    response = client.post(reverse("work-next"))

    assignment = Assignment.objects.get(worker__user=cast.alice)
    assert response.status_code == 302
    assert response["Location"] == reverse("work-assignment", args=[assignment.pk])


def test_start_without_work_shows_a_friendly_page(cast: Cast) -> None:
    response = logged_in(cast.alice).post(reverse("work-next"), follow=True)

    assert response.redirect_chain == [(reverse("work-next"), 302)]
    assert b"No work right now" in response.content


def test_the_page_shows_the_context_with_the_target_and_every_item_alike(cast: Cast) -> None:
    benchmark = make_benchmark()
    target = make_target(benchmark, text="The cat sat on the mat.")
    hit = make_hit(make_batch(benchmark), target, distractor="umbrella")
    assignment = claim(cast.alice)

    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()

    assert (
        '<p class="context-text" lang="en" dir="auto">The cat <mark class="target">sat</mark> on the mat.</p>' in html
    )
    for item in HITItem.objects.filter(hit=hit):
        assert f'name="item-{item.pk}"' in html
        assert item.text in html
    assert "control" not in html.lower()
    assert "distractor" not in html.lower()
    # Every row has the same markup: no attribute differs by kind.
    rows = re.findall(r'<li class="item"[^>]*>', html)
    assert len(rows) == hit.items.count()
    assert len({re.sub(r'(id="row-\d+"|data-number="\d+"|data-text="[^"]*")', "", row) for row in rows}) == 1


def test_a_context_with_markup_is_shown_as_text(cast: Cast) -> None:
    benchmark = make_benchmark()
    text = '<script>alert("x")</script> The <b>cat</b> sat & left.'
    make_hit(make_batch(benchmark), make_target(benchmark, text=text, word="sat"))
    assignment = claim(cast.alice)

    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; The &lt;b&gt;cat&lt;/b&gt; " in html
    assert '<mark class="target">sat</mark> &amp; left.' in html


def test_submitting_the_page_stores_the_labels_and_opens_the_next_hit(cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    first = claim(cast.alice)
    client = logged_in(cast.alice)

    response = client.post(
        reverse("work-assignment", args=[first.pk]), {**form_answers(first.hit), "seconds_on_page": "7.5"}
    )

    first.refresh_from_db()
    assert first.status == AssignmentStatus.SUBMITTED
    assert first.seconds_on_page is not None and first.seconds_on_page <= 7.5
    assert Label.objects.filter(assignment=first).count() == 4
    second = Assignment.objects.exclude(pk=first.pk).get(worker__user=cast.alice)
    assert response.status_code == 302
    assert response["Location"] == reverse("work-assignment", args=[second.pk])


def test_a_multipart_form_goes_through_the_csrf_check_and_is_stored(cast: Cast) -> None:
    """The CSRF check parses a multipart form before the view runs; the view reads that parse."""
    make_hits(make_benchmark(), 2)
    client = Client(enforce_csrf_checks=True)
    assert client.login(username=cast.alice.username, password=PASSWORD)
    client.get(reverse("work-home"))
    token = client.cookies["csrftoken"].value

    started = client.post(reverse("work-next"), {"csrfmiddlewaretoken": token})
    first = Assignment.objects.get(worker__user=cast.alice)
    assert started.status_code == 302
    response = client.post(
        reverse("work-assignment", args=[first.pk]), {**form_answers(first.hit), "csrfmiddlewaretoken": token}
    )

    first.refresh_from_db()
    assert response.status_code == 302
    assert first.status == AssignmentStatus.SUBMITTED
    assert Label.objects.filter(assignment=first).count() == 4


def test_a_double_click_on_submit_stores_one_set_of_labels(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    client = logged_in(cast.alice)
    url = reverse("work-assignment", args=[assignment.pk])

    client.post(url, form_answers(assignment.hit))
    client.post(url, form_answers(assignment.hit))

    assert Label.objects.filter(assignment=assignment).count() == 4


def test_an_unanswered_row_is_refused_by_the_server_and_nothing_is_stored(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    answers = form_answers(assignment.hit)
    third = assignment.hit.items.order_by("position")[2]
    del answers[f"item-{third.pk}"]

    response = logged_in(cast.alice).post(reverse("work-assignment", args=[assignment.pk]), answers)

    assert response.status_code == 400
    html = response.content.decode()
    assert "Unanswered: row 3." in html
    assert f'<li class="item missing" id="row-{third.pk}"' in html
    # The answers given are kept on the page.
    assert html.count("checked") == len(answers)
    assert not Label.objects.exists()


def test_returning_a_hit_from_the_page(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)

    response = logged_in(cast.alice).post(reverse("work-return", args=[assignment.pk]))

    assert response.status_code == 302
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.RETURNED
    assert HIT.objects.get().assignments_active == 0


def test_an_annotator_cannot_open_submit_or_return_anothers_assignment(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    bobs = claim(cast.bob)
    client = logged_in(cast.alice)

    assert client.get(reverse("work-assignment", args=[bobs.pk])).status_code == 404
    assert client.post(reverse("work-assignment", args=[bobs.pk]), form_answers(bobs.hit)).status_code == 404
    assert client.post(reverse("work-return", args=[bobs.pk])).status_code == 404
    bobs.refresh_from_db()
    assert bobs.status == AssignmentStatus.CLAIMED


def test_an_annotator_cannot_reach_researcher_pages(cast: Cast) -> None:
    benchmark = make_benchmark()
    client = logged_in(cast.alice)

    assert client.get(reverse("benchmark-list")).status_code == 403
    assert client.get(reverse("benchmark-detail", args=[benchmark.name])).status_code == 403
    assert client.get("/admin/").status_code == 302


def test_the_work_pages_need_a_login(cast: Cast) -> None:
    response = Client().get(reverse("work-home"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_work_home_lists_only_the_annotators_own_submitted_hits(cast: Cast) -> None:
    # One slot per HIT: alice and bob get one HIT each.
    make_hits(make_benchmark(), 2, assignments_per_hit=1)
    alices = claim(cast.alice)
    assignment_submit(assignment=alices, answers=honest_answers(alices.hit))
    bobs = claim(cast.bob)
    assignment_submit(assignment=bobs, answers=honest_answers(bobs.hit))

    html = logged_in(cast.alice).get(reverse("work-home")).content.decode()

    assert reverse("work-assignment", args=[alices.pk]) in html
    assert reverse("work-assignment", args=[bobs.pk]) not in html
    assert '<div class="stat">1</div>' in html
    assert "Start working" in html


def test_work_home_offers_to_continue_a_hit_in_progress(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)

    html = logged_in(cast.alice).get(reverse("work-home")).content.decode()

    assert "Continue your HIT" in html
    assert reverse("work-assignment", args=[assignment.pk]) in html


def test_a_submitted_hit_shows_read_only_with_the_annotators_answers(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    assignment_submit(assignment=assignment, answers=honest_answers(assignment.hit))

    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()

    assert "You submitted this HIT" in html
    assert 'id="hit-submit"' not in html
    assert html.count(" disabled") == 3 * assignment.hit.items.count()


def test_the_hit_page_is_never_stored_by_a_browser_or_a_proxy(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)

    response = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk]))

    assert "no-store" in response.headers["Cache-Control"]


def test_the_page_names_the_part_of_the_word_and_counts_the_hits_done(cast: Cast) -> None:
    benchmark = make_benchmark()
    batch = make_batch(benchmark)
    target = make_target(benchmark, word="sat")
    candidates = list(target.candidates.order_by("id"))
    make_hit(batch, target, part=0, candidates=candidates[:2])
    make_hit(batch, target, part=1, candidates=candidates[2:])
    client = logged_in(cast.alice)
    first = claim(cast.alice)

    html = client.get(reverse("work-assignment", args=[first.pk])).content.decode()
    assert "Part 1 of 2 for “sat”" in html
    assert "HITs done: 0 this session, 0 in this batch" in html
    assert '<span id="hit-answered">0 of 4 answered</span>' in html

    response = client.post(reverse("work-assignment", args=[first.pk]), form_answers(first.hit), follow=True)

    html = response.content.decode()
    assert "Saved: part 1 of 2 for “sat”. Thank you!" in html
    assert "Part 2 of 2 for “sat”" in html
    assert "HITs done: 1 this session, 1 in this batch" in html


def test_a_stale_second_tab_is_told_that_the_first_answers_were_kept(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    client = logged_in(cast.alice)
    url = reverse("work-assignment", args=[assignment.pk])
    assert "Saved:" in client.post(url, form_answers(assignment.hit), follow=True).content.decode()

    stale = {f"item-{pk}": "abstain" for pk in assignment.hit.items.values_list("pk", flat=True)}
    response = client.post(url, stale, follow=True)

    assert "You had already submitted this HIT; your first answers were kept." in response.content.decode()
    assert "Saved:" not in response.content.decode()
    assert not Label.objects.filter(value="abstain").exists()


def test_the_countdown_starts_from_the_seconds_left_before_the_deadline(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)

    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()

    match = re.search(
        r'<span class="hit-countdown" role="timer" data-seconds-left="(\d+)">29 min \d\d s left</span>', html
    )
    assert match and 1790 <= int(match.group(1)) <= 1800
    assert 'id="hit-time-up" role="alert" hidden' in html


def test_the_text_and_the_rows_carry_the_benchmarks_language_and_read_in_their_own_direction(cast: Cast) -> None:
    benchmark = make_benchmark(language="ar")
    target = make_target(benchmark, text="جلس القط على الحصيرة", word="جلس", candidates=["قعد"])
    make_hit(make_batch(benchmark), target)
    assignment = claim(cast.alice)

    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()

    assert '<p class="context-text" lang="ar" dir="auto"><mark class="target">جلس</mark> القط على الحصيرة</p>' in html
    assert html.count('class="item-text"') == html.count('lang="ar" dir="auto">') - 1 == 3


def test_each_choice_is_described_by_its_definition(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    assignment = claim(cast.alice)
    rows = assignment.hit.items.count()

    html = logged_in(cast.alice).get(reverse("work-assignment", args=[assignment.pk])).content.decode()

    for position in (1, 2, 3):
        assert html.count(f'aria-describedby="definition-{position}"') == rows
        assert html.count(f'id="definition-{position}"') == 1


def test_the_instructions_keep_the_highlighted_word_acceptable_and_open_their_examples_on_a_first_hit(
    cast: Cast,
) -> None:
    make_hits(make_benchmark(), 2)
    client = logged_in(cast.alice)
    first = claim(cast.alice)

    html = client.get(reverse("work-assignment", args=[first.pk])).content.decode()
    assert "<details open>\n    <summary>Examples and tips</summary>" in html
    assert "always fits its own place, so always accept it" in html
    assert "<strong>Reject</strong> the other words when the highlighted word is a proper noun" in html

    response = client.post(reverse("work-assignment", args=[first.pk]), form_answers(first.hit), follow=True)
    assert "<details>\n    <summary>Examples and tips</summary>" in response.content.decode()


def test_a_returned_hit_submitted_from_a_stale_page_is_refused_whole_and_the_home_page_says_why(cast: Cast) -> None:
    # The submit runs in the request's one transaction: its refusal rolls it all back, and the
    # answer (a redirect with the reason) is given once it is.
    make_hits(make_benchmark(), 2)
    assignment = claim(cast.alice)
    client = logged_in(cast.alice)
    answers = form_answers(assignment.hit)
    client.post(reverse("work-return", args=[assignment.pk]))

    response = client.post(reverse("work-assignment", args=[assignment.pk]), answers, follow=True)

    assert response.redirect_chain[-1][0] == reverse("work-home")
    assert "can no longer be submitted" in response.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.RETURNED
    assert not Label.objects.filter(assignment=assignment).exists()
    # No next HIT was claimed on the way.
    assert not Assignment.objects.filter(worker=assignment.worker, status=AssignmentStatus.CLAIMED).exists()
