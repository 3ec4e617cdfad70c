"""The signed-in account kept beside the session in the shared cache (crowdlex.accounts): read with
the session in one round trip, and read again from the database after every change to it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Worker, WorkerKind
from annotation.roles import ANNOTATORS, RESEARCHERS, is_annotator, is_researcher
from crowdlex import accounts
from crowdlex.accounts import account_forget
from crowdlex.authentication import AccountBackend, _account_format, _account_of, account_statement
from tests.base import PASSWORD, Cast

pytestmark = pytest.mark.django_db

ANNOTATOR_PAGE = "/work/"
ROLES = ("researchers", "annotators")
RESEARCHER_PAGE = "/benchmarks/"


def account_reads(captured: CaptureQueriesContext) -> int:
    """The account's statements among those captured: the two roles it reads, as parameters of the
    prepared statement on PostgreSQL, in the statement's text on SQLite."""
    return sum(1 for query in captured.captured_queries if all(f"'{role}'" in query["sql"] for role in ROLES))


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def warm(client: Client, path: str = ANNOTATOR_PAGE) -> None:
    """Two requests: the first fills the kept account, the second answers from it."""
    for _ in range(2):
        assert client.get(path).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path).status_code == 200
    assert account_reads(captured) == 0


def signed_out(client: Client, path: str = ANNOTATOR_PAGE) -> bool:
    response = client.get(path)
    return response.status_code == 302 and "/accounts/login/" in response["Location"]


def refused(client: Client, path: str) -> bool:
    return client.get(path).status_code in (302, 403)


def get_user(user: User) -> User:
    """The account as a request would read it (from the kept row when there is one)."""
    found = AccountBackend().get_user(user.pk)
    assert found is not None
    return found


# Miss, fill, kept, and without Redis.


def test_the_account_is_read_once_then_kept(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.alice)
    with CaptureQueriesContext(connection) as first:
        assert client.get(ANNOTATOR_PAGE).status_code == 200
    with CaptureQueriesContext(connection) as second:
        assert client.get(ANNOTATOR_PAGE).status_code == 200
    assert (account_reads(first), account_reads(second)) == (1, 0)
    assert second.captured_queries and not any("django_session" in q["sql"] for q in second.captured_queries)


def test_the_kept_account_is_the_account_with_its_roles_and_worker(kept: accounts.Keeper, cast: Cast) -> None:
    fresh = get_user(cast.researcher)
    again = get_user(cast.researcher)
    assert account_reads_of(lambda: get_user(cast.researcher)) == 0
    for user in (fresh, again):
        assert user.pk == cast.researcher.pk and user.username == "rita" and user.password == cast.researcher.password
        assert is_researcher(user) and not is_annotator(user)
    assert worker_read(cast.researcher) == "rita"
    # A kept account is read through its pointer with the session, or by its id without one.
    client = signed_in(cast.alice)
    warm(client)
    session_key = client.cookies["sessionid"].value
    assert kept.client.get(kept.pointer_key(session_key)) == str(cast.alice.pk).encode()


def test_the_session_and_the_account_are_read_in_one_round_trip(
    kept: accounts.Keeper, cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = signed_in(cast.alice)
    warm(client)
    calls: list[str] = []
    for name in ("peek", "load_with_session"):
        monkeypatch.setattr(accounts.Keeper, name, counted(getattr(accounts.Keeper, name), calls))
    with CaptureQueriesContext(connection) as captured:
        assert client.get(ANNOTATOR_PAGE).status_code == 200
    assert calls == ["load_with_session"] and account_reads(captured) == 0


def counted(method: Any, calls: list[str]) -> Any:
    def call(*args: Any) -> Any:
        calls.append(method.__name__)
        return method(*args)

    return call


def account_reads_of(call: Any) -> int:
    with CaptureQueriesContext(connection) as captured:
        call()
    return account_reads(captured)


def each_reads_the_account(client: Any, times: int) -> None:
    """``times`` requests of the annotator's page, each reading the account from the database."""
    for _ in range(times):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(ANNOTATOR_PAGE).status_code == 200
        assert account_reads(captured) == 1


def test_without_redis_every_request_reads_the_account(settings: Any, cast: Cast) -> None:
    assert accounts.keeper() is None
    each_reads_the_account(signed_in(cast.alice), 3)


def test_a_setting_of_zero_keeps_nothing(kept: accounts.Keeper, settings: Any, cast: Cast) -> None:
    settings.ACCOUNT_KEPT_SECONDS = 0
    assert accounts.keeper() is None
    each_reads_the_account(signed_in(cast.alice), 2)


def test_the_kept_row_lives_at_most_the_setting(kept: accounts.Keeper, settings: Any, cast: Cast) -> None:
    settings.ACCOUNT_KEPT_SECONDS = 1
    keeper = accounts.keeper()
    assert keeper is not None
    client = signed_in(cast.alice)
    warm(client)
    ttl = keeper.client.ttl(keeper.row_prefix + str(cast.alice.pk))
    assert 0 < ttl <= 1
    # A write that tells nobody (SQL by hand) is seen once the kept row has expired.
    User.objects.filter(pk=cast.alice.pk).update(is_active=False)
    assert client.get(ANNOTATOR_PAGE).status_code == 200
    time.sleep(1.2)
    assert signed_out(client)


# Each way an account changes: the next request reads it afresh.


def test_a_deactivated_account_is_signed_out_at_once(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.alice)
    warm(client)
    cast.alice.is_active = False
    cast.alice.save()
    assert signed_out(client)


def test_a_deleted_account_is_signed_out_at_once(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.alice)
    warm(client)
    User.objects.filter(pk=cast.alice.pk).delete()
    assert signed_out(client)


def test_a_password_changed_elsewhere_signs_the_session_out(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.alice)
    warm(client)
    cast.alice.set_password("another horse battery")
    cast.alice.save()
    assert signed_out(client)


def test_changing_ones_own_password_keeps_one_signed_in(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.researcher)
    warm(client, RESEARCHER_PAGE)
    other = signed_in(cast.researcher)
    warm(other, RESEARCHER_PAGE)
    new = "another horse battery staple"
    response = client.post(
        "/admin/password_change/", {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    )
    assert response.status_code == 302
    assert client.get(RESEARCHER_PAGE).status_code == 200
    assert signed_out(other, RESEARCHER_PAGE)


def test_a_session_hash_the_kept_row_does_not_match_reads_the_account_again(kept: accounts.Keeper, cast: Cast) -> None:
    # The row kept under an id that now names another account (a database rebuilt under the same
    # name): the session's hash is the new account's, so the account is read from the database.
    client = signed_in(cast.alice)
    warm(client)
    User.objects.filter(pk=cast.alice.pk).update(password=cast.bob.password)  # tells nobody
    session = client.session
    session["_auth_user_hash"] = User.objects.get(pk=cast.alice.pk).get_session_auth_hash()
    session.save()
    with CaptureQueriesContext(connection) as captured:
        assert client.get(ANNOTATOR_PAGE).status_code == 200
    assert account_reads(captured) == 1


def test_a_removed_annotator_loses_the_queue(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.alice)
    warm(client)
    cast.alice.groups.remove(Group.objects.get(name=ANNOTATORS))
    assert refused(client, ANNOTATOR_PAGE)


def test_a_removed_researcher_loses_the_page(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.researcher)
    warm(client, RESEARCHER_PAGE)
    Group.objects.get(name=RESEARCHERS).user_set.remove(cast.researcher)
    assert refused(client, RESEARCHER_PAGE)


def test_memberships_cleared_from_either_side(kept: accounts.Keeper, cast: Cast) -> None:
    alice, bob = signed_in(cast.alice), signed_in(cast.bob)
    warm(alice)
    warm(bob)
    cast.alice.groups.clear()
    assert refused(alice, ANNOTATOR_PAGE)
    Group.objects.get(name=ANNOTATORS).user_set.clear()
    assert refused(bob, ANNOTATOR_PAGE)


def test_a_membership_added_is_seen(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.alice)
    warm(client)
    assert refused(client, RESEARCHER_PAGE)
    cast.alice.is_staff = True
    cast.alice.save()
    assert refused(client, RESEARCHER_PAGE)
    cast.alice.groups.add(Group.objects.get(name=RESEARCHERS))
    assert client.get(RESEARCHER_PAGE).status_code == 200
    Group.objects.get(name=RESEARCHERS).user_set.remove(cast.alice)
    assert refused(client, RESEARCHER_PAGE)
    Group.objects.get(name=RESEARCHERS).user_set.add(cast.alice)
    assert client.get(RESEARCHER_PAGE).status_code == 200


def test_a_role_group_renamed_or_deleted(kept: accounts.Keeper, cast: Cast) -> None:
    alice, researcher = signed_in(cast.alice), signed_in(cast.researcher)
    warm(alice)
    warm(researcher, RESEARCHER_PAGE)
    annotators = Group.objects.get(name=ANNOTATORS)
    annotators.name = "former annotators"
    annotators.save()
    assert refused(alice, ANNOTATOR_PAGE)
    Group.objects.get(name=RESEARCHERS).delete()
    assert refused(researcher, RESEARCHER_PAGE)


def test_staff_and_superuser_flags(kept: accounts.Keeper, cast: Cast) -> None:
    client = signed_in(cast.researcher)
    warm(client, RESEARCHER_PAGE)
    cast.researcher.is_staff = False
    cast.researcher.save(update_fields=["is_staff"])
    assert refused(client, RESEARCHER_PAGE)
    cast.researcher.is_superuser = True
    cast.researcher.save()
    assert client.get(RESEARCHER_PAGE).status_code == 200
    assert get_user(cast.researcher).is_superuser
    cast.researcher.is_superuser = False
    cast.researcher.save()
    assert refused(client, RESEARCHER_PAGE)


def test_a_username_changed(kept: accounts.Keeper, cast: Cast) -> None:
    get_user(cast.alice)
    cast.alice.username = "alicia"
    cast.alice.save()
    assert get_user(cast.alice).username == "alicia"


def worker_read(user: User) -> str | None:
    """The worker the account was read with (the reverse accessor would read the database itself)."""
    worker = User.worker.related.get_cached_value(get_user(user), None)  # type: ignore[attr-defined]
    return None if worker is None else worker.external_id  # type: ignore[attr-defined, no-any-return]


def test_the_worker_created_changed_deleted_and_relinked(kept: accounts.Keeper, cast: Cast) -> None:
    assert worker_read(cast.alice) == "alice"
    Worker.objects.filter(user=cast.alice).delete()
    assert worker_read(cast.alice) is None
    worker = Worker.objects.create(kind=WorkerKind.LOCAL, external_id="alice-2", user=cast.alice)
    assert worker_read(cast.alice) == "alice-2"
    worker.external_id = "alice-3"
    worker.save()
    assert worker_read(cast.alice) == "alice-3"
    Worker.objects.filter(user=cast.bob).delete()
    assert worker_read(cast.bob) is None
    # Moved from alice to bob: both accounts change.
    worker.user = cast.bob
    worker.save()
    assert (worker_read(cast.bob), worker_read(cast.alice)) == ("alice-3", None)
    worker.delete()
    assert worker_read(cast.bob) is None


def test_a_write_without_signals_names_the_account(kept: accounts.Keeper, cast: Cast) -> None:
    assert worker_read(cast.alice) == "alice"
    Worker.objects.filter(user=cast.alice).update(external_id="renamed")
    assert worker_read(cast.alice) == "alice"  # kept: nothing said it changed
    account_forget([cast.alice.pk])
    assert worker_read(cast.alice) == "renamed"


# The race: a fill that read the database before a change committed never keeps what it read.


def test_a_fill_that_read_before_a_change_committed_does_not_keep_it(kept: accounts.Keeper, cast: Cast) -> None:
    before = _row(cast.alice)

    def load_then_the_change_commits() -> tuple[Any, ...]:
        # The fill's statement saw the account before the change ...
        User.objects.filter(pk=cast.alice.pk).update(is_active=False)
        account_forget([cast.alice.pk])  # ... whose writer forgets it once committed.
        return before

    user = read_with(cast.alice, load_then_the_change_commits)
    assert user.is_active  # this request read it before the change: it may say so ...
    assert not kept.client.exists(kept.row_prefix + str(cast.alice.pk))  # ... but keeps nothing
    assert AccountBackend().get_user(cast.alice.pk) is None  # and the next request reads it afresh


def test_a_fill_between_the_write_and_its_commit_is_forgotten_at_the_commit(
    kept: accounts.Keeper, cast: Cast, django_capture_on_commit_callbacks: Any
) -> None:
    before = _row(cast.alice)
    with django_capture_on_commit_callbacks(execute=True):
        cast.alice.is_active = False
        cast.alice.save()  # forgets now, inside its transaction, and again at the commit
        # Another request fills meanwhile with the row as committed so far (the change is not yet).
        read_with(cast.alice, lambda: before)
        assert kept.client.exists(kept.row_prefix + str(cast.alice.pk))
    assert AccountBackend().get_user(cast.alice.pk) is None


def _row(user: User) -> tuple[Any, ...]:
    with connection.cursor() as cursor:
        cursor.execute(f"{account_statement()} WHERE u.id = %s", [RESEARCHERS, ANNOTATORS, "2000-01-01", user.pk])
        return tuple(cursor.fetchone())


def read_with(user: User, load: Any) -> User:
    """The account as the backend reads it, with ``load`` standing for its statement."""
    return accounts.account_signed_in(user.pk, fmt=_account_format(), load=load, build=lambda row: _account_of(row)[0])


# Signing in and out.


def test_logout_login_and_another_account_on_the_same_browser(kept: accounts.Keeper, cast: Cast) -> None:
    client = Client()
    assert client.login(username="alice", password=PASSWORD)
    warm(client)
    first_key = client.cookies["sessionid"].value
    assert client.post("/accounts/logout/").status_code == 302
    assert signed_out(client)
    assert client.login(username="rita", password=PASSWORD)
    assert client.cookies["sessionid"].value != first_key
    warm(client, RESEARCHER_PAGE)
    assert client.get(ANNOTATOR_PAGE).wsgi_request.user.username == "rita"
    # The old session's key, sent again, is no one's.
    stale = Client()
    stale.cookies["sessionid"] = first_key
    assert signed_out(stale)
