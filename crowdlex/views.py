from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import Throttled, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.roles import is_researcher
from crowdlex.authentication import token_expired, token_expires_at, token_obtain, token_revoke
from crowdlex.parsers import JSONParser
from crowdlex.permissions import researcher_required
from crowdlex.throttling import SignInThrottle


def home(request: HttpRequest) -> HttpResponse:
    """Send each role to its own start page: researchers to benchmarks, annotators to their queue."""
    if not request.user.is_authenticated:
        return redirect("login")
    if is_researcher(request.user):
        return redirect("benchmark-list")
    return redirect("work-home")


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


class ObtainTokenView(ObtainAuthToken):
    """POST username and password, get the API token for the Authorization header.

    Attempts are throttled per address, and failures lock the account out (django-axes).
    """

    parser_classes = [JSONParser, FormParser, MultiPartParser]
    throttle_classes = [SignInThrottle]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # django-axes marks the request it refused (on this view, DRF's request, which its
            # middleware never sees): answer as the other sign-ins do, 429 until the lockout ends.
            if getattr(request, "axes_locked_out", False):
                raise Throttled(wait=settings.AXES_COOLOFF_TIME.total_seconds(), detail="Too many failed sign-ins.")
            raise ValidationError(serializer.errors)
        token = token_obtain(user=serializer.validated_data["user"])
        return Response({"token": token.key})


class LogoutView(auth_views.LogoutView):
    """Log out, and revoke the account's API token with the session."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if isinstance(request.user, User):
            token_revoke(user=request.user)
        return super().post(request, *args, **kwargs)


@login_required
@require_http_methods(["GET", "POST"])
def api_token(request: HttpRequest) -> HttpResponse:
    """The account's API token: when it was issued and whether it still works; POST revokes it."""
    user = request.user
    assert isinstance(user, User)
    if request.method == "POST":
        if token_revoke(user=user):
            messages.success(request, "Your API token is revoked; scripts using it are refused from now on.")
        return redirect("api-token")
    token = Token.objects.filter(user=user).first()
    context = {
        "token": token,
        "expires_at": token and token_expires_at(token=token),
        "expired": token is not None and token_expired(token=token),
    }
    return render(request, "registration/api_token.html", context)


@researcher_required
def api_docs(request: HttpRequest) -> HttpResponse:
    """The API's schema as a page to browse and try (Swagger UI from the platform's static files)."""
    return render(request, "crowdlex/api_docs.html")
