"""Writes of people management (docs/people.md): annotator accounts made one by one or from a CSV
file, one-time sign-in links, password resets and a batch's named annotators.

A researcher manages annotator accounts only (in the annotators group, neither staff nor
superuser): never another researcher's account, whose link would sign in as them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from annotation.activity import activity_record
from annotation.importers.errors import ImportFailed, shown
from annotation.importers.reading import numbered_lines, open_binary
from annotation.models import ActivityKind, Benchmark, Worker, WorkerKind
from annotation.roles import ANNOTATORS, ensure_groups
from crowds.interface import ARRIVAL_QUEUE, get_backend
from hits.models import HIT, Batch, BatchStatus, HITReservation

# The CSV file's columns: username and email are required, name is optional.
CSV_COLUMNS = ("username", "email", "name")
NAME_MAX_LENGTH = User._meta.get_field("first_name").max_length or 150
USERNAME_MAX_LENGTH = User._meta.get_field("username").max_length or 150


class PersonInvalid(ValueError):
    """A person's field was refused; ``field`` names it."""

    def __init__(self, message: str, *, field: str) -> None:
        self.field = field
        super().__init__(message)


class NamingRefused(ValueError):
    """The batch cannot take named annotators; the message says why."""


@dataclass(frozen=True)
class NewPerson:
    username: str
    email: str
    name: str = ""


@dataclass(frozen=True)
class SigninLink:
    """A one-time link to set a password and sign in, and whether it was e-mailed."""

    url: str
    emailed: bool


def is_managed_account(user: User) -> bool:
    """An annotator's account, the only kind a researcher makes, links and resets."""
    return not user.is_staff and not user.is_superuser and user.groups.filter(name=ANNOTATORS).exists()


def _checked(person: NewPerson) -> NewPerson:
    """The person with surrounding blanks stripped, or ``PersonInvalid`` naming the field."""
    username, email, name = person.username.strip(), person.email.strip(), person.name.strip()
    if not username:
        raise PersonInvalid("a username is required", field="username")
    if len(username) > USERNAME_MAX_LENGTH:
        raise PersonInvalid(f"a username has at most {USERNAME_MAX_LENGTH} characters", field="username")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError as error:
        raise PersonInvalid(f"{shown(username)}: {' '.join(error.messages)}", field="username") from error
    if not email:
        raise PersonInvalid("an e-mail address is required (the sign-in link goes there)", field="email")
    try:
        validate_email(email)
    except ValidationError as error:
        raise PersonInvalid(f"{shown(email)} is not an e-mail address", field="email") from error
    if len(name) > NAME_MAX_LENGTH:
        raise PersonInvalid(f"a name has at most {NAME_MAX_LENGTH} characters", field="name")
    return NewPerson(username, email, name)


def _taken(person: NewPerson) -> None:
    if (
        User.objects.filter(username__iexact=person.username).exists()
        or Worker.objects.filter(kind=WorkerKind.LOCAL, external_id__iexact=person.username).exists()
    ):
        raise PersonInvalid(f"the username {shown(person.username)} is taken", field="username")
    if User.objects.filter(email__iexact=person.email).exists():
        raise PersonInvalid(f"{shown(person.email)} is the e-mail address of another account", field="email")


def _create(person: NewPerson) -> User:
    _, annotators = ensure_groups()
    user = User(username=person.username, email=person.email, first_name=person.name)
    # No password: the person sets one through their sign-in link.
    user.set_unusable_password()
    user.save()
    user.groups.add(annotators)
    Worker.objects.create(kind=WorkerKind.LOCAL, external_id=person.username, user=user)
    return user


def annotator_create(*, username: str, email: str, name: str = "", by: Any = None) -> User:
    """Make one annotator's account (in the annotators group, with its worker row and no password).

    ``PersonInvalid`` names the refused field; nothing is made then."""
    person = _checked(NewPerson(username, email, name))
    with transaction.atomic():
        _taken(person)
        return _create(person)


def annotators_import(*, upload: IO[bytes], file: str, by: Any = None) -> list[User]:
    """Make the annotators' accounts a CSV file lists (a header line naming ``username``, ``email``
    and, optionally, ``name``; gzipped or not), all of them or none.

    Read through the bounded reader of the imports (``annotation.importers.reading``), so the same
    limits hold; at most ``PEOPLE_IMPORT_MAX_ROWS`` people. ``ImportFailed`` names the file, the
    line and the field of the first refused value, and then no account is made."""
    people: list[tuple[int, NewPerson]] = []
    with open_binary(upload, file=file) as stream:
        lines = numbered_lines(stream, file=file)
        header_line = next(lines, None)
        if header_line is None:
            raise ImportFailed("the file is empty: its first line names the columns username,email,name", file=file)
        header = [column.strip().lower() for column in next(csv.reader([header_line[1]]), [])]
        missing = [column for column in CSV_COLUMNS[:2] if column not in header]
        unknown = [column for column in header if column not in CSV_COLUMNS]
        if missing or unknown or len(set(header)) < len(header):
            raise ImportFailed(
                f"the first line names the columns {', '.join(CSV_COLUMNS[:2])} and optionally name, "
                f"each once; it reads {shown(header_line[1].strip())}",
                file=file,
                line=1,
            )
        limit: int = settings.PEOPLE_IMPORT_MAX_ROWS
        for number, text in lines:
            if not text.strip():
                continue
            try:
                values = next(csv.reader(io.StringIO(text)))
            except csv.Error as error:
                raise ImportFailed(f"not a CSV line: {error}", file=file, line=number) from error
            if len(values) != len(header):
                raise ImportFailed(
                    f"{len(values)} values where the header names {len(header)} columns", file=file, line=number
                )
            row = dict(zip(header, values, strict=True))
            if len(people) >= limit:
                raise ImportFailed(
                    f"more than {limit} people in one file (PEOPLE_IMPORT_MAX_ROWS={limit})", file=file, line=number
                )
            person = NewPerson(row["username"], row["email"], row.get("name", ""))
            try:
                people.append((number, _checked(person)))
            except PersonInvalid as error:
                raise ImportFailed(str(error), file=file, line=number, field=error.field) from error
    if not people:
        raise ImportFailed("the file lists nobody: one person per line after the header", file=file)
    seen: dict[tuple[str, str], int] = {}
    for number, person in people:
        for field, value in (("username", person.username), ("email", person.email)):
            first = seen.setdefault((field, value.casefold()), number)
            if first != number:
                raise ImportFailed(f"{shown(value)} is on line {first} too", file=file, line=number, field=field)
    with transaction.atomic():
        made = []
        for number, person in people:
            try:
                _taken(person)
            except PersonInvalid as error:
                raise ImportFailed(str(error), file=file, line=number, field=error.field) from error
            made.append(_create(person))
    return made


def signin_url(*, user: User) -> str:
    """The one-time link: it sets a password and signs in; it stops working once used (the
    password changes), after ``PASSWORD_RESET_TIMEOUT`` seconds, or once another link resets it."""
    uidb64 = urlsafe_base64_encode(force_bytes(user.pk))
    path = reverse("people-signin", kwargs={"uidb64": uidb64, "token": default_token_generator.make_token(user)})
    return f"{settings.SITE_URL}{path}"


def _send(user: User, url: str, *, reset: bool) -> None:
    days = settings.PASSWORD_RESET_TIMEOUT / 86400
    what = "Your password was reset. Set a new one" if reset else "Choose your password and sign in"
    send_mail(
        subject="Your crowdlex password" if reset else "Your crowdlex account",
        message=(
            f"Hello {user.first_name or user.username},\n\n{what} here (the link works once, "
            f"for {days:g} days):\n\n{url}\n\nYour username is {user.username}.\n"
        ),
        from_email=None,
        recipient_list=[user.email],
    )


def person_signin_link(*, person: User, send: bool = False, by: Any = None) -> SigninLink:
    """A one-time sign-in link for an annotator's account, e-mailed to them when ``send``."""
    if not is_managed_account(person):
        raise PersonInvalid("only an annotator's account gets a sign-in link here", field="user")
    url = signin_url(user=person)
    if send:
        if not person.email:
            raise PersonInvalid(f"{person.username} has no e-mail address: show the link instead", field="email")
        _send(person, url, reset=False)
    return SigninLink(url, send)


def person_password_reset(*, person: User, send: bool = False, by: Any = None) -> SigninLink:
    """Reset an annotator's password: the old one stops working at once (and so does every link
    made before), and a one-time link sets a new one. No password is ever shown."""
    if not is_managed_account(person):
        raise PersonInvalid("only an annotator's account is reset here", field="user")
    if send and not person.email:
        raise PersonInvalid(f"{person.username} has no e-mail address: show the link instead", field="email")
    with transaction.atomic():
        person.set_unusable_password()
        person.save(update_fields=["password"])
    url = signin_url(user=person)
    if send:
        _send(person, url, reset=True)
    return SigninLink(url, send)


def batch_annotators_add(*, batch: Batch, workers: Sequence[Worker], by: Any = None) -> int:
    """Add annotators to the named list of a batch whose HITs go to named annotators
    (a scheme's assigned work): each of its HITs is reserved for them as well, with one more place, so each judges
    every target of the batch once. Returns the places added.

    Runs under the benchmark's row lock, like generation and reopening. A person named already is
    passed over; the batch must be open, on the local queue and reserved."""
    with transaction.atomic():
        Benchmark.objects.select_for_update(no_key=True).get(pk=batch.benchmark_id)
        current = Batch.objects.get(pk=batch.pk)
        if get_backend(current.backend).arrival != ARRIVAL_QUEUE:
            raise NamingRefused("named annotators work on the local queue; this batch is on a crowd")
        if current.status == BatchStatus.CLOSED:
            raise NamingRefused(f"batch {batch.pk} is closed: reopen it first")
        hits = list(HIT.objects.filter(batch=current, reserved=True).order_by("pk").values_list("pk", flat=True))
        if not hits:
            raise NamingRefused(f"batch {batch.pk} goes to whoever takes it, not to named annotators")
        added = 0
        names = []
        for worker in workers:
            named = HITReservation.objects.filter(hit__batch=current, worker=worker)
            have = set(named.values_list("hit_id", flat=True))
            todo = [hit_id for hit_id in hits if hit_id not in have]
            if not todo:
                continue
            HITReservation.objects.bulk_create([HITReservation(hit_id=hit_id, worker=worker) for hit_id in todo])
            HIT.objects.filter(pk__in=todo).update(assignments_required=F("assignments_required") + 1)
            added += len(todo)
            names.append(worker.external_id)
        if added:
            activity_record(
                benchmark=current.benchmark_id,
                kind=ActivityKind.ANNOTATORS_NAMED,
                summary=f"{', '.join(names)} named for batch {batch.pk}: {added} more HIT places",
                by=by,
                result={"batch": batch.pk, "workers": names, "places": added},
            )
    return added
