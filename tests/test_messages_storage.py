"""The messages' storage (``crowdlex.messages``) answers as Django's default one: the same cookie for
the same messages, the same messages from a cookie (Django's or its own), the same refusal of a
tampered one, the session for what the cookie cannot hold; what it keeps is forgotten when the
secret changes, and bounded (docs/design.md §7, "The request's fixed cost")."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from django.contrib import messages
from django.contrib.messages.storage.base import BaseStorage
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.http import HttpResponse
from django.test import RequestFactory, override_settings
from django.utils.safestring import SafeData, mark_safe

from crowdlex import messages as kept
from crowdlex.messages import MessageStorage

# What a request adds: the cycle's line, a safe one with tags, several, and more than a cookie holds.
ADDED: list[list[tuple[int, str, str]]] = [
    [(messages.SUCCESS, "Saved: part 1 of 2 for “old”. Thank you!", "")],
    [(messages.INFO, mark_safe("<b>safe</b>"), "extra tags")],
    [(messages.ERROR, "one", "")],
    [(messages.ERROR, "one", ""), (messages.WARNING, "two", "")],
    # Text that does not compress: the cookie holds some, the session the rest.
    [
        (messages.INFO, "".join(hashlib.sha256(f"{i}.{j}".encode()).hexdigest() for j in range(4)), "")
        for i in range(12)
    ],
]


def _request(cookie: str | None = None, session: dict[str, Any] | None = None) -> Any:
    request = RequestFactory().get("/")
    request.COOKIES = {"messages": cookie} if cookie is not None else {}
    request.session = SessionStore()
    request.session.update(session or {})
    return request


def _added(storage_class: type[BaseStorage], added: list[tuple[int, str, str]]) -> tuple[Any, HttpResponse]:
    request = _request()
    storage = storage_class(request)
    for level, text, tags in added:
        storage.add(level, text, tags)
    response = HttpResponse()
    storage.update(response)
    return request, response


def _read(storage_class: type[BaseStorage], cookie: str | None, session: dict[str, Any]) -> tuple[Any, HttpResponse]:
    request = _request(cookie, session)
    storage = storage_class(request)
    shown = [(m.level, m.message, m.extra_tags, m.tags, isinstance(m.message, SafeData)) for m in storage]
    response = HttpResponse()
    storage.update(response)
    return shown, response


def _cookie(response: HttpResponse) -> str | None:
    morsel = response.cookies.get("messages")
    return None if morsel is None else morsel.OutputString()


@pytest.mark.parametrize("added", ADDED)
def test_the_same_cookie_and_session_as_djangos_and_the_same_messages_read_back(added: Any) -> None:
    for _ in range(2):  # the second time from what was kept
        ours_request, ours = _added(MessageStorage, added)
        django_request, djangos = _added(FallbackStorage, added)
        assert _cookie(ours) == _cookie(djangos)
        assert dict(ours_request.session) == dict(django_request.session)
        assert ("_messages" in ours_request.session) == (len(added) == 12)
        value = djangos.cookies["messages"].value
        session = dict(django_request.session)
        for reader in range(2):
            shown, response = _read(MessageStorage, value, session)
            expected, expected_response = _read(FallbackStorage, value, session)
            assert shown == expected, reader
            assert [text for _, text, *_ in shown] == [text for _, text, _ in added]
            assert _cookie(response) == _cookie(expected_response)  # deleted once read


def test_a_read_message_is_a_new_object_each_time() -> None:
    _, response = _added(MessageStorage, ADDED[0])
    value = response.cookies["messages"].value
    first = list(MessageStorage(_request(value)))
    first[0].message = "changed"
    first[0].extra_tags = "changed"
    again = list(MessageStorage(_request(value)))
    assert (again[0].message, again[0].extra_tags) == (ADDED[0][0][1], "")


@pytest.mark.parametrize("cookie", ["", "garbage", None])
def test_a_tampered_or_missing_cookie_is_answered_as_by_django(cookie: str | None) -> None:
    _, response = _added(MessageStorage, ADDED[0])
    value = response.cookies["messages"].value
    _read(MessageStorage, value, {})  # the genuine value kept first
    tampered = value[:-2] + ("AA" if value[-2:] != "AA" else "BB")
    for sent in (tampered, cookie):
        shown, answered = _read(MessageStorage, sent, {})
        expected, expected_response = _read(FallbackStorage, sent, {})
        assert shown == expected == []
        assert _cookie(answered) == _cookie(expected_response)


def test_a_new_secret_refuses_what_the_old_one_signed() -> None:
    with override_settings(SECRET_KEY="the-old-secret-" + "o" * 40):
        _, response = _added(MessageStorage, ADDED[0])
        value = response.cookies["messages"].value
        assert len(_read(MessageStorage, value, {})[0]) == 1
    with override_settings(SECRET_KEY="the-new-secret-" + "n" * 40):
        assert _read(MessageStorage, value, {})[0] == []
        _, renewed = _added(MessageStorage, ADDED[0])
        assert renewed.cookies["messages"].value != value


def test_what_is_kept_is_bounded() -> None:
    with override_settings(MESSAGE_COOKIES_KEPT=2):
        for i in range(5):
            _, response = _added(MessageStorage, [(messages.INFO, f"message {i}", "")])
            _read(MessageStorage, response.cookies["messages"].value, {})
            assert len(kept._SIGNED) <= 2 and len(kept._READ) <= 2
