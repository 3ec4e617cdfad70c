"""The MTurk ExternalQuestion page (DESIGN §4)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse


def mturk_hit(request: HttpRequest, hit_id: int) -> HttpResponse:
    return HttpResponse("")
