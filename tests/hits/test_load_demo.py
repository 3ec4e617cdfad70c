"""manage.py load_demo: the demo benchmark, its open batch and the accounts, safe to repeat."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.demo import DEMO_ACCOUNTS
from annotation.models import Benchmark, Candidate, Worker
from annotation.roles import ANNOTATORS, RESEARCHERS, is_researcher
from annotation.selectors import benchmark_counts
from hits.models import HIT, Assignment, Batch, BatchStatus, HITItem
from hits.services import batch_close

pytestmark = pytest.mark.django_db


def load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


def demo_rows() -> dict[str, int]:
    return {
        **benchmark_counts(benchmark=Benchmark.objects.get(name="demo")),
        "users": User.objects.count(),
        "workers": Worker.objects.count(),
        "batches": Batch.objects.count(),
        "hits": HIT.objects.count(),
        "items": HITItem.objects.count(),
    }


def test_load_demo_loads_the_benchmark_and_the_accounts() -> None:
    output = load_demo()

    demo = Benchmark.objects.get(name="demo")
    counts = benchmark_counts(benchmark=demo)
    assert counts["contexts"] >= 12
    assert counts["targets"] == counts["contexts"]
    assert counts["labels"] == 0
    for target in demo.targets.all():
        candidates = Candidate.objects.filter(target=target)
        assert 20 <= candidates.count() <= 60
        sources = {tuple(c.sources) for c in candidates}
        assert sources == {("coinco",), ("thesaurus",), ("coinco", "thesaurus")}
        assert target.context.text[target.offset : target.offset + len(target.word)] == target.word
    assert len({t.pos for t in demo.targets.all()}) == 4

    client = Client()
    for account in DEMO_ACCOUNTS:
        assert f"{account.username:<12} password {account.password}" in output
        user = User.objects.get(username=account.username)
        assert Worker.objects.filter(user=user, kind="local").exists()
        assert client.login(username=account.username, password=account.password)
    researcher = User.objects.get(username="researcher")
    assert researcher.is_staff and researcher.is_superuser and is_researcher(researcher)
    assert researcher.groups.filter(name=RESEARCHERS).exists()
    annotator = User.objects.get(username="annotator1")
    assert not annotator.is_staff and annotator.groups.filter(name=ANNOTATORS).exists()


def test_load_demo_opens_a_local_step_2_batch_of_every_demo_target() -> None:
    output = load_demo()

    batch = Batch.objects.get()
    assert (batch.step, batch.status, batch.backend) == (2, BatchStatus.OPEN, "local")
    demo = Benchmark.objects.get(name="demo")
    assert set(batch.hits.values_list("target", flat=True)) == set(demo.targets.values_list("pk", flat=True))
    judged = HITItem.objects.filter(hit__batch=batch, candidate__isnull=False)
    assert judged.count() == Candidate.objects.filter(target__benchmark=demo).count()
    assert f"Demo batch {batch.pk} (step 2, {batch.hits.count()} HITs) opened." in output


def test_an_annotator_finds_a_hit_right_after_logging_in() -> None:
    load_demo()
    client = Client()
    account = DEMO_ACCOUNTS[1]
    assert not account.researcher

    response = client.post(reverse("login"), {"username": account.username, "password": account.password}, follow=True)
    assert response.redirect_chain[-1] == (reverse("work-home"), 302)
    assert b"Start working" in response.content
    response = client.post(reverse("work-next"), follow=True)

    assignment = Assignment.objects.get(worker__user__username=account.username)
    assert response.redirect_chain == [(reverse("work-assignment", args=[assignment.pk]), 302)]
    assert f'<mark class="target">{assignment.hit.target.word}</mark>' in response.content.decode()


def test_load_demo_twice_changes_nothing_and_keeps_changed_passwords() -> None:
    load_demo()
    before = demo_rows()
    user = User.objects.get(username="annotator1")
    user.set_password("my own secret")
    user.save()

    output = load_demo()

    assert "already loaded" in output
    assert "already there" in output
    assert demo_rows() == before
    assert Client().login(username="annotator1", password="my own secret")


def test_load_demo_again_leaves_a_closed_demo_batch_closed_and_opens_no_other() -> None:
    load_demo()
    batch_close(batch=Batch.objects.get())

    load_demo()

    assert list(Batch.objects.values_list("status", flat=True)) == [BatchStatus.CLOSED]
