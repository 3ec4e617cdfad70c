"""Every /api/ path answers errors as JSON of one shape, accepts either trailing-slash spelling,
challenges a request without credentials (401 with WWW-Authenticate), and the site answers a
friendly 403 page to an annotator who opens a researcher's page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.base import Cast
from tests.hits.factories import make_benchmark

pytestmark = pytest.mark.django_db


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _is_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert isinstance(body, dict) and isinstance(body["detail"], str) and body["detail"]
    return body


def test_an_unknown_api_path_answers_a_json_404(cast: Cast) -> None:
    _is_error(_api(cast.researcher).get("/api/no/such/thing/"), 404)
    _is_error(APIClient().get("/api/nothing-here"), 404)


def test_a_row_that_does_not_exist_answers_a_json_404(cast: Cast) -> None:
    _is_error(_api(cast.researcher).get("/api/batches/999999/"), 404)


def test_a_path_answers_with_or_without_its_trailing_slash(cast: Cast) -> None:
    researcher = _api(cast.researcher)
    make_benchmark(name="slashes")

    assert researcher.get("/api/benchmarks").status_code == 200
    assert researcher.get("/api/benchmarks/slashes").json()["name"] == "slashes"
    assert researcher.get("/api/benchmarks/slashes/statistics/").status_code == 200
    # A POST is routed, not redirected: a redirect would lose its body.
    claimed = _api(cast.alice).post("/api/work/claim/", {}, format="json")
    assert claimed.status_code == 204


def test_a_method_a_path_does_not_have_answers_a_json_405_naming_the_allowed_ones(cast: Cast) -> None:
    response = _api(cast.researcher).delete("/api/benchmarks/")

    _is_error(response, 405)
    assert "GET" in response["Allow"]


def test_a_body_over_the_size_limit_answers_a_json_413(cast: Cast, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = _api(cast.alice).post("/api/work/claim", {"benchmark": "x" * 5000}, format="json")

    assert "too large" in _is_error(response, 413)["detail"]


def test_an_unhandled_error_answers_a_json_500(cast: Cast, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("the database fell over")

    monkeypatch.setattr("hits.api.work.assignment_claim_next", broken)
    client = Client(raise_request_exception=False)
    client.force_login(cast.alice)

    body = _is_error(client.post("/api/work/claim", {}, content_type="application/json"), 500)
    assert "fell over" not in body["detail"]


def test_an_unknown_format_answers_json(cast: Cast) -> None:
    make_benchmark(name="formats")
    researcher = _api(cast.researcher)

    _is_error(researcher.get("/api/benchmarks/formats/export/no-such-format"), 404)
    _is_error(researcher.get("/api/benchmarks/formats/statistics?format=xml"), 404)


def test_no_credentials_or_bad_ones_answer_401_with_a_challenge() -> None:
    for client in (APIClient(), APIClient(HTTP_AUTHORIZATION="Token not-a-token")):
        response = client.get("/api/benchmarks/")
        _is_error(response, 401)
        assert response["WWW-Authenticate"] == "Token"


def test_an_account_without_the_right_still_gets_403(cast: Cast) -> None:
    _is_error(_api(cast.alice).get("/api/benchmarks/"), 403)
    session = Client()
    session.force_login(cast.alice)
    _is_error(session.get("/api/benchmarks/"), 403)


def test_refused_input_keeps_its_fields_beside_a_detail_sentence(cast: Cast) -> None:
    body = _is_error(_api(cast.researcher).post("/api/batches/", {"step": "x"}, format="json"), 400)

    assert "benchmark" in body and isinstance(body["benchmark"], list)
    assert "benchmark" in body["detail"]


def test_an_annotator_who_opens_a_researchers_page_gets_a_page_that_says_so(cast: Cast) -> None:
    make_benchmark(name="private")
    client = Client()
    client.force_login(cast.alice)

    response = client.get("/benchmarks/private/")

    assert response.status_code == 403
    text = response.content.decode()
    assert "for the researchers" in text and "Go to my work" in text and "alice" in text


def test_the_api_reference_page_is_for_researchers_and_loads_only_the_platforms_files(cast: Cast) -> None:
    researcher = Client()
    researcher.force_login(cast.researcher)
    annotator = Client()
    annotator.force_login(cast.alice)

    page = researcher.get("/docs/api/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in html
    assert "https://" not in html
    assert annotator.get("/docs/api/").status_code == 403
    assert Client().get("/docs/api/").status_code == 302
