"""Sign-ins are throttled and locked out after repeated failures; claim and submit are throttled
per account, generously; the limits come from settings."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from hits.models import Assignment
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db

SIGN_INS = {
    "login page": ("/accounts/login/", "username"),
    "admin login": ("/admin/login/", "username"),
    "API token": ("/api/auth-token/", "username"),
}


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    cache.clear()


def _rates(settings: Settings, **rates: str) -> None:
    throttles = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": throttles}


def _sign_in(client: Client, path: str, username: str, password: str) -> Any:
    return client.post(path, {"username": username, "password": password})


def _signed_in(response: Any, path: str) -> bool:
    if path == "/api/auth-token/":
        return response.status_code == 200 and "token" in response.json()
    return response.status_code == 302


@pytest.mark.parametrize("path", [path for path, _ in SIGN_INS.values()], ids=list(SIGN_INS))
def test_repeated_failed_sign_ins_lock_the_account_out_from_that_address(
    cast: Cast, settings: Settings, path: str
) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(3):
        assert not _signed_in(_sign_in(client, path, cast.researcher.username, "wrong"), path)

    # The right password no longer helps, from this address; the account works from another.
    locked = _sign_in(client, path, cast.researcher.username, PASSWORD)
    assert locked.status_code == 429
    other = Client(REMOTE_ADDR="192.0.2.7")
    assert _signed_in(_sign_in(other, path, cast.researcher.username, PASSWORD), path)


def test_a_successful_sign_in_forgets_earlier_failures(cast: Cast, settings: Settings) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(2):
        _sign_in(client, "/accounts/login/", cast.alice.username, "wrong")
    assert _signed_in(_sign_in(client, "/accounts/login/", cast.alice.username, PASSWORD), "/accounts/login/")
    client.logout()
    for _ in range(2):
        _sign_in(client, "/accounts/login/", cast.alice.username, "wrong")

    assert _signed_in(_sign_in(client, "/accounts/login/", cast.alice.username, PASSWORD), "/accounts/login/")


@pytest.mark.parametrize("path", [path for path, _ in SIGN_INS.values()], ids=list(SIGN_INS))
def test_sign_in_attempts_are_throttled_per_address(cast: Cast, settings: Settings, path: str) -> None:
    _rates(settings, **{"sign-in": "2/minute"})
    client = Client()
    for name in ("bob", "carol"):
        assert _sign_in(client, path, name, "wrong").status_code != 429

    throttled = _sign_in(client, path, cast.researcher.username, PASSWORD)

    assert throttled.status_code == 429
    assert int(throttled.headers["Retry-After"]) > 0
    elsewhere = Client(REMOTE_ADDR="192.0.2.8")
    assert _signed_in(_sign_in(elsewhere, path, cast.researcher.username, PASSWORD), path)


def _token_client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_claims_through_the_api_are_throttled_per_account(cast: Cast, settings: Settings) -> None:
    make_hits(make_benchmark(), 3)
    _rates(settings, claim="2/minute")
    alice = _token_client(cast.alice)
    for _ in range(2):
        assert alice.post("/api/work/claim", {}, format="json").status_code == 200

    refused = alice.post("/api/work/claim", {}, format="json")

    assert refused.status_code == 429
    assert "Retry-After" in refused.headers
    assert _token_client(cast.bob).post("/api/work/claim", {}, format="json").status_code == 200


def test_submits_through_the_api_are_throttled_per_account(cast: Cast, settings: Settings) -> None:
    make_hits(make_benchmark(), 1)
    _rates(settings, submit="1/minute")
    alice = _token_client(cast.alice)
    claimed = alice.post("/api/work/claim", {}, format="json").json()
    url = f"/api/work/assignments/{claimed['id']}/submit"
    answers = {str(item["id"]): "abstain" for item in claimed["items"]}

    assert alice.post(url, {"answers": {}}, format="json").status_code == 400
    assert alice.post(url, {"answers": answers}, format="json").status_code == 429
    assert Assignment.objects.get(pk=claimed["id"]).status == "claimed"


def test_claims_and_submits_on_the_pages_are_throttled_too(cast: Cast, settings: Settings) -> None:
    make_hits(make_benchmark(), 3)
    _rates(settings, claim="1/minute", submit="1/minute")
    client = Client()
    client.force_login(cast.alice)
    opened = client.post("/work/next")
    assert opened.status_code == 302

    page = opened["Location"]
    assert client.post("/work/next").status_code == 429
    assert client.post(page, {}).status_code == 400
    assert client.post(page, {}).status_code == 429
    # Reading is never throttled.
    assert client.get(page).status_code == 200


def test_a_person_working_by_hand_is_never_throttled(cast: Cast) -> None:
    """Sixty claims and sixty submits a minute by default: a HIT takes a person far longer than a second."""
    make_hits(make_benchmark(), 30)
    alice = _token_client(cast.alice)
    for _ in range(30):
        claimed = alice.post("/api/work/claim", {}, format="json")
        assert claimed.status_code == 200
        body = claimed.json()
        answers = {str(item["id"]): "abstain" for item in body["items"]}
        submitted = alice.post(f"/api/work/assignments/{body['id']}/submit", {"answers": answers}, format="json")
        assert submitted.status_code == 200
