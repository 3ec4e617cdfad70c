"""The two roles of the platform (DESIGN §1) as Django groups."""

from typing import Any

from django.contrib.auth.models import Group

RESEARCHERS = "researchers"
ANNOTATORS = "annotators"


def is_researcher(user: Any) -> bool:
    if not user.is_authenticated:
        return False
    if getattr(user, "is_superuser", False):
        return True
    return bool(user.is_staff) and user.groups.filter(name=RESEARCHERS).exists()


def is_annotator(user: Any) -> bool:
    return user.is_authenticated and user.groups.filter(name=ANNOTATORS).exists()


def ensure_groups() -> tuple[Group, Group]:
    researchers, _ = Group.objects.get_or_create(name=RESEARCHERS)
    annotators, _ = Group.objects.get_or_create(name=ANNOTATORS)
    return researchers, annotators
