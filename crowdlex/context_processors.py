"""What every page's template reads besides its view's context: the reader's roles, and the CSRF
token of its forms."""

import os
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, get_token
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from annotation.roles import is_annotator, is_researcher
from hits.signin import signed_in_at


def roles(request: HttpRequest) -> dict[str, Any]:
    """Expose the viewer's role to templates so navigation shows only what they may use."""
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    return {
        "is_researcher": signed_in and is_researcher(user),
        "is_annotator": signed_in and is_annotator(user),
    }


def csrf(request: HttpRequest) -> dict[str, Any]:
    """``{% csrf_token %}``'s token, as Django's own context processor gives it (this one, listed
    after it, takes its place): made when a template first reads it (every signed-in page does, for
    the top bar's sign-out form), the cookie's secret under a fresh random mask (``masked_token``)."""
    return {"csrf_token": SimpleLazyObject(lambda: masked_token(request))}


_INDEX = {char: index for index, char in enumerate(CSRF_ALLOWED_CHARS)}
_CHARS = len(CSRF_ALLOWED_CHARS)
# Random bytes below this are taken modulo the alphabet's size (62) with no character likelier than
# another; the few above it are dropped.
_UNBIASED = 256 - 256 % _CHARS


def _random_indices(count: int) -> list[int]:
    """``count`` positions in the alphabet, each uniform and independent, from the system's source
    of randomness read once (or again, for the few bytes dropped)."""
    found: list[int] = []
    while len(found) < count:
        found += [byte % _CHARS for byte in os.urandom(count + count // 2) if byte < _UNBIASED]
    return found[:count]


def masked_token(request: HttpRequest) -> str:
    """``django.middleware.csrf.get_token``: the request's CSRF secret (its cookie's) under a new
    mask, the cookie marked to be sent again where it may lapse (``cookie_may_lapse``). Django
    draws each of the mask's 32 characters with a call to the system's randomness (32 system calls,
    which a loaded machine can stretch to most of a millisecond); this reads the same kind of mask,
    as random, with one. A request without a
    secret yet (a first visit) or with it in the session goes through Django's own (docs/design.md
    §7, "The request's fixed cost")."""
    secret = request.META.get("CSRF_COOKIE")
    if secret is None or settings.CSRF_USE_SESSIONS:
        return str(get_token(request))
    if cookie_may_lapse(request):
        request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True
    mask = _random_indices(CSRF_SECRET_LENGTH)
    chars = CSRF_ALLOWED_CHARS
    cipher = "".join(chars[(_INDEX[char] + shift) % _CHARS] for char, shift in zip(secret, mask, strict=True))
    return "".join(chars[shift] for shift in mask) + cipher


def cookie_may_lapse(request: HttpRequest) -> bool:
    """Whether the CSRF cookie the request came with should be sent again, its age renewed.

    Django sends it again on every page that shows a token, so that it does not expire while in
    use. Signing in sets a new one (``django.contrib.auth.login`` rotates it) that lives
    ``CSRF_COOKIE_AGE`` (a year); the session notes when (``hits.signin``). While that sign-in is
    younger than ``CSRF_COOKIE_RENEW_AFTER_SECONDS`` (half a year), the cookie the browser holds was
    set then or later and has at least the other half ahead: sending it again changes nothing. A
    session with no noted sign-in, an older one, or a time in the future, renews it as Django does
    (docs/design.md §7, "The form's token")."""
    session = getattr(request, "session", None)
    signed_in = signed_in_at(request) if session is not None else None
    if signed_in is None:
        return True
    age = (timezone.now() - signed_in).total_seconds()
    # Never later than half the cookie's own age, whatever the setting says: a cookie of the
    # browser's session (no age) is renewed as Django does.
    lifetime = settings.CSRF_COOKIE_AGE
    renew_after = (
        settings.CSRF_COOKIE_RENEW_AFTER_SECONDS
        if lifetime is None
        else min(settings.CSRF_COOKIE_RENEW_AFTER_SECONDS, lifetime / 2)
    )
    return lifetime is None or not 0 <= age < renew_after
