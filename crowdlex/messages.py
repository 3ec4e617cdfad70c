"""The messages' storage: Django's own (a signed cookie, the session for what the cookie cannot
hold), with the cookie's signer made once per process and the cookies it writes and reads kept.

A message after a form ("Saved: …") is signed into a cookie on the request that adds it and read
back, then deleted, on the next page: two signings' worth of work, a signer built from the settings
each time, and JSON read through Python hooks. The same messages always make the same cookie (the
signature holds no time), so the value signed for a list of messages, and the messages a validly
signed value holds, are kept per process and given again when they come back
(docs/design.md §7, "The request's fixed cost"). Nothing is kept that a reader's own cookie does not
already hold in the clear: the cookie is signed, not encrypted, and only values whose signature
checked are kept. At most ``MESSAGE_COOKIES_KEPT`` of each, forgotten whole when full and when a
setting changes (the secret key, a test's override).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.messages.storage.base import BaseStorage, Message
from django.contrib.messages.storage.cookie import CookieStorage, MessagePartGatherSerializer
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.messages.storage.session import SessionStorage
from django.core import signing
from django.core.signals import setting_changed
from django.http import HttpRequest

# The signer of the messages' cookie (``signing.get_cookie_signer``), made when first needed.
_SIGNER: list[signing.Signer] = []
# The serialized messages (one JSON text each) -> the cookie's value.
_SIGNED: dict[tuple[str, ...], str] = {}
# A cookie's value whose signature checked -> its messages, each as Message's arguments (or the
# storage's "not finished" mark, a string).
_READ: dict[str, tuple[Any, ...]] = {}


def cookie_signer() -> signing.Signer:
    if not _SIGNER:
        _SIGNER.append(signing.get_cookie_signer(salt=CookieStorage.key_salt))
    return _SIGNER[0]


def _keep(kept: dict[Any, Any], key: Any, value: Any) -> None:
    if len(kept) >= settings.MESSAGE_COOKIES_KEPT:
        kept.clear()
    kept[key] = value


def _forget(**_: Any) -> None:
    _SIGNER.clear()
    _SIGNED.clear()
    _READ.clear()


setting_changed.connect(_forget, dispatch_uid="crowdlex.messages.forget")


class KeptCookieStorage(CookieStorage):
    """Django's ``CookieStorage``, answering as it does, with the signer made once per process and
    the values it signs and reads kept (module docstring)."""

    def __init__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        # Django's builds a signer here, from the settings, on every request that touches messages.
        BaseStorage.__init__(self, request, *args, **kwargs)
        self.signer = cookie_signer()

    def _encode_parts(self, messages: list[str], encode_empty: bool = False) -> str | None:
        if not (messages or encode_empty):
            return None
        key = tuple(messages)
        value = _SIGNED.get(key)
        if value is None:
            value = self.signer.sign_object(
                messages,
                serializer=MessagePartGatherSerializer,  # type: ignore[arg-type]
                compress=True,
            )
            _keep(_SIGNED, key, value)
        return value

    def _decode(self, data: str | None) -> list[Any] | None:
        if not data:
            return None
        found = _READ.get(data)
        if found is None:
            decoded = super()._decode(data)  # type: ignore[misc]
            if not isinstance(decoded, list):
                # Refused (its cookie is marked used, to be deleted) or not a list: as Django answers.
                return decoded
            found = tuple((m.level, m.message, m.extra_tags) if isinstance(m, Message) else m for m in decoded)
            _keep(_READ, data, found)
        # New objects each time: a storage changes its list and its messages as they are read.
        return [Message(*entry) if isinstance(entry, tuple) else entry for entry in found]


class MessageStorage(FallbackStorage):
    """Django's default storage (``FallbackStorage``: the cookie, then the session for what the
    cookie cannot hold), its cookie kept (``KeptCookieStorage``)."""

    storage_classes = (KeptCookieStorage, SessionStorage)
