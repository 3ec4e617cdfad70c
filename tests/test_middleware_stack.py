"""The site's middleware stack answers every kind of request as Django's own stack did, layer for
layer: the same status, headers and body for a page, a page with a message, an API answer, the
API's errors and spellings, a page's 404, a CSRF refusal, input nested too deeply, a static file
and the sign-in page (docs/design.md §7, "The request's fixed cost")."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlencode

import pytest
from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from crowdlex.api_errors import ResolvingOnceHandler
from crowdlex.middleware import refuse_deep_nesting
from tests.base import Cast
from tests.hits.factories import make_benchmark, make_hits
from tests.wsgi import wsgi_call

pytestmark = pytest.mark.django_db

CSRF = "b" * 32
FORM = "application/x-www-form-urlencoded"


class NestingLayer:
    """The refusal of deep nesting as the layer of its own it was."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponseBase | None:
        return refuse_deep_nesting(request, exception)


class HeadersLayer:
    """The policy and never-cache headers as the layer of their own they were."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        from crowdlex.middleware import content_security_policy

        self.get_response = get_response
        self.policy = content_security_policy()

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        from crowdlex.middleware import never_cache

        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", self.policy)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            never_cache(response)
        return response


# Django's stack with each of the site's parts a layer of its own, in the order they had.
REFERENCE = [
    "django.middleware.security.SecurityMiddleware",
    f"{__name__}.HeadersLayer",
    "crowdlex.api_errors.ApiMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    f"{__name__}.NestingLayer",
    "axes.middleware.AxesMiddleware",
]


def comparable(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers in order, with the instants of ``Expires`` and cookies' expiry left out (the two
    stacks answer a second apart at most), and a new CSRF cookie's random secret."""
    seconds = re.compile(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT")
    secret = re.compile(r"csrftoken=\w+")
    return [(name, secret.sub("csrftoken=<secret>", seconds.sub("<instant>", value))) for name, value in headers]


def without_tokens(body: bytes) -> bytes:
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"<token>", body)


def requests(cast: Cast) -> list[tuple[str, str, bytes, dict[str, str]]]:
    make_hits(make_benchmark(), 3)
    browser = Client()
    browser.force_login(cast.researcher)
    session = browser.cookies["sessionid"].value
    signed_in = {"HTTP_COOKIE": f"sessionid={session}; csrftoken={CSRF}"}
    token = Token.objects.create(user=cast.alice).key
    by_token = {"HTTP_AUTHORIZATION": f"Token {token}", "CONTENT_TYPE": "application/json"}
    # A message, as its cookie keeps it between the request that added it and the next.
    browser.post("/benchmarks/", {"name": "with-a-message", "scheme": "swords"})
    message = browser.cookies["messages"].value
    with_message = {"HTTP_COOKIE": f"sessionid={session}; csrftoken={CSRF}; messages={message}"}
    cast.researcher.is_superuser = True
    cast.researcher.save()
    deep = urlencode({"signal_overrides": "[" * 1000 + "]" * 1000, "csrfmiddlewaretoken": CSRF}).encode()
    return [
        ("GET", "/benchmarks/", b"", signed_in),
        ("GET", "/benchmarks/", b"", with_message),
        ("GET", "/api/benchmarks/", b"", with_message),
        ("GET", "/healthz", b"", with_message),
        ("GET", "/healthz", b"", {}),
        ("GET", "/accounts/login/", b"", {}),
        ("GET", "/no-such-page/", b"", signed_in),
        ("GET", "/api/benchmarks", b"", {"HTTP_AUTHORIZATION": f"Token {token}"}),
        ("POST", "/api/work/claim", b"{}", by_token),
        ("POST", "/api/work/claim/", b"{}", by_token),
        ("POST", "/api/no-such-thing", b"{}", by_token),
        ("GET", "/api/benchmarks/?" + "x" * settings.API_MAX_URL_LENGTH, b"", by_token),
        ("POST", "/api/work/claim", b"{}", {**signed_in, "CONTENT_TYPE": "application/json"}),
        ("POST", "/benchmarks/", b"name=refused-without-its-token", {**signed_in, "CONTENT_TYPE": FORM}),
        ("POST", "/api/auth-token/", b"[" * 1000 + b"]" * 1000, {"CONTENT_TYPE": "application/json"}),
        ("POST", "/admin/review/reviewsettings/add/", deep, {**signed_in, "CONTENT_TYPE": FORM}),
        ("GET", f"/{settings.STATIC_URL}crowdlex/crowdlex.css", b"", {}),
    ]


def test_every_kind_of_request_is_answered_as_by_djangos_own_stack(cast: Cast, served: None) -> None:
    cases = requests(cast)
    ours = ResolvingOnceHandler()
    with override_settings(MIDDLEWARE=REFERENCE):
        reference = ResolvingOnceHandler()
    for method, path, body, headers in cases:
        status, answered, content = wsgi_call(ours, method, path, body, **headers)
        with override_settings(MIDDLEWARE=REFERENCE):
            expected_status, expected, expected_content = wsgi_call(reference, method, path, body, **headers)
        where = f"{method} {path[:60]}"
        assert status == expected_status, where
        assert comparable(answered) == comparable(expected), where
        assert without_tokens(content) == without_tokens(expected_content), where


def test_the_message_a_view_adds_is_shown_once_on_the_next_page(cast: Cast) -> None:
    client = Client()
    client.force_login(cast.researcher)
    created = client.post("/benchmarks/", {"name": "Kept", "scheme": "swords"}, follow=True)
    assert "Benchmark Kept created" in created.content.decode()
    assert "Benchmark Kept created" not in client.get("/benchmarks/").content.decode()


def test_a_message_waits_through_answers_that_show_none(cast: Cast) -> None:
    client = Client()
    client.force_login(cast.researcher)
    client.post("/benchmarks/", {"name": "Waiting", "scheme": "swords"})
    for path in ("/healthz", "/api/benchmarks/"):
        answer = client.get(path)
        assert answer.status_code == 200
        assert "messages" not in answer.cookies
    assert "Benchmark Waiting created" in client.get("/benchmarks/").content.decode()
