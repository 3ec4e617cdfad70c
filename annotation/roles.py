"""The two roles of the platform (docs/design.md §1) as Django groups."""

from typing import Any

from django.contrib.auth.models import Group

RESEARCHERS = "researchers"
ANNOTATORS = "annotators"
ROLES = (RESEARCHERS, ANNOTATORS)

# The account's role groups, read once per user object (one request) as Django caches permissions.
_ROLE_CACHE = "_crowdlex_roles"


def remember_roles(user: Any, roles: frozenset[str]) -> None:
    """Record roles already read along with the account (see ``crowdlex.authentication``)."""
    setattr(user, _ROLE_CACHE, roles)


def _roles(user: Any) -> frozenset[str]:
    roles: frozenset[str] | None = getattr(user, _ROLE_CACHE, None)
    if roles is None:
        roles = frozenset(user.groups.filter(name__in=ROLES).values_list("name", flat=True))
        remember_roles(user, roles)
    return roles


def is_researcher(user: Any) -> bool:
    if not user.is_authenticated:
        return False
    if getattr(user, "is_superuser", False):
        return True
    return bool(user.is_staff) and RESEARCHERS in _roles(user)


def is_annotator(user: Any) -> bool:
    return user.is_authenticated and ANNOTATORS in _roles(user)


def ensure_groups() -> tuple[Group, Group]:
    researchers, _ = Group.objects.get_or_create(name=RESEARCHERS)
    annotators, _ = Group.objects.get_or_create(name=ANNOTATORS)
    return researchers, annotators
