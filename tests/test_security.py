"""What every response carries and refuses: the Content-Security-Policy, no caching for accounts,
no URL list in a 404, a 400 for input nested too deeply, and the schema for researchers only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.base import PASSWORD, Cast

pytestmark = pytest.mark.django_db

DEEP = "[" * 1000 + "]" * 1000


def _policy(header: str) -> dict[str, str]:
    return dict(part.split(" ", 1) for part in header.split("; "))


@pytest.mark.parametrize("path", ["/accounts/login/", "/benchmarks/", "/work/", "/admin/", "/api/benchmarks/"])
def test_every_page_has_a_policy_that_runs_only_the_sites_own_scripts(cast: Cast, path: str) -> None:
    client = Client()
    client.force_login(cast.researcher)

    policy = _policy(client.get(path, follow=True).headers["Content-Security-Policy"])

    assert policy["script-src"] == "'self'"
    assert policy["default-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"


def test_no_template_or_script_needs_inline_code() -> None:
    """The policy forbids inline scripts and event handlers: the pages must not have any."""
    templates = list(Path(settings.BASE_DIR, "templates").rglob("*.html"))
    assert templates
    for template in templates:
        html = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", html), template
        assert not re.search(r"\son[a-z]+\s*=", html), template
        assert "javascript:" not in html, template


def test_pages_for_an_account_are_never_cached(cast: Cast) -> None:
    client = Client()
    assert "Cache-Control" not in client.get("/healthz").headers
    client.force_login(cast.alice)

    assert "no-store" in client.get("/work/").headers["Cache-Control"]
    assert "no-store" in client.get("/healthz").headers["Cache-Control"]


def test_api_answers_for_a_token_are_never_cached(cast: Cast) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=cast.researcher).key}")

    assert "no-store" in client.get("/api/benchmarks/").headers["Cache-Control"]


def test_a_404_lists_no_url_patterns(cast: Cast) -> None:
    assert not settings.DEBUG
    response = Client().get("/no/such/page/")

    assert response.status_code == 404
    assert b"api/" not in response.content and b"URLconf" not in response.content


def test_json_nested_a_thousand_deep_answers_400_to_an_anonymous_sign_in() -> None:
    response = Client().post("/api/auth-token/", DEEP, content_type="application/json")

    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


@pytest.mark.parametrize("path", ["/api/work/claim", "/api/batches/"])
def test_json_nested_a_thousand_deep_answers_400_to_an_account(cast: Cast, path: str) -> None:
    researcher = Client()
    researcher.force_login(cast.researcher)

    response = researcher.post(path, DEEP, content_type="application/json")

    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


def test_json_nested_a_thousand_deep_in_an_admin_form_answers_400(cast: Cast) -> None:
    admin = Client()
    cast.researcher.is_superuser = True
    cast.researcher.save()
    admin.force_login(cast.researcher)

    response = admin.post("/admin/review/reviewsettings/add/", {"signal_overrides": DEEP})

    assert response.status_code == 400


def test_the_schema_is_for_researchers_only(cast: Cast) -> None:
    annotator = APIClient()
    annotator.force_authenticate(cast.alice)
    researcher = APIClient()
    researcher.force_authenticate(cast.researcher)

    assert APIClient().get("/api/schema/").status_code in (401, 403)
    assert annotator.get("/api/schema/").status_code == 403
    assert researcher.get("/api/schema/").status_code == 200
    # Its browsable page likewise (a page: the sign-in for a visitor, the friendly 403 for an annotator).
    for user, status in ((cast.alice, 403), (cast.researcher, 200)):
        page = Client()
        page.force_login(user)
        assert page.get("/docs/api/").status_code == status


def test_the_login_page_still_signs_in(cast: Cast) -> None:
    client = Client()
    response = client.post("/accounts/login/", {"username": cast.alice.username, "password": PASSWORD})

    assert response.status_code == 302
    assert client.get("/work/").status_code == 200


def test_the_prolific_study_page_is_open_to_anyone_and_trusts_no_parameter(cast: Cast) -> None:
    """Access decision for /prolific/study/<batch>/: public (participants have no account), like the
    MTurk page; it shows a preview, refuses ids that are not Prolific's or of another study, and
    nothing saved from it counts before a sync (tests/hits/test_prolific_backend.py)."""
    from hits.models import HIT, Batch
    from tests.hits.factories import make_benchmark, make_target

    benchmark = make_benchmark()
    batch = Batch.objects.create(benchmark=benchmark, step=2, backend="prolific", external={"study_id": "s" * 24})
    HIT.objects.create(batch=batch, target=make_target(benchmark), part=0, assignments_required=3)
    anonymous = Client()
    annotator = Client()
    annotator.force_login(cast.alice)

    assert anonymous.get(f"/prolific/study/{batch.pk}/").status_code == 200
    forged = f"/prolific/study/{batch.pk}/?PROLIFIC_PID=x&STUDY_ID={'o' * 24}&SESSION_ID=y"
    assert anonymous.get(forged).status_code == 400
    assert anonymous.get(f"/prolific/study/{batch.pk}/?PROLIFIC_PID=a%3Cb&STUDY_ID=c&SESSION_ID=d").status_code == 400
    assert annotator.get(f"/batches/{batch.pk}/crowd/").status_code == 403
    assert anonymous.get(f"/batches/{batch.pk}/crowd/").status_code == 302


# --- the permission matrix: every URL's access decision, per role ---------------------------------

# (method, path, expected status for anonymous / annotator / researcher; the API answers 403 to an
# anonymous caller, as to a role it refuses). The paths take the names of a benchmark with a
# qualification test ({name}) and of one person's attempt on it ({attempt}). A
# researcher may take a test as annotators do (they try their own HITs). The last two POSTs succeed
# for a researcher (302 back to the page); an empty submit is refused as incomplete (400).
PERMISSION_MATRIX: list[tuple[str, str, tuple[int, int, int]]] = [
    ("get", "/work/qualification/{name}/", (302, 200, 200)),
    ("post", "/work/qualification/{name}/", (302, 400, 400)),
    ("get", "/benchmarks/{name}/qualification/", (302, 403, 200)),
    ("post", "/benchmarks/{name}/qualification/active/", (302, 403, 302)),
    ("post", "/benchmarks/{name}/qualification/attempts/{attempt}/reset/", (302, 403, 302)),
    ("get", "/api/work/qualification/{name}", (403, 200, 200)),
    ("post", "/api/work/qualification/{name}/submit", (403, 400, 400)),
    ("get", "/api/benchmarks/{name}/qualification", (403, 403, 200)),
    ("put", "/api/benchmarks/{name}/qualification", (403, 403, 400)),
    ("get", "/api/benchmarks/{name}/qualification/attempts", (403, 403, 200)),
]
# URL names the matrix must cover: each new URL is added here and gets its row above.
MATRIX_URL_NAMES = {
    "qualification-take",
    "qualification-detail",
    "qualification-active",
    "qualification-reset",
    "api-work-qualification",
    "api-work-qualification-submit",
    "api-qualification",
    "api-qualification-attempts",
}


def test_the_permission_matrix_covers_every_qualification_url() -> None:
    from django.urls import get_resolver, reverse

    names = {name for name in get_resolver().reverse_dict if isinstance(name, str) and "qualification" in name}
    assert names == MATRIX_URL_NAMES
    covered = {re.sub(r"\{\w+\}", "x", path) for _, path, _ in PERMISSION_MATRIX}
    for name in MATRIX_URL_NAMES:
        args = ["x", 1] if name == "qualification-reset" else ["x"]
        assert reverse(name, args=args).replace("/1/", "/x/") in covered, name


@pytest.mark.parametrize(("method", "path", "expected"), PERMISSION_MATRIX)
def test_each_url_answers_each_role_as_the_matrix_says(
    cast: Cast, method: str, path: str, expected: tuple[int, int, int]
) -> None:
    from annotation.models import Benchmark
    from hits.qualification import GoldItem, qualification_attempt_start, qualification_build

    benchmark = Benchmark.objects.create(name="gated")
    context = "The bright student solved it."
    items = [GoldItem(context, "bright", 4, "clever", "accept"), GoldItem(context, "bright", 4, "table", "reject")]
    test = qualification_build(benchmark=benchmark, items=items, length=2, pass_mark=1.0)
    attempt = qualification_attempt_start(test=test, worker=cast.bob.worker)
    url = path.format(name=benchmark.name, attempt=attempt.pk)
    anonymous, annotator, researcher = APIClient(), APIClient(), APIClient()
    annotator.force_login(cast.alice)
    researcher.force_login(cast.researcher)

    found = tuple(
        getattr(client, method)(url, {}, format="json").status_code for client in (anonymous, annotator, researcher)
    )

    assert found == expected
