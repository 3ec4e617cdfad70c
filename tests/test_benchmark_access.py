"""Per-benchmark permissions (docs/permissions.md): who owns a benchmark, lists that show only one's
own, grants and revocations on the page and the API, shared benchmarks, blocks, and the admin of a
researcher who is not a superuser. The matrix over every URL is tests/test_permission_matrix.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import Http404
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.access import (
    AccessRefused,
    Role,
    access_grant,
    access_revoke,
    benchmark_for,
    benchmarks_visible_to,
    role_of,
    viewer_role,
)
from annotation.models import Benchmark, BenchmarkMember, Worker
from annotation.roles import is_researcher
from annotation.selectors import benchmark_list, benchmark_list_rows
from annotation.services import benchmark_create
from hits.models import Batch
from hits.services import assignment_claim_next
from tests.base import make_user
from tests.hits.factories import make_hits, make_target

pytestmark = pytest.mark.django_db


@dataclass
class Two:
    ada: User
    ben: User
    vic: User
    sue: User
    mine: Benchmark  # ada's
    theirs: Benchmark  # ben's


@pytest.fixture
def two() -> Two:
    ada, ben, vic = (make_user(name, researcher=True) for name in ("ada", "ben", "vic"))
    sue = make_user("sue", researcher=True)
    sue.is_superuser = True
    sue.save()
    mine = benchmark_create(name="mine", created_by=ada)
    theirs = benchmark_create(name="theirs", created_by=ben)
    return Two(ada, ben, vic, sue, mine, theirs)


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def names(response: object) -> set[str]:
    return {row["name"] for row in response.json()["results"]}  # type: ignore[attr-defined]


def test_a_benchmark_made_by_a_researcher_is_theirs_and_a_commands_is_shared(two: Two) -> None:
    shared = benchmark_create(name="shared")  # as a command does: no user

    assert role_of(two.ada, two.mine) == Role.OWNER
    assert role_of(two.ada, two.theirs) is None
    assert role_of(two.vic, shared) == Role.OWNER  # every researcher, as before permissions
    assert set(benchmarks_visible_to(two.ada).values_list("name", flat=True)) == {"mine", "shared"}
    assert set(benchmarks_visible_to(two.sue).values_list("name", flat=True)) == {"mine", "theirs", "shared"}


def test_the_role_a_page_checked_is_the_readers_own_and_another_reader_gets_theirs(two: Two) -> None:
    access_grant(benchmark=two.mine, user=two.vic, role=Role.VIEWER, by=two.ada)
    mine = benchmark_for(two.ada, "mine", Role.VIEWER)
    assert viewer_role(two.ada, mine) == Role.OWNER
    # The same row asked for another reader is read again for them, not taken from the first.
    assert viewer_role(two.vic, mine) == Role.VIEWER
    assert viewer_role(two.vic, benchmark_for(two.vic, "mine", Role.VIEWER)) == Role.VIEWER


def test_a_page_reads_the_benchmark_and_the_readers_role_in_one_statement(two: Two) -> None:
    shared = benchmark_create(name="shared")
    access_grant(benchmark=two.mine, user=two.vic, role=Role.EDITOR, by=two.ada)
    cases = [
        (two.ada, "mine", Role.OWNER),
        (two.vic, "mine", Role.EDITOR),
        (two.vic, "shared", Role.OWNER),
        (two.sue, "theirs", Role.OWNER),
    ]
    for user, name, role in cases:
        assert is_researcher(user)  # the account's roles, read with it on a request
        with CaptureQueriesContext(connection) as read:
            found = benchmark_for(user, name, Role.VIEWER)
            assert viewer_role(user, found) == role, (user.username, name)
        assert len(read.captured_queries) == 1, (user.username, name)
    assert shared.pk == benchmark_for(two.ada, "shared").pk
    with pytest.raises(PermissionDenied):
        benchmark_for(two.vic, "mine", Role.OWNER)
    with pytest.raises(Http404):
        benchmark_for(two.ada, "theirs")
    with pytest.raises(Http404):
        benchmark_for(two.vic, "theirs")


def test_a_benchmarks_page_finds_it_and_the_role_as_the_lists_and_role_of_say(two: Two) -> None:
    """``benchmark_for`` reads the row and the role in SQL of its own: for every reader, benchmark,
    role needed and lookup it answers as the ORM's ``benchmarks_visible_to`` and ``role_of`` do."""
    from django.contrib.auth.models import AnonymousUser

    shared = benchmark_create(name="shared")
    access_grant(benchmark=two.mine, user=two.vic, role=Role.EDITOR, by=two.ada)
    access_grant(benchmark=two.theirs, user=two.vic, role=Role.VIEWER, by=two.ben)
    annotator = make_user("ann")
    clerk = make_user("clerk", researcher=True)
    clerk.is_staff = False  # in the group, but not staff: not a researcher
    clerk.save()
    readers = [two.ada, two.ben, two.vic, two.sue, annotator, clerk, AnonymousUser()]
    lookups: list[dict[str, Any]] = [{}, {"scheme": shared.scheme}, {"scheme": "other"}, {"scheme__in": ["x"]}]
    outcomes = set()
    for user in readers:
        for benchmark in (two.mine, two.theirs, shared):
            for need in Role:
                for lookup in lookups:
                    visible = benchmarks_visible_to(user).filter(name=benchmark.name, **lookup).exists()
                    role = role_of(user, benchmark) if visible else None
                    expected: object = (
                        Http404 if not visible else PermissionDenied if role is None or role < need else role
                    )
                    try:
                        found = benchmark_for(user, benchmark.name, need, **lookup)
                    except (Http404, PermissionDenied) as refused:
                        answer: object = type(refused)
                    else:
                        assert found.pk == benchmark.pk and found.name == benchmark.name
                        assert found.scheme_settings == benchmark.scheme_settings
                        answer = viewer_role(user, found)
                    assert answer == expected, (getattr(user, "username", ""), benchmark.name, need, lookup)
                    outcomes.add(expected if isinstance(expected, type) else "found")
    assert outcomes == {Http404, PermissionDenied, "found"}


def role_by_rows(user: Any, benchmark_id: int) -> Role | None:
    """The role docs/permissions.md gives, worked out from the member rows in Python."""
    if not is_researcher(user):
        return None
    if user.is_superuser:
        return Role.OWNER
    roles = dict(BenchmarkMember.objects.filter(benchmark_id=benchmark_id).values_list("user_id", "role"))
    if user.pk in roles:
        return Role(roles[user.pk])
    return None if Role.OWNER in roles.values() else Role.OWNER


def test_a_rows_page_finds_it_and_the_role_as_the_lists_and_the_member_rows_say(two: Two) -> None:
    """``object_for`` reads a row by its key and then the reader's role (``role_of``, in SQL): for
    every reader, row (its benchmark near or far, or none), role needed and missing row, it answers
    as filtering by the visible benchmarks and the member rows say."""
    from django.contrib.auth.models import AnonymousUser

    from annotation.access import object_for, visible
    from annotation.models import ImportJob, Target
    from hits.models import HIT

    shared = benchmark_create(name="shared")
    access_grant(benchmark=two.mine, user=two.vic, role=Role.EDITOR, by=two.ada)
    access_grant(benchmark=two.theirs, user=two.vic, role=Role.VIEWER, by=two.ben)
    annotator = make_user("ann")
    readers = [two.ada, two.ben, two.vic, two.sue, annotator, AnonymousUser()]
    hits = [make_hits(benchmark, 1)[0] for benchmark in (two.mine, two.theirs, shared)]
    jobs = [
        ImportJob.objects.create(benchmark_name="later", created_by=two.ada),
        ImportJob.objects.create(benchmark_name="mine", benchmark=two.mine, created_by=two.ada),
    ]
    rows: list[tuple[Any, int]] = [(Batch.objects.select_related("benchmark"), hit.batch_id) for hit in hits]
    rows += [(HIT.objects.select_related("batch"), hit.pk) for hit in hits]
    rows += [
        (Target.objects.all(), pk)
        for pk in Target.objects.filter(benchmark__members__isnull=False).values_list("pk", flat=True)
    ]
    rows += [(Target.objects.all(), pk) for pk in Target.objects.filter(benchmark=shared).values_list("pk", flat=True)]
    rows += [(ImportJob.objects.all(), job.pk) for job in jobs]
    rows += [(Batch.objects.all(), max(hit.batch_id for hit in hits) + 1)]
    outcomes = set()
    for user in readers:
        for queryset, pk in rows:
            model = queryset.model
            seen = visible(user, model.objects.all()).filter(pk=pk).values_list(model.benchmark_path, flat=True)
            for need in Role:
                if not seen:
                    expected: object = Http404
                else:
                    role = role_by_rows(user, seen[0])
                    expected = Http404 if role is None else PermissionDenied if role < need else "found"
                try:
                    found = object_for(user, queryset, need, pk=pk)
                except (Http404, PermissionDenied) as refused:
                    answer: object = type(refused)
                else:
                    answer = "found"
                    assert found.pk == pk and type(found) is model
                    assert not any(key.startswith("_crowdlex") for key in found.__dict__)
                assert answer == expected, (getattr(user, "username", ""), model.__name__, pk, need)
                outcomes.add((model.__name__, answer))
            for benchmark in (two.mine, two.theirs, shared):
                assert role_of(user, benchmark) == role_by_rows(user, benchmark.pk)
    assert {answer for _, answer in outcomes} == {Http404, PermissionDenied, "found"}
    assert {name for name, answer in outcomes if answer == "found"} == {"Batch", "HIT", "Target", "ImportJob"}


def test_the_list_page_reads_the_rows_and_counts_the_selector_gives(two: Two) -> None:
    """The benchmarks' page reads its rows in SQL of its own (``benchmark_list_rows``): for every
    reader, the same benchmarks in the same order with the same target counts as ``benchmark_list``."""
    from django.contrib.auth.models import AnonymousUser

    shared = benchmark_create(name="a-shared")
    access_grant(benchmark=two.theirs, user=two.vic, role=Role.VIEWER, by=two.ben)
    for _ in range(3):
        make_target(two.theirs)
    make_target(shared)
    annotator = make_user("ann")
    clerk = make_user("clerk", researcher=True)
    clerk.is_staff = False
    clerk.save()
    listed = []
    for user in (two.ada, two.ben, two.vic, two.sue, annotator, clerk, AnonymousUser()):
        expected = [(each.pk, each.name, each.target_count) for each in benchmark_list(user=user)]  # type: ignore[attr-defined]
        rows = benchmark_list_rows(user=user)
        assert [(each.pk, each.name, each.target_count) for each in rows] == expected  # type: ignore[attr-defined]
        assert [each.created_at for each in rows] == [Benchmark.objects.get(pk=pk).created_at for pk, *_ in expected]
        listed.append(len(rows))
    assert listed == [2, 2, 2, 3, 0, 0, 0]


def test_the_lists_show_only_ones_own_benchmarks(two: Two) -> None:
    page = signed_in(two.ada).get("/benchmarks/").content.decode()
    api = signed_in(two.ada).get("/api/benchmarks/")

    assert "/benchmarks/mine/" in page and "/benchmarks/theirs/" not in page
    assert names(api) == {"mine"}
    assert names(signed_in(two.sue).get("/api/benchmarks/")) == {"mine", "theirs"}


def test_a_benchmark_created_on_the_page_or_by_an_import_belongs_to_its_creator(
    two: Two, tmp_path: object, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    client = signed_in(two.vic)
    assert client.post("/benchmarks/", {"name": "fresh", "scheme": "swords"}).status_code == 302
    line = '{"context": "A bright day.", "target": "bright", "offset": 2, "pos": "adj", "candidates": ["sunny"]}\n'
    with django_capture_on_commit_callbacks(execute=True):  # the import job runs once the request is done
        imported = client.post("/api/benchmarks/imported/import", {"file": _upload(line)})

    assert imported.status_code == 202, imported.content
    assert BenchmarkMember.objects.get(benchmark__name="fresh").user == two.vic
    assert BenchmarkMember.objects.get(benchmark__name="imported").role == Role.OWNER
    # Importing into someone else's benchmark finds nothing there to import into.
    assert client.post("/api/benchmarks/mine/import", {"file": _upload(line)}).status_code == 404


def _upload(text: str) -> object:
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("words.jsonl", text.encode())


def test_an_owner_grants_and_revokes_on_the_access_page(two: Two) -> None:
    owner = signed_in(two.ada)
    assert signed_in(two.vic).get("/benchmarks/mine/").status_code == 404

    granted = owner.post("/benchmarks/mine/access/", {"username": "vic", "role": Role.VIEWER})
    assert granted.status_code == 302
    viewer = signed_in(two.vic)
    assert viewer.get("/benchmarks/mine/").status_code == 200
    assert viewer.post("/benchmarks/mine/batches/", {"step": 2, "seed": 1}).status_code == 403
    assert viewer.post("/benchmarks/mine/access/", {"username": "ben", "role": Role.OWNER}).status_code == 403
    page = owner.get("/benchmarks/mine/access/").content.decode()
    assert "vic" in page and "viewer" in page

    revoke = f"/benchmarks/mine/access/{two.vic.pk}/revoke/"
    asked = owner.post(revoke)
    html = asked.content.decode()
    assert asked.status_code == 200 and "Remove vic&#x27;s access to mine?" in html
    assert "take away vic&#x27;s viewer role in mine" in html and 'href="/benchmarks/mine/access/"' in html
    assert viewer.get("/benchmarks/mine/").status_code == 200

    assert owner.post(revoke, {"confirmed": "yes"}).status_code == 302
    assert viewer.get("/benchmarks/mine/").status_code == 404


def test_the_page_refuses_a_grant_to_an_account_that_is_not_a_researcher(two: Two) -> None:
    make_user("alice")
    response = signed_in(two.ada).post("/benchmarks/mine/access/", {"username": "alice", "role": Role.EDITOR})

    assert response.status_code == 400
    assert "No researcher has this account." in response.content.decode()
    assert not BenchmarkMember.objects.filter(user__username="alice").exists()


def test_an_owner_grants_and_revokes_through_the_api_and_the_last_owner_stays(two: Two) -> None:
    owner = signed_in(two.ada)

    granted = owner.post("/api/benchmarks/mine/access", {"username": "vic", "role": "editor"})
    assert granted.status_code == 200 and granted.json()["role"] == "editor"
    assert role_of(two.vic, two.mine) == Role.EDITOR
    listed = owner.get("/api/benchmarks/mine/access").json()
    assert {(row["username"], row["role"]) for row in listed} == {("ada", "owner"), ("vic", "editor")}

    refused = owner.delete("/api/benchmarks/mine/access/ada")
    assert refused.status_code == 400 and "at least one owner" in refused.json()["detail"]
    assert owner.delete("/api/benchmarks/mine/access/vic").status_code == 204
    assert role_of(two.vic, two.mine) is None
    # An editor does not grant; someone else's benchmark is not there at all.
    assert (
        signed_in(two.ben).post("/api/benchmarks/mine/access", {"username": "ben", "role": "owner"}).status_code == 404
    )


def test_the_last_owner_can_be_replaced_but_not_removed(two: Two) -> None:
    with pytest.raises(AccessRefused):
        access_grant(benchmark=two.mine, user=two.ada, role=Role.VIEWER, by=two.ada)
    access_grant(benchmark=two.mine, user=two.vic, role=Role.OWNER, by=two.ada)
    access_grant(benchmark=two.mine, user=two.ada, role=Role.VIEWER, by=two.vic)

    assert role_of(two.ada, two.mine) == Role.VIEWER
    with pytest.raises(AccessRefused):
        access_revoke(benchmark=two.mine, user=two.vic)


def test_only_a_superuser_gives_a_shared_benchmark_an_owner(two: Two) -> None:
    shared = benchmark_create(name="shared")
    grant = {"username": "vic", "role": "owner"}

    assert signed_in(two.ada).post("/api/benchmarks/shared/access", grant).status_code == 403
    # A smaller role on a shared benchmark would only take this one researcher's rights away.
    viewer = signed_in(two.sue).post("/api/benchmarks/shared/access", {"username": "ada", "role": "viewer"})
    assert viewer.status_code == 400 and "give it an owner first" in viewer.json()["detail"]
    assert role_of(two.ada, shared) == Role.OWNER
    assert signed_in(two.sue).post("/api/benchmarks/shared/access", grant).status_code == 200
    # Owned now: private to its members.
    assert signed_in(two.ada).get("/api/benchmarks/shared/").status_code == 404
    assert signed_in(two.vic).get("/api/benchmarks/shared/").status_code == 200


def test_batch_and_assignment_lists_hold_only_ones_own_and_a_batch_goes_only_into_ones_own(two: Two) -> None:
    make_hits(two.mine, 1)
    make_hits(two.theirs, 1)
    access_grant(benchmark=two.theirs, user=two.ada, role=Role.VIEWER, by=two.ben)
    client = signed_in(two.ada)
    make_user("carl", researcher=True)
    stranger = signed_in(User.objects.get(username="carl"))

    assert {row["benchmark"] for row in client.get("/api/batches/").json()["results"]} == {"mine", "theirs"}
    assert stranger.get("/api/batches/").json()["results"] == []
    created = stranger.post("/api/batches/", {"benchmark": "mine", "step": 2, "seed": 1})
    assert created.status_code == 400 and "benchmark" in created.json()
    assert client.post("/api/batches/", {"benchmark": "theirs", "step": 2, "seed": 1}).status_code == 403
    assert Batch.objects.count() == 2


def test_a_block_is_global_and_needs_an_editor_where_the_worker_worked(two: Two) -> None:
    make_hits(two.mine, 1)
    make_hits(two.theirs, 2)
    worker_user = make_user("alice")
    worker = Worker.objects.get(user=worker_user)
    assignment = assignment_claim_next(worker=worker, batch=Batch.objects.get(benchmark=two.mine))
    assert assignment is not None

    # ben's benchmarks never saw alice: her id is not his to block.
    assert signed_in(two.ben).post(f"/api/workers/{worker.pk}/block/", {"reason": "x"}).status_code == 404
    blocked = signed_in(two.ada).post(f"/api/workers/{worker.pk}/block/", {"reason": "spam"})
    assert blocked.status_code == 200
    worker.refresh_from_db()
    assert worker.blocked
    # Global: she is offered nothing of ben's benchmark either.
    assert assignment_claim_next(worker=worker, batch=Batch.objects.get(benchmark=two.theirs)) is None


def test_a_researcher_uses_the_admin_for_their_benchmarks_only(two: Two) -> None:
    make_hits(two.mine, 1)
    make_hits(two.theirs, 1)
    access_grant(benchmark=two.theirs, user=two.ada, role=Role.VIEWER, by=two.ben)
    admin = signed_in(two.ada)
    mine_batch = Batch.objects.get(benchmark=two.mine)
    theirs_batch = Batch.objects.get(benchmark=two.theirs)
    make_user("carl", researcher=True)
    carl = signed_in(User.objects.get(username="carl"))

    listed = admin.get("/admin/hits/batch/").content.decode()
    assert f"/admin/hits/batch/{mine_batch.pk}/change/" in listed
    assert f"/admin/hits/batch/{theirs_batch.pk}/change/" in listed
    assert "Save" in admin.get(f"/admin/hits/batch/{mine_batch.pk}/change/").content.decode()
    # A viewer reads the row and changes nothing.
    read_only = admin.get(f"/admin/hits/batch/{theirs_batch.pk}/change/").content.decode()
    assert 'name="_save"' not in read_only
    assert admin.post(f"/admin/hits/batch/{theirs_batch.pk}/change/", {"status": "closed"}).status_code == 403

    # Someone with no grant sees none of it, and the benchmark filter names none of it.
    listing = carl.get("/admin/hits/batch/").content.decode()
    assert "theirs" not in listing and "mine" not in listing
    assert carl.get(f"/admin/hits/batch/{mine_batch.pk}/change/").status_code == 404
    # Foreign keys offer only benchmarks one may change.
    choices = set(
        re.findall(r'<option value="\d+">([\w-]+)</option>', admin.get("/admin/hits/batch/add/").content.decode())
    )
    assert "mine" in choices and "theirs" not in choices
    # Accounts stay with superusers.
    assert admin.get("/admin/auth/user/").status_code == 403


def test_an_admin_action_acts_only_where_the_role_suffices(two: Two) -> None:
    make_hits(two.mine, 1)
    make_hits(two.theirs, 1)
    access_grant(benchmark=two.theirs, user=two.ada, role=Role.VIEWER, by=two.ben)
    batches = list(Batch.objects.order_by("pk").values_list("pk", flat=True))

    response = signed_in(two.ada).post(
        "/admin/hits/batch/", {"action": "close_batches", "_selected_action": batches}, follow=True
    )

    assert "1 row(s) left alone: this needs the editor role." in response.content.decode()
    assert dict(Batch.objects.values_list("benchmark__name", "status")) == {"mine": "closed", "theirs": "open"}


def test_an_editor_changes_the_collection_settings_but_a_new_reward_is_the_owners(two: Two) -> None:
    from tests.review.test_benchmark_settings import _collection_form

    access_grant(benchmark=two.mine, user=two.vic, role=Role.EDITOR, by=two.ada)
    editor, owner = signed_in(two.vic), signed_in(two.ada)
    page, api = "/benchmarks/mine/settings/", "/api/benchmarks/mine/settings/"

    assert editor.post(page, _collection_form(two.mine, seed=7)).status_code == 302
    refused = editor.post(page, _collection_form(two.mine, reward="0.50"))
    assert refused.status_code == 403
    assert editor.patch(api, '{"reward": "0.50"}', content_type="application/json").status_code == 403
    # The same reward is no change of what a crowd costs.
    same = editor.patch(api, f'{{"reward": "{two.mine.reward}", "seed": 8}}', content_type="application/json")
    assert same.status_code == 200, same.content
    two.mine.refresh_from_db()
    assert two.mine.seed == 8 and two.mine.reward != Decimal("0.50")

    assert owner.patch(api, '{"reward": "0.50"}', content_type="application/json").status_code == 200
    two.mine.refresh_from_db()
    assert two.mine.reward == Decimal("0.50")
    # Another's benchmark is not there, to read or to change.
    assert signed_in(two.ben).get(page).status_code == 404
    assert signed_in(two.ben).patch(api, "{}", content_type="application/json").status_code == 404


def test_the_activity_log_the_live_figures_and_the_plots_are_the_benchmarks_viewers(two: Two) -> None:
    from annotation.activity import activity_record
    from annotation.models import ActivityKind

    activity_record(benchmark=two.mine, kind=ActivityKind.BENCHMARK_CREATED, summary="secret plan", by=two.ada)
    access_grant(benchmark=two.mine, user=two.vic, role=Role.VIEWER, by=two.ada)
    urls = ["/benchmarks/mine/activity/", "/api/benchmarks/mine/activity/", "/benchmarks/mine/live/"]

    for url in urls:
        assert signed_in(two.vic).get(url).status_code == 200, url
        assert signed_in(two.ben).get(url).status_code == 404, url
    assert b"secret plan" in signed_in(two.vic).get(urls[1]).content
    assert signed_in(two.ben).get("/api/benchmarks/mine/plots").status_code == 404
    # In the admin the log is read-only, and another's entries are not there.
    entry = two.mine.activities.get(summary="secret plan")
    assert signed_in(two.vic).get(f"/admin/annotation/activity/{entry.pk}/change/").status_code == 200
    assert signed_in(two.ben).get(f"/admin/annotation/activity/{entry.pk}/change/").status_code == 404
    assert signed_in(two.ada).get(f"/admin/annotation/activity/{entry.pk}/delete/").status_code == 403


def test_a_rows_page_reads_its_row_by_a_statement_the_orm_built_once(two: Two, monkeypatch: Any) -> None:
    """``object_for`` of a row by its key from a table as it is (its related rows selected with it)
    runs a statement the ORM built once per process: the next request builds none, and finds the
    row, its related rows and the role as the ORM does. A queryset that narrows the rows is read
    by the ORM, and a key no column holds finds nothing."""
    from django.db.models.sql.compiler import SQLCompiler

    from annotation.access import object_for
    from hits.models import HIT

    hit = make_hits(two.mine, 1)[0]
    batch = Batch.objects.get(pk=hit.batch_id)
    object_for(two.ada, Batch.objects.select_related("benchmark", "created_by"), Role.VIEWER, pk=batch.pk)
    object_for(two.ada, HIT.objects.select_related("batch"), Role.VIEWER, pk=hit.pk)
    built = []
    as_sql = SQLCompiler.as_sql

    def counted(self: SQLCompiler, *args: Any, **kwargs: Any) -> Any:
        built.append(self.query.model)
        return as_sql(self, *args, **kwargs)

    monkeypatch.setattr(SQLCompiler, "as_sql", counted)
    with CaptureQueriesContext(connection) as read:
        found = object_for(two.ada, Batch.objects.select_related("benchmark", "created_by"), Role.VIEWER, pk=batch.pk)
        assert (found.benchmark.name, found.created_by) == ("mine", batch.created_by)
        far = object_for(two.ada, HIT.objects.select_related("batch"), Role.EDITOR, pk=hit.pk)
        assert far.batch.pk == batch.pk and not any(key.startswith("_crowdlex") for key in far.__dict__)
    assert built == []
    assert len(read.captured_queries) == 4  # each row, then the reader's role
    monkeypatch.setattr(SQLCompiler, "as_sql", as_sql)
    access_grant(benchmark=two.mine, user=two.vic, role=Role.VIEWER, by=two.ada)
    assert object_for(two.vic, Batch.objects.all(), Role.VIEWER, pk=batch.pk) == batch
    with pytest.raises(PermissionDenied):
        object_for(two.vic, Batch.objects.all(), Role.EDITOR, pk=batch.pk)
    with pytest.raises(Http404):
        object_for(two.ben, Batch.objects.all(), Role.VIEWER, pk=batch.pk)
    with pytest.raises(Http404):
        object_for(two.ada, Batch.objects.filter(benchmark=two.theirs), Role.VIEWER, pk=batch.pk)
    with pytest.raises(Http404):
        object_for(two.ada, Batch.objects.all(), Role.VIEWER, pk=2**63)
