import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Worker
from annotation.roles import ANNOTATORS, ensure_groups
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_an_unknown_token_is_refused() -> None:
    response = client_with("0" * 40).post("/api/work/claim", {}, format="json")

    # Session authentication comes first, so a refused token is a 403 (no WWW-Authenticate).
    assert response.status_code == 403
    assert response.json()["detail"] == "Invalid token."


def test_the_token_of_an_inactive_account_is_refused(cast: Cast) -> None:
    token = Token.objects.create(user=cast.alice)
    User.objects.filter(pk=cast.alice.pk).update(is_active=False)

    response = client_with(token.key).post("/api/work/claim", {}, format="json")

    # Session authentication comes first, so a refused token is a 403 (no WWW-Authenticate).
    assert response.status_code == 403
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
