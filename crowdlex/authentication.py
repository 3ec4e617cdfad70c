"""API token authentication that reads the account, its roles and its worker in one statement.

Every request of the work queue is authenticated and then checked for a role, and a claim
needs the account's local worker: one statement answers all three (for
``annotation.roles`` and ``annotation.services.worker_for_user``). It is written in SQL,
built once per process, because it runs on every API call and the ORM spends longer building
it than Postgres spends running it (as for the claim query in ``hits.services.queue``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, cast

from django.contrib.auth.models import Group, User
from django.db import connections, router
from django.db.models import Field, Model
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from annotation.models import Worker
from annotation.roles import ROLES, remember_roles

Converter = Callable[[Any, Any, Any], Any]


def _columns(model: type[Model], alias: str, database: str) -> tuple[list[str], list[str], list[list[Converter]]]:
    """Select list, attribute names and the backend's value converters of a model's columns."""
    connection = connections[database]
    quote = connection.ops.quote_name
    fields: Sequence[Field[Any, Any]] = model._meta.concrete_fields  # type: ignore[assignment]
    converters = []
    for field in fields:
        column = field.get_col(alias)
        converters.append(connection.ops.get_db_converters(column) + column.get_db_converters(connection))
    select = [f"{alias}.{quote(cast(str, field.column))}" for field in fields]
    return select, [field.attname for field in fields], converters


@cache
def _statement(database: str) -> tuple[str, list[str], list[list[Converter]], list[str], list[list[Converter]]]:
    quote = connections[database].ops.quote_name
    user_select, user_names, user_converters = _columns(User, "u", database)
    worker_select, worker_names, worker_converters = _columns(Worker, "w", database)
    membership = quote(User.groups.through._meta.db_table)
    roles = [
        f"EXISTS (SELECT 1 FROM {membership} ug JOIN {quote(Group._meta.db_table)} g ON g.id = ug.group_id"
        f" WHERE ug.user_id = u.id AND g.name = %s)"
        for _ in ROLES
    ]
    sql = (
        f"SELECT t.{quote('created')}, {', '.join(user_select + worker_select + roles)}"
        f" FROM {quote(Token._meta.db_table)} t"
        f" JOIN {quote(User._meta.db_table)} u ON u.id = t.user_id"
        f" LEFT JOIN {quote(Worker._meta.db_table)} w ON w.user_id = u.id"
        f" WHERE t.{quote('key')} = %s"
    )
    return sql, user_names, user_converters, worker_names, worker_converters


def _converted(values: Sequence[Any], converters: list[list[Converter]], database: str) -> list[Any]:
    connection = connections[database]
    out = []
    for value, chain in zip(values, converters, strict=True):
        for convert in chain:
            value = convert(value, None, connection)
        out.append(value)
    return out


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        database = router.db_for_read(Token)
        sql, user_names, user_converters, worker_names, worker_converters = _statement(database)
        with connections[database].cursor() as cursor:
            cursor.execute(sql, [*ROLES, key])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        created, rest = row[0], row[1:]
        user_values, rest = rest[: len(user_names)], rest[len(user_names) :]
        worker_values, role_values = rest[: len(worker_names)], rest[len(worker_names) :]
        user = User.from_db(database, user_names, _converted(user_values, user_converters, database))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        worker = None
        if worker_values[0] is not None:
            worker = Worker.from_db(database, worker_names, _converted(worker_values, worker_converters, database))
            Worker._meta.get_field("user").set_cached_value(worker, user)  # type: ignore[union-attr]
        # None too: "this account has no worker yet" is known without asking again.
        Worker._meta.get_field("user").remote_field.set_cached_value(user, worker)  # type: ignore[union-attr]
        remember_roles(user, frozenset(role for role, member in zip(ROLES, role_values, strict=True) if member))
        token = Token.from_db(database, ["key", "user_id", "created"], [key, user.pk, created])
        Token._meta.get_field("user").set_cached_value(token, user)  # type: ignore[union-attr]
        return (user, token)
