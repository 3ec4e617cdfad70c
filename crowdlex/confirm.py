"""The confirmation every destructive or money-spending action of a page asks for (docs/design.md §11).

A page's button posts to the action's own URL; without ``confirmed=yes`` the view answers with a
confirmation page that says what the action will do, in figures (workers, HITs, dollars), and
posts the same fields again with ``confirmed=yes``. Nothing changes until then, and the page works
without JavaScript. The REST API acts at once: a client that calls it has already decided.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

CONFIRM_FIELD = "confirmed"
# Fields of the first post that are not carried into the confirmation's form.
_NOT_CARRIED = frozenset({"csrfmiddlewaretoken", CONFIRM_FIELD})


def confirmed(request: HttpRequest) -> bool:
    """True when the post comes from the confirmation page."""
    return request.POST.get(CONFIRM_FIELD) == "yes"


def safe_next(request: HttpRequest, default: str) -> str:
    """The ``next`` field when it points into this site, else ``default``."""
    back = request.POST.get("next", "") or request.GET.get("next", "")
    hosts = {request.get_host()}
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts=hosts, require_https=request.is_secure()):
        return back
    return default


def confirmation_page(
    request: HttpRequest,
    *,
    title: str,
    effects: Sequence[str],
    button: str,
    cancel_url: str,
    undo: str = "",
) -> HttpResponse:
    """The page that asks before ``request``'s action runs: ``effects`` are its consequences in
    figures, ``button`` the words of the button that does it, ``undo`` how it can be undone (or
    empty when it cannot)."""
    carried = [(key, value) for key in request.POST if key not in _NOT_CARRIED for value in request.POST.getlist(key)]
    context = {
        "title": title,
        "effects": list(effects),
        "button": button,
        "cancel_url": safe_next(request, cancel_url),
        "action": request.get_full_path(),
        "carried": carried,
        "undo": undo,
    }
    return render(request, "crowdlex/confirm.html", context)
