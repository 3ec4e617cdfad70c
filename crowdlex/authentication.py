"""API tokens: issued at /api/auth-token/, valid for API_TOKEN_MAX_AGE, revoked at logout.

``TokenAuthentication`` is DRF's, with the expiry, and with one ORM query that also reads what
every queue request asks next: the account's roles (for ``annotation.roles``) and its local
worker (for ``annotation.services.worker_for_user``). The query joins the token, the account and
the worker (``select_related``) and tests each role with an EXISTS subquery. An earlier version
ran the same statement as hand-written SQL and built the model instances itself, to skip the
ORM's query compilation (about a millisecond a request on a loaded machine). At the scale that
matters it made no difference: a claim-and-submit cycle through the API, measured in process
over 4 x 150 cycles each, took a median of 18 ms with either, within its run-to-run spread of
15 to 22 ms; so the ORM it is, with no reliance on Django's internals.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from annotation.roles import ROLES, remember_roles

_ROLE_PREFIX = "has_role_"


def token_expires_at(*, token: Token) -> datetime:
    return token.created + settings.API_TOKEN_MAX_AGE


def token_expired(*, token: Token) -> bool:
    return token_expires_at(token=token) <= timezone.now()


def token_obtain(*, user: User) -> Token:
    """The account's API token: the current one, or a new one if it had none or it expired."""
    with transaction.atomic():
        Token.objects.filter(user=user, created__lte=timezone.now() - settings.API_TOKEN_MAX_AGE).delete()
        token, _ = Token.objects.get_or_create(user=user)
    return token


def token_revoke(*, user: User) -> bool:
    """Delete the account's API token (at logout, or from the token page); True if there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


class LockoutBackend(AxesStandaloneBackend):
    """Refuses sign-ins while an account is locked out from an address (django-axes).

    A sign-in without a request (Django's test client, a script) comes from no address and is
    left to the next backend, as no login page, admin page or API view ever makes one.
    """

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> None:
        if request is not None:
            super().authenticate(request, username, password, **kwargs)


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        memberships = User.groups.through.objects.filter(user_id=OuterRef("user_id"))
        roles = {f"{_ROLE_PREFIX}{role}": Exists(memberships.filter(group__name=role)) for role in ROLES}
        token = Token.objects.select_related("user__worker").annotate(**roles).filter(key=key).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if token_expired(token=token):
            raise exceptions.AuthenticationFailed("Token expired: obtain a new one.")
        remember_roles(token.user, frozenset(role for role in ROLES if getattr(token, f"{_ROLE_PREFIX}{role}")))
        return token.user, token
