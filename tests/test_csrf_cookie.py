"""The CSRF cookie is sent again only where it may lapse (``crowdlex.context_processors.cookie_may_lapse``,
docs/design.md §7, "The form's token"): not on the pages of a recent sign-in, whose cookie was set
then, but on a first visit, to a browser that dropped it, and to a session signed in long ago or
at no noted time; and Django checks every form's token as before, through the sign-in page and the
annotator's cycle, with its checks enforced."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.middleware.csrf import _unmask_cipher_token  # type: ignore[attr-defined]
from django.test import Client, override_settings
from django.utils import timezone

from hits.signin import SIGNED_IN_KEY
from tests.base import PASSWORD, Cast
from tests.hits.factories import make_benchmark, make_hits

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def sets_csrf_cookie(response: Any) -> bool:
    return "csrftoken" in response.cookies


def token_of(response: Any) -> str:
    return TOKEN.findall(response.content.decode())[-1]


def signed_in(cast: Cast) -> Client:
    """A browser that signed in through the sign-in page, its checks enforced, with work to do."""
    make_hits(make_benchmark(), 4)
    client = Client(enforce_csrf_checks=True)
    first = client.get("/accounts/login/")
    assert sets_csrf_cookie(first)  # a first visit gets its cookie
    before = client.cookies["csrftoken"].value
    response = client.post(
        "/accounts/login/",
        {"username": cast.alice.username, "password": PASSWORD, "csrfmiddlewaretoken": token_of(first)},
    )
    assert response.status_code == 302
    # Signing in rotates the secret and sends the new cookie.
    assert sets_csrf_cookie(response) and client.cookies["csrftoken"].value != before
    return client


def age_sign_in(client: Client, ago: timedelta | None) -> None:
    session = client.session
    if ago is None:
        del session[SIGNED_IN_KEY]
    else:
        session[SIGNED_IN_KEY] = (timezone.now() - ago).isoformat()
    session.save()


def cycle(client: Client) -> tuple[Any, Any]:
    """Claim a HIT, open its page, and submit it with the page's token: the page and the submit."""
    home = client.get("/work/")
    claimed = client.post("/work/next", {"csrfmiddlewaretoken": token_of(home)})
    assert claimed.status_code == 302, claimed
    page = client.get(claimed["Location"])
    assert page.status_code == 200
    answers = {name: "accept" for name in dict.fromkeys(re.findall(r'name="(item-\d+)"', page.content.decode()))}
    submitted = client.post(claimed["Location"], {"csrfmiddlewaretoken": token_of(page), **answers})
    assert submitted.status_code == 302, submitted.content[:300]
    return page, submitted


def test_a_recent_sign_in_keeps_its_cookie_unsent_and_every_form_still_passes(cast: Cast) -> None:
    client = signed_in(cast)
    secret = client.cookies["csrftoken"].value
    for _ in range(2):
        page, submitted = cycle(client)
        assert not sets_csrf_cookie(page) and not sets_csrf_cookie(submitted)
        assert _unmask_cipher_token(token_of(page)) == secret
        assert page.headers["Vary"] == "Cookie"  # as when the cookie was sent (the session is read)


@pytest.mark.parametrize("ago", [timedelta(days=183), timedelta(days=-1), None])
def test_an_old_or_unknown_sign_in_renews_the_cookie_on_every_page(cast: Cast, ago: timedelta | None) -> None:
    client = signed_in(cast)
    secret = client.cookies["csrftoken"].value
    age_sign_in(client, ago)
    page, _ = cycle(client)
    assert sets_csrf_cookie(page)
    assert page.cookies["csrftoken"].value == secret
    assert page.cookies["csrftoken"]["max-age"] == 31449600


def test_renewing_after_can_be_set(cast: Cast) -> None:
    client = signed_in(cast)
    age_sign_in(client, timedelta(hours=2))
    with override_settings(CSRF_COOKIE_RENEW_AFTER_SECONDS=3600):
        assert sets_csrf_cookie(cycle(client)[0])
    with override_settings(CSRF_COOKIE_RENEW_AFTER_SECONDS=3 * 3600):
        assert not sets_csrf_cookie(cycle(client)[0])
    # A cookie that lives less than twice the setting is renewed after half its own age.
    with override_settings(CSRF_COOKIE_RENEW_AFTER_SECONDS=3 * 3600, CSRF_COOKIE_AGE=3 * 3600):
        assert sets_csrf_cookie(cycle(client)[0])
    with override_settings(CSRF_COOKIE_RENEW_AFTER_SECONDS=3 * 3600, CSRF_COOKIE_AGE=5 * 3600):
        assert not sets_csrf_cookie(cycle(client)[0])


def test_a_browser_that_dropped_its_cookie_gets_a_new_one_and_its_forms_pass(cast: Cast) -> None:
    client = signed_in(cast)
    old = client.cookies["csrftoken"].value
    del client.cookies["csrftoken"]
    home = client.get("/work/")
    assert sets_csrf_cookie(home)
    assert client.cookies["csrftoken"].value != old
    cycle(client)


def test_a_forged_submit_is_still_refused(cast: Cast) -> None:
    """Without the token, or with one of another secret, a submit is refused (403) and saves nothing."""
    client = signed_in(cast)
    home = client.get("/work/")
    claimed = client.post("/work/next", {"csrfmiddlewaretoken": token_of(home)})
    page = client.get(claimed["Location"])
    answers = {name: "accept" for name in set(re.findall(r'name="(item-\d+)"', page.content.decode()))}
    other = Client(enforce_csrf_checks=True)
    foreign = token_of(other.get("/accounts/login/"))
    for token in ({}, {"csrfmiddlewaretoken": foreign}):
        refused = client.post(claimed["Location"], {**token, **answers})
        assert refused.status_code == 403
    assert client.get(claimed["Location"]).status_code == 200
    from hits.models import Assignment, AssignmentStatus

    assert Assignment.objects.get(worker__user=cast.alice).status == AssignmentStatus.CLAIMED
