"""The top bar: its links are built once per kind of reader (annotation/templatetags/navigation.py),
while the sign-out form's CSRF token and the account's name are each reader's own, on every page
(docs/design.md §7, "The top bar")."""

from __future__ import annotations

import re

import pytest
from django.middleware.csrf import _unmask_cipher_token  # type: ignore[attr-defined]
from django.test import Client
from django.urls import reverse

from tests.base import Cast, make_user

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def _bar(html: str) -> str:
    return html[html.index('<header class="topbar">') : html.index("</header>")]


def _links(bar: str) -> list[str]:
    return re.findall(r'<a (?:class="brand" )?href="([^"]+)">', bar)


def _reader(user: object) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_each_reader_gets_the_links_of_their_role_and_their_own_name_and_token(cast: Cast) -> None:
    other = make_user("vera", researcher=True)
    readers = [(cast.researcher, _reader(cast.researcher)), (other, _reader(other)), (cast.alice, _reader(cast.alice))]
    researcher_links = ["/", reverse("benchmark-list"), reverse("people"), reverse("admin:index"), reverse("api-token")]
    # Alternating readers, twice: what one reader's request built is never what the next one sees.
    for _ in range(2):
        for user, client in readers:
            bar = _bar(client.get(reverse("api-token")).content.decode())
            expected = researcher_links if user.is_staff else ["/", reverse("work-home"), reverse("api-token")]
            assert _links(bar) == expected, user.username
            assert f"Log out {user.username}" in bar
            assert [name for name in ("rita", "vera", "alice") if f"Log out {name}" in bar] == [user.username]
            (token,) = TOKEN.findall(bar)
            assert _unmask_cipher_token(token) == client.cookies["csrftoken"].value, user.username


def test_a_signed_out_reader_gets_no_navigation() -> None:
    html = Client().get(reverse("login")).content.decode()
    bar = _bar(html)
    assert _links(bar) == ["/"]
    assert "Log out" not in bar and "csrfmiddlewaretoken" not in bar


def test_a_kept_static_url_follows_the_file_the_script_prefix_and_the_settings() -> None:
    from django.conf import settings
    from django.templatetags.static import static
    from django.test import override_settings
    from django.urls import set_script_prefix

    from annotation.templatetags.navigation import kept_static

    files = ["crowdlex/crowdlex.css", "crowdlex/local_time.js"]
    try:
        for prefix in ("/", "/crowdlex/", "/"):
            set_script_prefix(prefix)
            for path in files:
                assert kept_static(path) == static(path)
        with override_settings(STATIC_URL="https://assets.example/kept/"):
            assert [kept_static(path) for path in files] == [f"https://assets.example/kept/{path}" for path in files]
            assert [kept_static(path) for path in files] == [static(path) for path in files]
        storage = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
        elsewhere = {**storage, "OPTIONS": {"base_url": "https://files.example/crowdlex/"}}
        with override_settings(STORAGES={**settings.STORAGES, "staticfiles": elsewhere}):
            assert [kept_static(path) for path in files] == [f"https://files.example/crowdlex/{path}" for path in files]
            assert [kept_static(path) for path in files] == [static(path) for path in files]
        assert kept_static(files[0]) == static(files[0]) == "/static/crowdlex/crowdlex.css"
    finally:
        set_script_prefix("/")


def test_each_page_links_its_styles_and_scripts_as_djangos_static_tag_does(cast: Cast) -> None:
    from django.templatetags.static import static

    html = _reader(cast.researcher).get(reverse("api-token")).content.decode()
    assert f'<link rel="stylesheet" href="{static("crowdlex/crowdlex.css")}">' in html
    assert f'<script src="{static("crowdlex/local_time.js")}" defer></script>' in html


def test_the_forms_token_is_the_cookies_secret_under_a_fresh_uniform_mask_and_django_accepts_it(cast: Cast) -> None:
    """``crowdlex.context_processors.csrf`` masks the token with one read of the system's randomness:
    each page's token unmasks to the cookie's secret, no two pages share a mask, every character of
    the alphabet is as likely in a mask as any other, and Django's middleware accepts the token
    (a tampered one is refused)."""
    from collections import Counter

    from django.http import HttpRequest
    from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH

    from crowdlex.context_processors import masked_token

    client = _reader(cast.researcher)
    tokens = [TOKEN.findall(_bar(client.get(reverse("api-token")).content.decode()))[0] for _ in range(3)]
    secret = client.cookies["csrftoken"].value
    assert len(secret) == CSRF_SECRET_LENGTH
    assert all(_unmask_cipher_token(token) == secret for token in tokens)
    assert len({token[:CSRF_SECRET_LENGTH] for token in tokens}) == 3
    request = HttpRequest()
    request.META["CSRF_COOKIE"] = secret
    masks = Counter[str]()
    for _ in range(4000):
        token = masked_token(request)
        assert len(token) == 2 * CSRF_SECRET_LENGTH and set(token) <= set(CSRF_ALLOWED_CHARS)
        assert _unmask_cipher_token(token) == secret
        masks.update(token[:CSRF_SECRET_LENGTH])
    expected = 4000 * CSRF_SECRET_LENGTH / len(CSRF_ALLOWED_CHARS)  # about 2,065 each
    assert set(masks) == set(CSRF_ALLOWED_CHARS)
    assert all(abs(count - expected) < 0.1 * expected for count in masks.values()), masks.most_common(3)
    assert request.META["CSRF_COOKIE_NEEDS_UPDATE"] is True  # the cookie is sent again, as Django's does
    tampered = tokens[0][:-1] + ("a" if tokens[0][-1] != "a" else "b")
    refused = client.post(reverse("logout"), {"csrfmiddlewaretoken": tampered})
    assert refused.status_code == 403
    signed_out = client.post(reverse("logout"), {"csrfmiddlewaretoken": tokens[-1]})
    assert signed_out.status_code == 302
