"""Work assigned to named annotators (ProLex's experts): the plan, generation, and a queue that
offers each annotator only their own targets, through the service, the command, the API and the page."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Benchmark, Label
from hits.assignees import AssigneesError, assignees_plan
from hits.models import HIT, HITItem, HITReservation
from hits.services import HitsGenerationError, assignment_claim_next, assignment_submit, hits_generate
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_benchmark, make_target

pytestmark = pytest.mark.django_db


def test_the_plan_gives_the_overlap_to_two_annotators_and_the_rest_to_one_in_turn() -> None:
    plan = assignees_plan(target_ids=[10, 11, 12, 13, 14, 15], worker_ids=[1, 2, 3], overlap=2, seed=7)
    shared = [workers for workers in plan.values() if len(workers) == 2]
    assert sorted(plan) == [10, 11, 12, 13, 14, 15]
    assert sorted(shared) == [(1, 2), (1, 3)]
    loads = {worker: sum(worker in workers for workers in plan.values()) for worker in (1, 2, 3)}
    assert loads == {1: 3, 2: 3, 3: 2}
    assert plan == assignees_plan(target_ids=[15, 14, 13, 12, 11, 10], worker_ids=[1, 2, 3], overlap=2, seed=7)


@pytest.mark.parametrize(
    ("workers", "overlap", "message"),
    [([], 0, "name at least one annotator"), ([1], 1, "needs two annotators"), ([1, 2], 5, "larger than the 2")],
)
def test_the_plan_refuses_what_it_cannot_do(workers: list[int], overlap: int, message: str) -> None:
    with pytest.raises(AssigneesError, match=message):
        assignees_plan(target_ids=[1, 2], worker_ids=workers, overlap=overlap, seed=0)


@pytest.fixture
def prolex() -> Benchmark:
    benchmark = make_benchmark("experts", scheme="prolex")
    for word in ("calm", "bright", "quick"):
        make_target(benchmark, word=word, pos="", candidates=["still", "serene"])
    return benchmark


def test_prolex_needs_named_annotators_on_the_local_queue(prolex: Benchmark, cast: Cast) -> None:
    with pytest.raises(HitsGenerationError, match="assigns its work to named annotators"):
        hits_generate(benchmark=prolex, step=1, seed=1)
    with pytest.raises(HitsGenerationError, match="collected on the local queue"):
        hits_generate(benchmark=prolex, step=1, seed=1, annotators=[cast.alice.worker], backend="mturk")


def test_each_annotator_is_offered_only_their_targets_and_the_overlap_goes_to_both(
    prolex: Benchmark, cast: Cast
) -> None:
    alice, bob, carol = cast.alice.worker, cast.bob.worker, cast.carol.worker
    batch = hits_generate(benchmark=prolex, step=1, seed=1, annotators=[alice, bob], overlap=1)

    hits = list(HIT.objects.filter(batch=batch).prefetch_related("reservations"))
    reserved = {hit.pk: sorted(r.worker_id for r in hit.reservations.all()) for hit in hits}
    assert all(hit.reserved for hit in hits)
    assert sorted(len(workers) for workers in reserved.values()) == [1, 1, 2]
    assert {hit.pk: hit.assignments_required for hit in hits} == {pk: len(w) for pk, w in reserved.items()}
    assert assignment_claim_next(worker=carol) is None

    taken: dict[int, list[int]] = {alice.pk: [], bob.pk: []}
    for worker in (alice, bob):
        while (claim := assignment_claim_next(worker=worker)) is not None:
            items = HITItem.objects.filter(hit=claim.hit)
            assignment_submit(assignment=claim, answers={item.pk: "1" for item in items})
            taken[worker.pk].append(claim.hit_id)
    assert {worker: sorted(hit_ids) for worker, hit_ids in taken.items()} == {
        worker: sorted(pk for pk, workers in reserved.items() if worker in workers) for worker in taken
    }
    assert Label.objects.filter(step=1, value="accept").count() == 2 * 4


def test_the_command_and_the_api_take_annotators_by_username(prolex: Benchmark, cast: Cast) -> None:
    out = io.StringIO()
    call_command("create_batch", "experts", "--step", "1", "--seed", "3", "--annotators", "alice", "bob", stdout=out)
    assert HIT.objects.filter(reserved=True).count() == 3
    with pytest.raises(CommandError, match="no active account named 'nobody'"):
        call_command("create_batch", "experts", "--step", "1", "--seed", "3", "--annotators", "nobody", stdout=out)

    other = make_benchmark("experts-2", scheme="prolex")
    make_target(other, word="calm", pos="", candidates=["still"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.researcher).key}")
    body = {"benchmark": "experts-2", "step": 1, "seed": 1, "annotators": ["carol"]}
    created = client.post("/api/batches/", body, format="json")
    assert created.status_code == 201, created.json()
    assert HIT.objects.get(batch_id=created.json()["id"]).reservations.get().worker == cast.carol.worker
    refused = client.post("/api/batches/", {**body, "annotators": ["nobody"]}, format="json")
    assert refused.status_code == 400 and "nobody" in str(refused.json()["annotators"])


def test_the_assignments_page_shows_each_annotators_share_and_assigns_more(prolex: Benchmark, cast: Cast) -> None:
    client = Client()
    client.login(username="rita", password=PASSWORD)
    response = client.post(
        "/benchmarks/experts/batches/",
        {
            "step": 1,
            "seed": 2,
            "backend": "local",
            "annotators": ["alice", "bob"],
            "overlap": 1,
            "assignment_minutes": 30,
        },
    )
    assert response.status_code == 302
    page = client.get("/benchmarks/experts/assignments/").content.decode()
    assert "<td>alice</td>" in page and "<td>bob</td>" in page
    assert 'name="annotators"' in page and 'name="overlap"' in page
    assert "Assignments to annotators" in client.get("/benchmarks/experts/").content.decode()
    rows = client.get("/api/benchmarks/experts/assignments").json()["results"]
    assert [(row["name"], row["submitted"]) for row in rows] == [("alice", 0), ("bob", 0)]
    assert sum(row["targets"] for row in rows) == 4 and sum(row["shared"] for row in rows) == 2


def _offered(page: str) -> list[tuple[str, bool]]:
    """The named annotators' options of the batch form: (name, selected)."""
    select = re.search(r'<select name="annotators"[^>]*>(.*?)</select>', page, re.S)
    assert select is not None
    return [
        (value, bool(chosen)) for value, chosen in re.findall(r'<option value="([^"]*)"( selected)?>', select.group(1))
    ]


def test_the_batch_form_offers_the_active_annotators_and_researchers_by_name(prolex: Benchmark, cast: Cast) -> None:
    User.objects.create_user("zed", password=PASSWORD)  # in neither group: never offered
    client = Client()
    client.login(username="rita", password=PASSWORD)
    page = client.get("/benchmarks/experts/batches/").content.decode()
    assert _offered(page) == [(name, False) for name in ("alice", "bob", "carol", "rita", "sam")]
    cast.carol.is_active = False
    cast.carol.save()
    # A form sent back with an error keeps the names chosen, and no longer offers an inactive account.
    sent = client.post(
        "/benchmarks/experts/batches/",
        {"step": 1, "backend": "local", "annotators": ["bob", "sam"], "assignment_minutes": 30},
    )
    assert sent.status_code == 200 and "seed" in sent.context["form"].errors
    assert _offered(sent.content.decode()) == [("alice", False), ("bob", True), ("rita", False), ("sam", True)]


def test_a_benchmark_whose_hits_are_reserved_links_its_assignments_whatever_its_scheme(cast: Cast) -> None:
    benchmark = make_benchmark("open-crowd")
    make_target(benchmark, word="calm", pos="", candidates=["still", "serene"])
    client = Client()
    client.login(username="rita", password=PASSWORD)
    assert "Assignments to annotators" not in client.get("/benchmarks/open-crowd/").content.decode()
    hits_generate(benchmark=benchmark, step=2, seed=1, annotators=[cast.alice.worker])
    assert HITReservation.objects.filter(hit__batch__benchmark=benchmark).exists()
    assert "Assignments to annotators" in client.get("/benchmarks/open-crowd/").content.decode()
