import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from pytest_django.fixtures import Settings
from rest_framework.authtoken.models import Token
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory

from annotation.models import Worker
from annotation.roles import ANNOTATORS, ensure_groups, is_annotator, is_researcher
from annotation.services import worker_for_user
from crowdlex.authentication import TokenAuthentication
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_an_unknown_token_is_refused() -> None:
    response = client_with("0" * 40).post("/api/work/claim", {}, format="json")

    # A refused token is challenged: 401 with the scheme to use.
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert response.json()["detail"] == "Invalid token."


def test_the_token_of_an_inactive_account_is_refused(cast: Cast) -> None:
    token = Token.objects.create(user=cast.alice)
    User.objects.filter(pk=cast.alice.pk).update(is_active=False)

    response = client_with(token.key).post("/api/work/claim", {}, format="json")

    # A refused token is challenged: 401 with the scheme to use.
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"
    assert response.json()["detail"] == "User inactive or deleted."


def test_an_account_without_a_role_may_not_claim(db: None) -> None:
    token = Token.objects.create(user=User.objects.create_user("nobody"))

    assert client_with(token.key).post("/api/work/claim", {}, format="json").status_code == 403


def test_an_annotator_without_a_worker_gets_one_on_the_first_claim(db: None) -> None:
    make_hits(make_benchmark(), 1)
    user = User.objects.create_user("newcomer")
    user.groups.add(ensure_groups()[1])
    token = Token.objects.create(user=user)

    response = client_with(token.key).post("/api/work/claim", {}, format="json")

    assert response.status_code == 200
    assert Worker.objects.get(user=user).external_id == "newcomer"
    assert user.groups.filter(name=ANNOTATORS).exists()


def test_a_researcher_may_use_the_annotator_endpoints_with_a_token(cast: Cast) -> None:
    make_hits(make_benchmark(), 1)
    token = Token.objects.create(user=cast.researcher)

    assert client_with(token.key).post("/api/work/claim", {}, format="json").status_code == 200


def test_a_token_past_its_age_is_refused_and_the_next_sign_in_issues_a_new_one(cast: Cast, settings: Settings) -> None:
    make_hits(make_benchmark(), 1)
    token = Token.objects.create(user=cast.alice)
    Token.objects.filter(pk=token.pk).update(created=timezone.now() - settings.API_TOKEN_MAX_AGE)

    refused = client_with(token.key).post("/api/work/claim", {}, format="json")
    obtained = APIClient().post("/api/auth-token/", {"username": "alice", "password": PASSWORD}, format="json")

    assert refused.status_code == 401
    assert refused.json()["detail"] == "Token expired: obtain a new one."
    assert obtained.status_code == 200
    assert obtained.json()["token"] != token.key
    assert client_with(obtained.json()["token"]).post("/api/work/claim", {}, format="json").status_code == 200


def test_signing_in_again_returns_the_same_token_while_it_is_valid(cast: Cast) -> None:
    first = APIClient().post("/api/auth-token/", {"username": "alice", "password": PASSWORD}, format="json")
    second = APIClient().post("/api/auth-token/", {"username": "alice", "password": PASSWORD}, format="json")

    assert first.json()["token"] == second.json()["token"]


def test_logging_out_revokes_the_token(cast: Cast) -> None:
    token = Token.objects.create(user=cast.alice)
    browser = Client()
    browser.force_login(cast.alice)

    assert browser.post("/accounts/logout/").status_code == 302

    assert not Token.objects.filter(user=cast.alice).exists()
    assert client_with(token.key).post("/api/work/claim", {}, format="json").json()["detail"] == "Invalid token."


def test_the_token_page_shows_when_the_token_ends_and_revokes_it(cast: Cast) -> None:
    token = Token.objects.create(user=cast.researcher)
    browser = Client()
    browser.force_login(cast.researcher)

    page = browser.get("/accounts/api-token/").content.decode()
    assert "works until" in page and token.key not in page
    assert browser.post("/accounts/api-token/").status_code == 302

    assert not Token.objects.filter(user=cast.researcher).exists()
    assert "You have no API token" in browser.get("/accounts/api-token/").content.decode()


def test_a_token_request_reads_the_account_its_roles_and_its_worker_in_one_query(cast: Cast) -> None:
    token = Token.objects.create(user=cast.alice)
    request = APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Token {token.key}")

    with CaptureQueriesContext(connection) as queries:
        user, _ = TokenAuthentication().authenticate(Request(request))  # type: ignore[misc]
        assert is_annotator(user) and not is_researcher(user)
        assert worker_for_user(user=user).external_id == "alice"

    assert len(queries) == 1


# Authorization headers of every shape DRF tells apart: none, another scheme, the keyword in any
# case, no key, a key with spaces, tabs or other whitespace, bytes that are no UTF-8, a str header.
HEADERS = [
    None,
    "",
    "Token",
    "token",
    "TOKEN abc",
    "Token abc",
    "Token  abc",
    "Token\tabc",
    "Token abc def",
    "Token abc\x1cdef",
    "Token \xe9t\xe9",
    "Token \xc3\xa9",
    "Bearer abc",
    "Basic dXNlcjpwYXNz",
    "Tokens abc",
    " Token abc ",
    "Token abc\n",
    "Token \x85abc",
]


def _outcome(authenticator: object, header: str | bytes | None) -> object:
    request = APIRequestFactory().post("/api/work/claim")
    if header is not None:
        request.META["HTTP_AUTHORIZATION"] = header

    def credentials(key: str) -> tuple[str, str]:
        return "credentials", key

    authenticator.authenticate_credentials = credentials  # type: ignore[attr-defined]
    try:
        return authenticator.authenticate(Request(request))  # type: ignore[attr-defined]
    except Exception as error:  # the error itself is compared
        return type(error), str(error)


@pytest.mark.parametrize("header", [*HEADERS, *(h.encode("latin-1") for h in HEADERS if h)])
def test_the_authorization_header_is_read_as_drf_reads_it(header: str | bytes | None) -> None:
    from rest_framework.authentication import TokenAuthentication as DrfTokenAuthentication

    assert _outcome(TokenAuthentication(), header) == _outcome(DrfTokenAuthentication(), header)
