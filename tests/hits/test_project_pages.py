"""The annotator's projects on the work home, each project's start, the HIT page naming its project,
the return rule and the projects' API (docs/design.md §11, docs/annotator.md "Projects")."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Benchmark, Context, Target
from hits.models import Assignment, AssignmentStatus, Batch
from hits.services import hits_generate
from tests.base import Cast, logged_in
from tests.crowds.crowd_helpers import make_batch as make_crowd_batch
from tests.crowds.crowd_helpers import publish_locally
from tests.hits.factories import make_benchmark, make_hits, make_target
from tests.hits.qualification_data import with_test

pytestmark = pytest.mark.django_db

SWS_SUMMARY = "Mark words of a sentence that could be improved and suggest better ones."
PROLEX_SUMMARY = "Judge each generated substitute for a highlighted word 1 / -1 / 0."
SWORDS_SUMMARY = "Judge about a dozen substitutes for a highlighted word in a short text."


def sws_batch(sentences: int = 3) -> Batch:
    benchmark = Benchmark.objects.create(name="sws", title="Better words", scheme="sws")
    for number in range(sentences):
        text = f"The results of test {number} were very good and quick."
        context = Context.objects.create(benchmark=benchmark, text=text)
        Target.objects.create(benchmark=benchmark, context=context, word=text, offset=0, pos="")
    return hits_generate(benchmark=benchmark, step=1, seed=1)


def prolex_batch(cast: Cast) -> Batch:
    benchmark = make_benchmark("experts", title="Expert judgments", scheme="prolex")
    for word in ("calm", "bright", "quick"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])
    return hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker])


def project_titles(html: str) -> list[str]:
    return re.findall(r'<h3 class="project-title"[^>]*>([^<]*)</h3>', html)


def test_the_home_lists_the_projects_of_three_schemes_and_the_named_expert_alone_sees_prolex(cast: Cast) -> None:
    sws = sws_batch()
    prolex = prolex_batch(cast)
    swords = make_hits(make_benchmark("lexsub", title="Substitutes in context"), 2)[0].batch

    alice = logged_in(cast.alice).get(reverse("work-home")).content.decode()
    bob = logged_in(cast.bob).get(reverse("work-home")).content.decode()

    assert project_titles(alice) == ["Better words", "Expert judgments", "Substitutes in context"]
    assert project_titles(bob) == ["Better words", "Substitutes in context"]
    for summary in (SWS_SUMMARY, PROLEX_SUMMARY, SWORDS_SUMMARY):
        assert summary in alice
    assert PROLEX_SUMMARY not in bob
    assert "3 HITs left for you" in alice and "assigned to you" in alice
    assert all(reverse("work-project-next", args=[batch.pk]) in alice for batch in (sws, prolex, swords))
    assert reverse("work-project-next", args=[prolex.pk]) not in bob
    assert "dozen" not in bob.split('id="work-description"')[1].split("</p>")[0]


def test_the_description_follows_the_one_project_on_offer(cast: Cast) -> None:
    sws_batch()

    html = logged_in(cast.bob).get(reverse("work-home")).content.decode()

    description = html.split('id="work-description">')[1].split("</p>")[0]
    assert "“Better words”" in description and SWS_SUMMARY in description
    assert "dozen" not in html


def test_with_nothing_on_offer_the_home_says_so(cast: Cast) -> None:
    html = logged_in(cast.bob).get(reverse("work-home")).content.decode()

    assert project_titles(html) == []
    assert "No project has HITs for you right now" in html


def test_start_of_a_project_claims_from_that_batch_and_its_page_names_it(cast: Cast) -> None:
    make_hits(make_benchmark("older", title="The older one"), 2)
    newer = make_hits(make_benchmark("newer", title="The newer one"), 2)[0].batch
    client = logged_in(cast.bob)

    response = client.post(reverse("work-project-next", args=[newer.pk]))

    assignment = Assignment.objects.get(worker__user=cast.bob)
    assert response.status_code == 302
    assert response["Location"] == reverse("work-assignment", args=[assignment.pk])
    assert assignment.hit.batch_id == newer.pk
    page = client.get(response["Location"]).content.decode()
    assert re.search(r'id="hit-project">Project: <strong>The newer one</strong>', page)


def test_start_of_a_project_not_yours_or_finished_gives_nothing(cast: Cast) -> None:
    prolex = prolex_batch(cast)
    client = logged_in(cast.bob)

    response = client.post(reverse("work-project-next", args=[prolex.pk]), follow=True)

    assert not Assignment.objects.filter(worker__user=cast.bob).exists()
    assert response.redirect_chain == [(reverse("work-home"), 302)]
    assert "“Expert judgments” has no HIT left for you right now." in response.content.decode()
    assert client.post(reverse("work-project-next", args=[999999])).status_code == 404
    assert client.get(reverse("work-project-next", args=[prolex.pk])).status_code == 405


def test_start_of_a_project_behind_a_test_leads_to_the_test(cast: Cast) -> None:
    batch = make_hits(make_benchmark("gated", title="Gated words"), 2)[0].batch
    with_test(batch.benchmark)
    client = logged_in(cast.bob)

    home = client.get(reverse("work-home")).content.decode()
    response = client.post(reverse("work-project-next", args=[batch.pk]))

    test_url = reverse("qualification-take", args=["gated"])
    assert test_url in home.split('class="card project"')[1]
    assert reverse("work-project-next", args=[batch.pk]) not in home
    assert response["Location"] == test_url


def test_a_return_never_hands_back_the_older_project_twice_and_the_expert_reaches_prolex(cast: Cast) -> None:
    sws = sws_batch(sentences=4)
    prolex = prolex_batch(cast)
    client = logged_in(cast.alice)

    batches = []
    for _ in range(5):
        response = client.post(reverse("work-next"))
        assert response.status_code == 302 and "/work/assignments/" in response["Location"]
        assignment = Assignment.objects.get(worker__user=cast.alice, status=AssignmentStatus.CLAIMED)
        batches.append(assignment.hit.batch_id)
        assert client.post(reverse("work-return", args=[assignment.pk])).status_code == 302

    assert batches == [sws.pk, prolex.pk, sws.pk, prolex.pk, sws.pk]


def test_after_a_return_a_submit_goes_back_to_the_oldest_project(cast: Cast) -> None:
    sws = sws_batch(sentences=2)
    prolex = prolex_batch(cast)
    client = logged_in(cast.alice)
    client.post(reverse("work-next"))
    first = Assignment.objects.get(worker__user=cast.alice, status=AssignmentStatus.CLAIMED)
    client.post(reverse("work-return", args=[first.pk]))

    client.post(reverse("work-next"))
    second = Assignment.objects.get(worker__user=cast.alice, status=AssignmentStatus.CLAIMED)
    items = second.hit.items.all()
    response = client.post(reverse("work-assignment", args=[second.pk]), {f"item-{i.pk}": "1" for i in items})

    third = Assignment.objects.get(worker__user=cast.alice, status=AssignmentStatus.CLAIMED)
    assert (first.hit.batch_id, second.hit.batch_id, third.hit.batch_id) == (sws.pk, prolex.pk, sws.pk)
    assert response["Location"] == reverse("work-assignment", args=[third.pk])


def test_the_projects_api_lists_the_same_projects_with_their_fields(cast: Cast) -> None:
    sws = sws_batch()
    prolex = prolex_batch(cast)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.alice).key}")

    body = api.get("/api/work/projects/").json()

    assert body == [
        {
            "batch": sws.pk,
            "title": "Better words",
            "summary": SWS_SUMMARY,
            "benchmark": "sws",
            "reward": "0.10",
            "minutes_allowed": 30,
            "hits_left": 3,
            "assigned": False,
            "qualification": "",
        },
        {
            "batch": prolex.pk,
            "title": "Expert judgments",
            "summary": PROLEX_SUMMARY,
            "benchmark": "experts",
            "reward": "0.10",
            "minutes_allowed": 30,
            "hits_left": 3,
            "assigned": True,
            "qualification": "",
        },
    ]
    bob = APIClient()
    bob.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.bob).key}")
    assert [project["batch"] for project in bob.get("/api/work/projects/").json()] == [sws.pk]
    assert APIClient().get("/api/work/projects/").status_code in (401, 403)

    claimed = api.post("/api/work/claim", {"avoid_batch": sws.pk}, format="json").json()
    assert Assignment.objects.get(pk=claimed["id"]).hit.batch_id == prolex.pk


def test_researchers_see_the_home_too(cast: Cast) -> None:
    make_hits(make_benchmark("mine", title="Mine"), 1)

    response = Client()
    response.force_login(cast.researcher)

    assert project_titles(response.get(reverse("work-home")).content.decode()) == ["Mine"]


def test_the_mturk_page_names_its_project_too(cast: Cast) -> None:
    (posting,) = publish_locally(make_crowd_batch(hits=1, title="Words for the crowd"))
    query = f"assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId={posting.external_id}&workerId=W1"

    html = Client().get(f"/mturk/hit/{posting.hit.public_token}/?{query}").content.decode()

    assert 'id="hit-project">Project: <strong>Words for the crowd</strong>' in html
