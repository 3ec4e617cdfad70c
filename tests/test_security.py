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
    nothing saved from it counts before a sync (tests/crowds/test_prolific_backend.py)."""
    from hits.models import HIT, Batch
    from tests.hits.factories import make_benchmark, make_target

    benchmark = make_benchmark()
    batch = Batch.objects.create(benchmark=benchmark, step=2, backend="prolific", external={"study_id": "s" * 24})
    HIT.objects.create(batch=batch, target=make_target(benchmark), part=0, assignments_required=3)
    anonymous = Client()
    annotator = Client()
    annotator.force_login(cast.alice)

    assert anonymous.get(f"/prolific/study/{batch.public_token}/").status_code == 200
    forged = f"/prolific/study/{batch.public_token}/?PROLIFIC_PID=x&STUDY_ID={'o' * 24}&SESSION_ID=y"
    assert anonymous.get(forged).status_code == 400
    assert (
        anonymous.get(f"/prolific/study/{batch.public_token}/?PROLIFIC_PID=a%3Cb&STUDY_ID=c&SESSION_ID=d").status_code
        == 400
    )
    assert annotator.get(f"/batches/{batch.pk}/crowd/").status_code == 403
    assert anonymous.get(f"/batches/{batch.pk}/crowd/").status_code == 302
