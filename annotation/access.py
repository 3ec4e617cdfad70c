"""Who sees and changes which benchmark (docs/design.md §1, docs/permissions.md): the one place every page,
API call, export and admin page asks.

- A superuser is the owner of every benchmark.
- A researcher has the role their ``BenchmarkMember`` row gives them; a benchmark with no owner row
  is *shared* (made by a command, or there before permissions existed): every researcher has the
  owner's role in it except granting access, which on a shared benchmark only a superuser does.
- Anyone else (anonymous, annotators) has no role anywhere.

A benchmark the user may not see answers 404, exactly like one that does not exist, so names do not
leak; one they see with too small a role answers 403 saying which role it needs.

Entry points use three calls: ``benchmark_for(user, name, need)`` for a URL naming a benchmark,
``object_for(user, queryset, need, **lookup)`` for a row that hangs off one (its model says how in
``benchmark_path``), and ``visible(user, queryset, need)`` for a list.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, Model, OuterRef, Q, QuerySet
from django.db.models.query import ModelIterable
from django.http import Http404

from annotation.changes import benchmark_changed
from annotation.models import Benchmark, BenchmarkMember, Role
from annotation.roles import is_researcher
from crowdlex.sql import execute, instances, select_columns
from crowdlex.statements import shaped_objects

__all__ = [
    "AccessRefused",
    "Role",
    "access_grant",
    "access_revoke",
    "benchmark_for",
    "benchmark_members",
    "benchmark_owned_by",
    "benchmark_to_share",
    "benchmarks_visible_sql",
    "benchmarks_visible_to",
    "can_manage_access",
    "object_for",
    "require",
    "role_of",
    "viewer_role",
    "visible",
]

M = TypeVar("M", bound=Model)


class AccessRefused(ValueError):
    """A grant or revocation that would leave the benchmark in a state nobody meant."""


def _owned() -> Exists:
    return Exists(BenchmarkMember.objects.filter(benchmark=OuterRef("pk"), role=Role.OWNER))


def benchmarks_visible_to(user: Any, need: Role = Role.VIEWER) -> QuerySet[Benchmark]:
    """The benchmarks in which ``user`` has at least the role ``need``."""
    if not is_researcher(user):
        return Benchmark.objects.none()
    if user.is_superuser:
        return Benchmark.objects.all()
    mine = Exists(BenchmarkMember.objects.filter(benchmark=OuterRef("pk"), user=user, role__gte=need))
    return Benchmark.objects.filter(Q(mine) | ~_owned())


def benchmarks_visible_sql(user: Any, alias: str) -> tuple[str, list[Any]] | None:
    """``benchmarks_visible_to(user)`` as a condition on the benchmark table under ``alias`` in a
    statement of one's own, with its parameters ("" for a superuser, who sees every one); None when
    the user sees none."""
    if not is_researcher(user):
        return None
    if user.is_superuser:
        return "", []
    member = BenchmarkMember._meta.db_table
    condition = (
        f"(EXISTS (SELECT 1 FROM {member} m WHERE m.benchmark_id = {alias}.id AND m.user_id = %s AND m.role >= %s)"
        f" OR NOT EXISTS (SELECT 1 FROM {member} o WHERE o.benchmark_id = {alias}.id AND o.role = %s))"
    )
    return condition, [user.pk, int(Role.VIEWER), int(Role.OWNER)]


def role_of(user: Any, benchmark: Benchmark | int) -> Role | None:
    """The user's role in the benchmark, or None when they may not see it. One statement in SQL
    (``_role_sql``): a page of a row that hangs off a benchmark asks it on every request."""
    if not is_researcher(user):
        return None
    if user.is_superuser:
        return Role.OWNER
    benchmark_id = benchmark if isinstance(benchmark, int) else benchmark.pk
    with connection.cursor() as cursor:
        execute(cursor, _role_sql(), [benchmark_id, user.pk, benchmark_id, int(Role.OWNER)])
        member, owned = cursor.fetchone()
    return _role_from(member, owned)


def _role_columns(benchmark_id: str) -> tuple[str, str]:
    """SQL of the two values a researcher's role is worked out from (``_role_from``), for the
    benchmark whose id is the SQL ``benchmark_id``: their member row's role (its parameter: the
    user's id), and whether the benchmark has an owner (its parameter: ``Role.OWNER``)."""
    member = BenchmarkMember._meta.db_table
    return (
        f"SELECT m.role FROM {member} m WHERE m.benchmark_id = {benchmark_id} AND m.user_id = %s",
        f"EXISTS (SELECT 1 FROM {member} o WHERE o.benchmark_id = {benchmark_id} AND o.role = %s)",
    )


def _role_params(user: Any) -> list[Any]:
    return [user.pk, int(Role.OWNER)]


def _role_from(member: int | None, owned: bool) -> Role | None:
    """The role of a researcher (not a superuser) from ``_role_columns``' values: their member row's,
    else none in a benchmark someone owns; a shared benchmark, which nobody owns, every researcher
    works in as its owner."""
    if member is not None:
        return Role(member)
    return None if owned else Role.OWNER


@functools.cache
def _role_sql() -> str:
    member_role, owned = _role_columns("%s")
    return f"SELECT ({member_role}), {owned}"


def _with_role(user: Any, benchmarks: QuerySet[Benchmark]) -> QuerySet[Benchmark]:
    """``benchmarks`` with what ``role_of`` reads, in the same statement: the user's member row's role
    and whether the benchmark has an owner."""
    if not is_researcher(user) or user.is_superuser:
        return benchmarks
    # As SQL of its own rather than subquery expressions: the ORM builds those at a cost larger than
    # the statement they save.
    member_role, owned = _role_columns(f"{Benchmark._meta.db_table}.id")
    return benchmarks.extra(select={"_member_role": member_role, "_owned": owned}, select_params=_role_params(user))


def _annotated_role(user: Any, benchmark: Benchmark) -> Role | None:
    """``role_of(user, benchmark)`` from the values ``_with_role`` read with the row."""
    if not is_researcher(user):
        return None
    if user.is_superuser:
        return Role.OWNER
    return _role_from(getattr(benchmark, "_member_role", None), getattr(benchmark, "_owned", True))


def _checked(role: Role | None, need: Role) -> Role:
    if role is None:
        raise Http404("No such benchmark.")
    if role < need:
        raise PermissionDenied(f"This needs the {need.label} role in the benchmark; yours is {Role(role).label}.")
    return role


def require(user: Any, benchmark: Benchmark | int, need: Role) -> Role:
    """The user's role, if it is at least ``need``: 404 when they may not see the benchmark, 403 when
    they see it with too small a role."""
    return _checked(role_of(user, benchmark), need)


def benchmark_for(user: Any, name: str, need: Role = Role.VIEWER, **lookup: Any) -> Benchmark:
    """The benchmark called ``name`` if the user may do what ``need`` allows in it (404 / 403 otherwise).
    ``lookup`` narrows further (e.g. ``scheme="sws"`` for a page of one scheme).

    Every page of a benchmark asks this first: the row and the reader's role are one statement,
    written in SQL (``_benchmark_sql``) because the ORM took more than a millisecond of CPU to build
    the same one from ``benchmarks_visible_to``, most of what a cheap page cost (docs/design.md §7,
    "The request's fixed cost"). A lookup other than a field's value goes through the ORM."""
    if not is_researcher(user):
        raise Http404("No such benchmark.")
    columns = _lookup_columns(tuple(sorted(lookup)))
    if columns is None:
        benchmark = _with_role(user, benchmarks_visible_to(user)).filter(name=name, **lookup).first()
        if benchmark is None:
            raise Http404("No such benchmark.")
        role = _annotated_role(user, benchmark)
    else:
        benchmark, role = _benchmark_read(user, name, columns, [lookup[key] for key in sorted(lookup)])
    role = _checked(role, need)
    # Kept with the row for the rest of the request (``viewer_role``): a page asks again to key what
    # it caches by role (annotation.fragments) or to show an editor's controls.
    benchmark.__dict__[_VIEWER_ROLE] = (user.pk, role)
    return benchmark


@functools.cache
def _lookup_columns(keys: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The fields a ``benchmark_for`` lookup compares by value, or None when one is not a field of
    the benchmark's own (a relation's, a lookup such as ``__in``): the ORM reads those."""
    fields = []
    for key in keys:
        try:
            field = Benchmark._meta.get_field(key)
        except FieldDoesNotExist:
            return None
        if not field.concrete or field.is_relation or "__" in key:
            return None
        fields.append(field)
    return tuple(fields)


@functools.cache
def _benchmark_sql(columns: tuple[Any, ...]) -> str:
    narrowed = "".join(f" AND b.{connection.ops.quote_name(field.column)} = %s" for field in columns)
    member_role, owned = _role_columns("b.id")
    return (
        f"SELECT {select_columns((Benchmark, 'b'))}, ({member_role}), {owned}"
        f" FROM {Benchmark._meta.db_table} b WHERE b.name = %s{narrowed}"
    )


def _benchmark_read(user: Any, name: str, columns: tuple[Any, ...], values: list[Any]) -> tuple[Benchmark, Role]:
    """The benchmark called ``name`` (and of these fields' ``values``) that ``user``, a researcher,
    sees, with their role in it: ``benchmarks_visible_to`` and ``role_of`` in one statement."""
    params = [*_role_params(user), name]
    params += [
        field.get_db_prep_value(value, connection, prepared=False) for field, value in zip(columns, values, strict=True)
    ]
    with connection.cursor() as cursor:
        execute(cursor, _benchmark_sql(columns), params)
        row = cursor.fetchone()
    if row is None:
        raise Http404("No such benchmark.")
    *values_read, member, owned = row
    (benchmark,) = instances(values_read, (Benchmark, "b"))
    if user.is_superuser:
        return benchmark, Role.OWNER
    # As ``benchmarks_visible_to``: one's member row (every role is at least a viewer's), or nobody owns it.
    role = _role_from(member, owned)
    if role is None:
        raise Http404("No such benchmark.")
    return benchmark, role


# Where ``benchmark_for`` keeps the role it checked on the benchmark it returns.
_VIEWER_ROLE = "_crowdlex_viewer_role"


def viewer_role(user: Any, benchmark: Benchmark) -> Role | None:
    """``role_of(user, benchmark)``, without a statement when ``benchmark_for`` gave this row to this
    user."""
    remembered = benchmark.__dict__.get(_VIEWER_ROLE)
    if remembered is not None and remembered[0] == user.pk and user.is_authenticated:
        return Role(remembered[1])
    return role_of(user, benchmark)


def _path(model: type[Model]) -> str:
    path = getattr(model, "benchmark_path", None)
    if path is None:
        raise TypeError(f"{model.__name__} has no benchmark_path: it does not hang off a benchmark")
    return str(path)


def visible(user: Any, queryset: QuerySet[M], need: Role = Role.VIEWER) -> QuerySet[M]:
    """The rows of ``queryset`` whose benchmark the user has at least ``need`` in."""
    path = _path(queryset.model)
    if is_researcher(user) and user.is_superuser:
        return queryset
    return queryset.filter(**{f"{path}__in" if path else "pk__in": benchmarks_visible_to(user, need)})


# The benchmark's id read with a row whose benchmark is further than its own foreign key.
_BENCHMARK_ID = "_crowdlex_benchmark_id"


def _benchmark_attname(model: type[Model]) -> str | None:
    """The attribute holding the benchmark's id on a row of ``model`` (its own foreign key, or its
    primary key for the benchmark itself), or None when the path crosses other rows."""
    path = _path(model)
    if not path:
        return "pk"
    if "__" in path:
        return None
    return str(model._meta.get_field(path).attname)  # type: ignore[union-attr]


def _plain_related(queryset: QuerySet[Any]) -> str | None:
    """The related rows ``queryset`` selects with its rows, as ``_row_by_pk`` names them (their paths,
    comma-separated; "*" for every one), when it is a table's rows as they are, nothing filtered,
    annotated, deferred, ordered or known; else None."""
    query = queryset.query
    if (
        query.where
        or query.annotations
        or query.extra
        or query.deferred_loading != (frozenset(), True)
        or query.distinct
        or query.select_for_update
        or query.low_mark
        or query.high_mark is not None
        or query.combinator
        or not query.default_cols
        or getattr(queryset, "_prefetch_related_lookups", None)
        or getattr(queryset, "_known_related_objects", None)
        or queryset._iterable_class is not ModelIterable
    ):
        return None
    if query.select_related is True:
        return "*"
    if not query.select_related:
        return ""
    return ",".join(sorted(_related_paths(query.select_related, "")))


def _related_paths(tree: dict[str, Any], prefix: str) -> list[str]:
    paths = []
    for name, below in tree.items():
        path = f"{prefix}{name}"
        paths += _related_paths(below, f"{path}__") if below else [path]
    return paths


def _in_range(model: type[Model], pk: Any) -> bool:
    """Whether ``pk`` is a whole number the primary key's column holds (the ORM finds a number out
    of its range matches nothing, where the database would refuse it)."""
    if not isinstance(pk, int) or isinstance(pk, bool):
        return False
    low, high = connection.ops.integer_field_range(model._meta.pk.get_internal_type())  # type: ignore[union-attr]
    return (low is None or pk >= low) and (high is None or pk <= high)


def _row_by_pk(label: str, related: str, pk: int) -> QuerySet[Any]:
    """The row of the model ``label`` whose key is ``pk``, its related rows ``related``
    (``_plain_related``) selected with it, and its benchmark's id when that is further than its own
    foreign key."""
    model = apps.get_model(label)
    rows = model._base_manager.filter(pk=pk)
    if related == "*":
        rows = rows.select_related()
    elif related:
        rows = rows.select_related(*related.split(","))
    if _benchmark_attname(model) is None:
        rows = rows.annotate(**{_BENCHMARK_ID: F(_path(model))})
    return rows


def object_for(user: Any, queryset: QuerySet[M], need: Role = Role.VIEWER, **lookup: Any) -> M:
    """The row of ``queryset`` matching ``lookup``, if the user may do what ``need`` allows in its
    benchmark: 404 when it does not exist or its benchmark is not theirs to see, 403 when they see it
    with too small a role.

    A lookup by primary key names one row: it is read with its benchmark's id, then the reader's
    role in that benchmark (``role_of``; None: not theirs to see), two statements where filtering by
    the visible benchmarks first took three and a millisecond of CPU more to build."""
    path = _path(queryset.model)
    if "pk" in lookup and is_researcher(user):
        attname = _benchmark_attname(queryset.model)
        related = _plain_related(queryset) if len(lookup) == 1 else None
        if related is not None and _in_range(queryset.model, lookup["pk"]):
            # The common case, a row by its key from a table (its related rows selected with it): the
            # statement the ORM built once per process (docs/design.md §7, "The reader's benchmark,
            # in SQL of its own").
            label = queryset.model._meta.label
            found = next(iter(shaped_objects(_row_by_pk, label, related, lookup["pk"], using=queryset.db)), None)
        else:
            rows = queryset.filter(**lookup)
            if attname is None:
                rows = rows.annotate(**{_BENCHMARK_ID: F(path)})
            found = rows.first()
        if found is None:
            raise Http404(f"No such {queryset.model._meta.verbose_name}.")
        benchmark_id = getattr(found, attname or _BENCHMARK_ID)
        if attname is None:
            del found.__dict__[_BENCHMARK_ID]
        if benchmark_id is None and not user.is_superuser:  # of no benchmark: a superuser's alone
            raise Http404(f"No such {queryset.model._meta.verbose_name}.")
        require(user, benchmark_id, need)
        return found
    rows = visible(user, queryset)
    found = rows.filter(**lookup).first()
    if found is None:
        raise Http404(f"No such {queryset.model._meta.verbose_name}.")
    benchmark_id = found.pk if not path else rows.filter(pk=found.pk).values_list(path, flat=True)[0]
    require(user, benchmark_id, need)
    return found


def can_manage_access(user: Any, benchmark: Benchmark) -> bool:
    """Owners grant and revoke; on a shared benchmark (no owner) only a superuser does, as giving it
    an owner takes it away from the other researchers."""
    if not is_researcher(user):
        return False
    if user.is_superuser:
        return True
    return BenchmarkMember.objects.filter(benchmark=benchmark, user=user, role=Role.OWNER).exists()


def benchmark_to_share(user: Any, name: str) -> Benchmark:
    """The benchmark called ``name`` if the user may grant and revoke access in it (404 / 403)."""
    benchmark = benchmark_for(user, name, Role.VIEWER)
    if not can_manage_access(user, benchmark):
        raise PermissionDenied("Only an owner grants access (a superuser, on a benchmark nobody owns).")
    return benchmark


def benchmark_members(*, benchmark: Benchmark) -> QuerySet[BenchmarkMember]:
    return BenchmarkMember.objects.filter(benchmark=benchmark).select_related("user", "granted_by")


def benchmark_owned_by(*, benchmark: Benchmark, user: Any) -> None:
    """Make ``user`` the owner of a benchmark they just created (page, API, import, admin).
    A command creates benchmarks with no user: they stay shared."""
    if user is None or not getattr(user, "is_authenticated", False):
        return
    BenchmarkMember.objects.get_or_create(benchmark=benchmark, user=user, defaults={"role": Role.OWNER})


def access_grant(*, benchmark: Benchmark, user: Any, role: Role, by: Any) -> BenchmarkMember:
    """Give ``user`` (a researcher) ``role`` in the benchmark, or change the role they have. Refuses
    to take the last owner's ownership away (the benchmark would become shared with everyone), and
    any role but owner on a shared benchmark (it has to get an owner first)."""
    if not is_researcher(user):
        raise AccessRefused(f"{user.get_username()} is not a researcher.")
    with transaction.atomic():
        Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        member = BenchmarkMember.objects.filter(benchmark=benchmark, user=user).first()
        if member is not None and member.role == Role.OWNER and role != Role.OWNER:
            _keep_an_owner(benchmark, leaving=member)
        if role != Role.OWNER and not BenchmarkMember.objects.filter(benchmark=benchmark, role=Role.OWNER).exists():
            # On a shared benchmark every researcher is an owner already: a smaller role would
            # only take rights away from this one. Giving it an owner makes it private first.
            raise AccessRefused(f"{benchmark.name} is shared by every researcher: give it an owner first.")
        try:
            member, _ = BenchmarkMember.objects.update_or_create(
                benchmark=benchmark, user=user, defaults={"role": role, "granted_by": by}
            )
        except IntegrityError as exc:  # a racing grant for the same user
            raise AccessRefused(f"{user.get_username()} was granted a role meanwhile; try again.") from exc
        # Who sees the benchmark, and with which controls, changed: no page kept before shows
        # (docs/design.md §7, "Kept pages"); no target's figures move.
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=())
    return member


def access_revoke(*, benchmark: Benchmark, user: Any) -> bool:
    """Take the user's role away; False when they had none. The last owner cannot leave."""
    with transaction.atomic():
        Benchmark.objects.select_for_update(no_key=True).get(pk=benchmark.pk)
        member = BenchmarkMember.objects.filter(benchmark=benchmark, user=user).first()
        if member is None:
            return False
        if member.role == Role.OWNER:
            _keep_an_owner(benchmark, leaving=member)
        member.delete()
        benchmark_changed(benchmark_id=benchmark.pk, target_ids=())
    return True


def _keep_an_owner(benchmark: Benchmark, *, leaving: BenchmarkMember) -> None:
    others = BenchmarkMember.objects.filter(benchmark=benchmark, role=Role.OWNER).exclude(pk=leaving.pk)
    if not others.exists():
        raise AccessRefused("A benchmark keeps at least one owner: make someone else owner first.")
