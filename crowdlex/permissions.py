"""Role checks shared by the HTML views and the REST API (docs/design.md §1)."""

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from annotation.roles import is_annotator, is_researcher

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def researcher_required(view: View) -> View:
    """Log in first, then allow researchers only; anyone else gets 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_researcher(request.user):
            raise PermissionDenied("This page is for researchers.")
        return view(request, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class IsResearcher(BasePermission):
    message = "Only researchers may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return is_researcher(request.user)


class IsAnnotator(BasePermission):
    message = "Only annotators may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return is_annotator(request.user) or is_researcher(request.user)
