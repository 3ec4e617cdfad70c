"""The small fixed cast of the suite: a researcher, honest annotators and a spammer."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Worker, WorkerKind
from annotation.roles import ensure_groups

PASSWORD = "correct horse battery"


@dataclass
class Cast:
    researcher: User
    alice: User
    bob: User
    carol: User
    spammer: User

    @property
    def annotators(self) -> list[User]:
        return [self.alice, self.bob, self.carol, self.spammer]


def make_user(username: str, *, researcher: bool = False) -> User:
    researchers, annotators = ensure_groups()
    user = User.objects.create_user(username, password=PASSWORD, is_staff=researcher)
    user.groups.add(researchers if researcher else annotators)
    Worker.objects.create(kind=WorkerKind.LOCAL, external_id=username, user=user)
    return user


def make_cast() -> Cast:
    return Cast(
        researcher=make_user("rita", researcher=True),
        alice=make_user("alice"),
        bob=make_user("bob"),
        carol=make_user("carol"),
        spammer=make_user("sam"),
    )


def logged_in(user: User) -> Client:
    """A test client logged in as ``user`` (with the cast's password)."""
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client
