from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from rest_framework.authtoken.views import ObtainAuthToken

from annotation.roles import is_researcher


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
    """POST username and password, get the API token for the Authorization header."""
