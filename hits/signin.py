"""When a session signed in: the annotator's page counts the HITs submitted since then.

The time is noted on sign-in (``user_logged_in``, connected in ``hits.apps``), when the session is
written anyway, so that no submit has to write the session to keep a count. A small module of its
own, as the receiver is connected at start-up of every process and command.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.utils import timezone

# The session's key for the time it signed in (ISO 8601).
SIGNED_IN_KEY = "hits_signed_in_at"


def remember_sign_in(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """Receiver of ``user_logged_in``: note the time in the session (a request-less sign-in has none)."""
    if request is not None and hasattr(request, "session"):
        request.session[SIGNED_IN_KEY] = timezone.now().isoformat()


def signed_in_at(request: HttpRequest) -> datetime | None:
    """When the request's session signed in; None for a session that signed in before this was noted."""
    value = request.session.get(SIGNED_IN_KEY)
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
