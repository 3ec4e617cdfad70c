from typing import Any

import pytest
from django.contrib.auth.models import User
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Label
from hits.models import Assignment, AssignmentStatus, HITItem
from schemes.swords.items import ItemKind
from tests.base import Cast
from tests.hits.factories import make_batch, make_benchmark, make_hit, make_hits, make_target

pytestmark = pytest.mark.django_db


def api(user: User) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def honest(claimed: dict[str, Any]) -> dict[str, str]:
    kinds = dict(HITItem.objects.filter(hit_id=claimed["hit"]).values_list("pk", "kind"))
    return {
        str(item["id"]): "reject" if kinds[item["id"]] == ItemKind.CONTROL_DISTRACTOR else "accept"
        for item in claimed["items"]
    }


def test_claim_returns_the_hit_to_show_without_item_kinds(cast: Cast) -> None:
    benchmark = make_benchmark()
    hit = make_hit(make_batch(benchmark), make_target(benchmark, text="The cat sat on the mat."))

    response = api(cast.alice).post("/api/work/claim", {}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["hit"] == hit.pk
    assert body["status"] == "claimed"
    assert body["context_text"] == "The cat sat on the mat."
    assert body["target"] == {"word": "sat", "offset": 8}
    assert [item["id"] for item in body["items"]] == list(hit.items.order_by("position").values_list("pk", flat=True))
    assert all(set(item) == {"id", "text"} for item in body["items"])


def test_claim_without_work_answers_no_content(cast: Cast) -> None:
    assert api(cast.alice).post("/api/work/claim", {}, format="json").status_code == 204


def test_claim_can_be_limited_to_a_benchmark(cast: Cast) -> None:
    make_hits(make_benchmark(name="first"), 1)
    [wanted] = make_hits(make_benchmark(name="second"), 1)

    response = api(cast.alice).post("/api/work/claim", {"benchmark": "second"}, format="json")

    assert response.json()["hit"] == wanted.pk
    assert api(cast.bob).post("/api/work/claim", {"benchmark": "nope"}, format="json").status_code == 404


def test_submit_stores_labels_once_even_when_retried(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()
    payload = {"answers": honest(claimed), "seconds_on_page": 9.0}

    first = client.post(f"/api/work/assignments/{claimed['id']}/submit", payload, format="json")
    second = client.post(f"/api/work/assignments/{claimed['id']}/submit", payload, format="json")

    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert first.json()["status"] == "submitted"
    assert "controls_correct" not in first.json()
    assert Label.objects.filter(assignment_id=claimed["id"]).count() == 4


def test_submit_with_a_missing_answer_is_refused_and_names_it(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()
    answers = honest(claimed)
    missing = claimed["items"][0]["id"]
    del answers[str(missing)]

    response = client.post(f"/api/work/assignments/{claimed['id']}/submit", {"answers": answers}, format="json")

    assert response.status_code == 400
    assert response.json()["missing"] == [missing]
    assert "row 1" in response.json()["detail"]
    assert not Label.objects.exists()


def test_submit_with_a_value_other_than_the_three_answers_is_refused(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()
    answers = {**honest(claimed), str(claimed["items"][0]["id"]): "yes"}

    response = client.post(f"/api/work/assignments/{claimed['id']}/submit", {"answers": answers}, format="json")

    assert response.status_code == 400
    assert response.json()["invalid"] == [claimed["items"][0]["id"]]
    assert not Label.objects.exists()


def test_an_annotator_cannot_submit_or_return_anothers_assignment(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    claimed = api(cast.bob).post("/api/work/claim", {}, format="json").json()
    alice = api(cast.alice)

    submit = alice.post(f"/api/work/assignments/{claimed['id']}/submit", {"answers": honest(claimed)}, format="json")
    returned = alice.post(f"/api/work/assignments/{claimed['id']}/return", format="json")

    assert submit.status_code == returned.status_code == 404
    assert Assignment.objects.get().status == AssignmentStatus.CLAIMED


def test_return_gives_the_hit_back(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()

    response = client.post(f"/api/work/assignments/{claimed['id']}/return", format="json")

    assert response.status_code == 200
    assert response.json() == {"id": claimed["id"], "status": "returned"}


def test_history_lists_only_ones_own_assignments(cast: Cast) -> None:
    make_hits(make_benchmark(), 2)
    mine = api(cast.alice).post("/api/work/claim", {}, format="json").json()
    api(cast.bob).post("/api/work/claim", {}, format="json")

    response = api(cast.alice).get("/api/work/assignments/")

    assert response.status_code == 200
    assert [row["id"] for row in response.json()["results"]] == [mine["id"]]
    assert "filtered" not in response.json()["results"][0]


def test_the_work_api_needs_an_account_with_a_role(cast: Cast) -> None:
    assert APIClient().post("/api/work/claim", {}, format="json").status_code in (401, 403)
    nobody = User.objects.create_user("nobody", password="x")
    assert api(nobody).post("/api/work/claim", {}, format="json").status_code == 403


def test_session_login_works_for_the_work_api(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    client = APIClient()
    client.force_login(cast.alice)

    assert client.post("/api/work/claim", {}, format="json").status_code == 200


def test_the_schema_describes_the_work_endpoints(cast: Cast) -> None:
    response = api(cast.researcher).get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    paths = response.json()["paths"]
    assert {"/api/work/claim", "/api/work/assignments/", "/api/work/assignments/{assignment_id}/submit"} <= set(paths)


def test_anothers_assignment_is_not_found_even_with_a_malformed_body(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    claimed = api(cast.bob).post("/api/work/claim", {}, format="json").json()

    response = api(cast.alice).post(f"/api/work/assignments/{claimed['id']}/submit", {"answers": 3}, format="json")

    assert response.status_code == 404
    assert response.json()["detail"] == "No Assignment matches the given query."


def test_an_annotator_without_a_worker_finds_no_assignment_to_submit(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    claimed = api(cast.bob).post("/api/work/claim", {}, format="json").json()
    newcomer = User.objects.create_user("newcomer")
    newcomer.groups.add(*cast.alice.groups.all())

    response = api(newcomer).post(
        f"/api/work/assignments/{claimed['id']}/submit", {"answers": honest(claimed)}, format="json"
    )

    assert response.status_code == 404
    assert response.json()["detail"] == "No Assignment matches the given query."


def test_the_claim_and_submit_bodies_are_what_their_serializers_describe(cast: Cast) -> None:
    """The hot path builds its bodies by hand; the schema documents them with the serializers."""
    from hits.api.work import WorkAssignmentOut, WorkSubmittedOut

    make_hits(make_benchmark(), 1)
    client = api(cast.alice)
    claimed = client.post("/api/work/claim", {}, format="json").json()
    assignment = Assignment.objects.get(pk=claimed["id"])
    described = WorkAssignmentOut(
        {
            "id": assignment.pk,
            "status": assignment.status,
            "claimed_at": assignment.claimed_at,
            "deadline": assignment.deadline,
            "hit": assignment.hit_id,
            "context_text": assignment.hit.target.context.text,
            "target": {"word": assignment.hit.target.word, "offset": assignment.hit.target.offset},
            "items": [{"id": item.pk, "text": item.text} for item in assignment.hit.items.order_by("position")],
        }
    ).data
    assert claimed == described

    submitted = client.post(
        f"/api/work/assignments/{claimed['id']}/submit", {"answers": honest(claimed)}, format="json"
    ).json()
    assignment.refresh_from_db()
    assert submitted == WorkSubmittedOut(assignment).data
    assert submitted["submitted_at"].endswith("Z") and submitted["status"] == "submitted"


_json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_submit_bodies = st.dictionaries(
    st.sampled_from(["answers", "seconds_on_page", "telemetry", "pledge", "other"]),
    st.one_of(
        _json,
        st.dictionaries(st.from_regex(r"\A[0-9]{1,4}\Z"), st.sampled_from(["accept", "reject", "abstain", ""])),
        st.floats(min_value=-10, max_value=10**6),
    ),
)


@given(body=_submit_bodies)
def test_a_submit_body_read_on_the_fast_path_reads_as_its_serializer_reads_it(body: dict[str, Any]) -> None:
    from hits.api.work import WorkSubmitIn, submit_params

    fast = submit_params(body)
    if fast is not None:
        serializer = WorkSubmitIn(data=body)
        assert serializer.is_valid(), serializer.errors
        assert fast == serializer.validated_data


_plain_submit_bodies = st.fixed_dictionaries(
    {"answers": st.dictionaries(st.from_regex(r"\A[1-9][0-9]{0,5}\Z"), st.text(max_size=10), max_size=12)},
    optional={
        "seconds_on_page": st.none() | st.integers(0, 7 * 24 * 3600) | st.floats(0, 7 * 24 * 3600),
        "telemetry": st.none(),
        "pledge": st.booleans(),
    },
)


@given(body=_plain_submit_bodies)
def test_a_plain_submit_body_takes_the_fast_path_and_reads_as_its_serializer_reads_it(body: dict[str, Any]) -> None:
    from hits.api.work import WorkSubmitIn, submit_params

    fast = submit_params(body)
    serializer = WorkSubmitIn(data=body)
    assert serializer.is_valid(), serializer.errors
    assert fast == serializer.validated_data


@given(body=st.one_of(_json, st.dictionaries(st.sampled_from(["batch", "benchmark"]), _json)))
def test_a_claim_body_read_on_the_fast_path_reads_as_its_serializer_reads_it(body: Any) -> None:
    from hits.api.work import WorkClaimIn, claim_params

    fast = claim_params(body)
    if fast is not None:
        serializer = WorkClaimIn(data=body)
        assert serializer.is_valid(), serializer.errors
        assert fast == serializer.validated_data


def test_the_bodies_clients_send_take_the_fast_path() -> None:
    from hits.api.work import claim_params, submit_params

    answers = {"12": "accept", "13": "reject", "14": "abstain"}
    assert claim_params({}) == {}
    assert submit_params({"answers": answers}) == {"answers": answers, "pledge": False}
    assert submit_params({"answers": answers, "seconds_on_page": 9, "telemetry": None, "pledge": True}) == {
        "answers": answers,
        "seconds_on_page": 9.0,
        "telemetry": None,
        "pledge": True,
    }
    # Anything else goes through the serializers, which refuse or read it in full.
    assert claim_params({"batch": 3}) is None
    assert submit_params({"answers": {"12": {"spans": []}}}) is None
    assert submit_params({"answers": answers, "telemetry": {"v": 1}}) is None
    assert submit_params({"answers": answers, "seconds_on_page": "9"}) is None
    assert submit_params({"answers": answers, "seconds_on_page": -1}) is None
