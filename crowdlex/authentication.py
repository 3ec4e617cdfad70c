"""API tokens: issued at /api/auth-token/, valid for API_TOKEN_MAX_AGE, revoked at logout; and the
account as every request reads it.

Every request of the annotator's cycle first reads the account: by its API token
(``TokenAuthentication``) or by the id its session holds (the backends' ``get_user``). Either way it
is one statement, ``account_load``: the account, whether it holds each role (``annotation.roles``),
its local worker (``annotation.services.worker_for_user``) and, by token, whether the token is
still fresh. It is written in SQL (``crowdlex.sql``: Django's instances and values, prepared on
PostgreSQL), because the ORM took 1.5 ms of CPU to build the equivalent statement with
``select_related`` and two ``Exists`` annotations, on every request: about a tenth of a whole
claim-and-submit cycle (docs/benchmarks.md).
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import HTTP_HEADER_ENCODING, authentication, exceptions
from rest_framework.authtoken.models import Token

from annotation.models import Worker
from annotation.roles import ROLES, remember_roles
from crowdlex import accounts
from crowdlex.sql import execute, instance_of, instances, kept_cursor, select_columns


@functools.cache
def account_statement() -> str:
    """``account_load``'s statement, but for its condition."""
    user, token, worker = User._meta.db_table, Token._meta.db_table, Worker._meta.db_table
    memberships, group = User.groups.through._meta.db_table, User.groups.field.related_model._meta.db_table
    roles = ", ".join(
        f"EXISTS (SELECT 1 FROM {memberships} m JOIN {group} g ON g.id = m.group_id"
        f" WHERE m.user_id = u.id AND g.name = %s)"
        for _ in ROLES
    )
    # A user has at most one token and one worker (one-to-one), so this is one row or none.
    return (
        f"SELECT {select_columns((User, 'u'), (Worker, 'w'))}, {roles}, t.created > %s"
        f" FROM {user} u LEFT JOIN {worker} w ON w.user_id = u.id LEFT JOIN {token} t ON t.user_id = u.id"
    )


@functools.cache
def _account_format() -> str:
    """A name for the columns of the statement's rows, as they are kept (``crowdlex.accounts``)."""
    return hashlib.sha256(account_statement().encode()).hexdigest()[:16]


def account_load(*, token_key: str | None = None, user_id: Any = None) -> tuple[User, bool] | None:
    """The account holding this API token (or of this id), with its roles remembered and its local
    worker attached, and whether its token is fresh (False without one); None if there is no such
    account. One statement."""
    if token_key is not None:
        row = _account_row("t.key = %s", token_key)
    else:
        try:
            row = _account_row("u.id = %s", User._meta.pk.to_python(user_id))  # type: ignore[union-attr]
        except ValidationError:
            return None
    return None if row is None else _account_of(row)


def _account_row(where: str, value: Any) -> tuple[Any, ...] | None:
    fresh_after = connections[DEFAULT_DB_ALIAS].ops.adapt_datetimefield_value(
        timezone.now() - settings.API_TOKEN_MAX_AGE
    )
    with kept_cursor() as cursor:
        execute(cursor, f"{account_statement()} WHERE {where}", [*ROLES, fresh_after, value])
        row = cursor.fetchone()
    return None if row is None else tuple(row)


def _account_of(row: tuple[Any, ...]) -> tuple[User, bool]:
    """The account (roles remembered, worker attached) and its token's freshness from its row."""
    *flags, fresh = row[-len(ROLES) - 1 :]
    user, worker = instances(row[: -len(ROLES) - 1], (User, "u"), (Worker, "w"))
    remember_roles(user, frozenset(role for role, held in zip(ROLES, flags, strict=True) if held))
    if worker is not None:
        User.worker.related.set_cached_value(user, worker)  # type: ignore[attr-defined]
    return user, bool(fresh)


class AccountBackend(ModelBackend):
    """Django's backend, reading the signed-in account of a session with ``account_load``'s statement,
    or from the row kept beside the session in the shared cache (``crowdlex.accounts``)."""

    def get_user(self, user_id: Any) -> User | None:  # type: ignore[override]
        try:
            pk = User._meta.pk.to_python(user_id)  # type: ignore[union-attr]
        except ValidationError:
            return None
        user: User | None = accounts.account_signed_in(
            pk, fmt=_account_format(), load=lambda: _account_row("u.id = %s", pk), build=lambda row: _account_of(row)[0]
        )
        return user if user is not None and self.user_can_authenticate(user) else None


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

    def get_user(self, user_id: Any) -> User | None:  # type: ignore[override]
        # A session started by force_login (tests, scripts) names this backend: it reads as the other.
        return AccountBackend().get_user(user_id)


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF's token authentication, its answers and messages unchanged, reading the ``Authorization``
    header from the request's environment: DRF reads it through ``request.headers``, which builds a
    mapping of every header first, on every request (docs/benchmarks.md, "The API's claim and
    submit through DRF")."""

    def authenticate(self, request: Any) -> tuple[Any, Token] | None:
        meta = getattr(request, "_request", request).META
        header = meta.get("HTTP_AUTHORIZATION", b"")
        if isinstance(header, str):
            header = header.encode(HTTP_HEADER_ENCODING)
        parts = header.split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) == 1:
            raise exceptions.AuthenticationFailed(_("Invalid token header. No credentials provided."))
        if len(parts) > 2:
            raise exceptions.AuthenticationFailed(_("Invalid token header. Token string should not contain spaces."))
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed(
                _("Invalid token header. Token string should not contain invalid characters.")
            ) from None
        return self.authenticate_credentials(key)

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        found = account_load(token_key=key)
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        user, fresh = found
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if not fresh:
            raise exceptions.AuthenticationFailed("Token expired: obtain a new one.")
        # What DRF keeps as request.auth: the key and its account (nothing reads more of it).
        return user, instance_of(Token, key=key, user_id=user.pk)
