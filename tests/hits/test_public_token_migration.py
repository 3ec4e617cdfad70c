"""The migration that gives every existing HIT and batch a public token (hits 0017)."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db

BEFORE = ("hits", "0016_hititem_text_any_length")
AFTER = ("hits", "0017_crowd_public_tokens_and_confirmed_bindings")


@pytest.mark.production_database("migrates inside the test's transaction, where SQLite's schema editor refuses to")
def test_existing_hits_and_batches_get_distinct_random_tokens() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    benchmark = old.get_model("annotation", "Benchmark").objects.create(name="old")
    context = old.get_model("annotation", "Context").objects.create(benchmark=benchmark, text="A bright day.")
    target = old.get_model("annotation", "Target").objects.create(
        benchmark=benchmark, context=context, word="bright", offset=2, pos="adj"
    )
    batch = old.get_model("hits", "Batch").objects.create(benchmark=benchmark, step=2)
    hits = [
        old.get_model("hits", "HIT").objects.create(batch=batch, target=target, part=part, assignments_required=3)
        for part in range(3)
    ]
    with connection.cursor() as cursor:
        # The rows' deferred foreign-key checks run now, before the migration alters their tables.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")

    executor = MigrationExecutor(connection)
    executor.migrate([AFTER])
    new = executor.loader.project_state([AFTER]).apps

    tokens = [new.get_model("hits", "HIT").objects.get(pk=hit.pk).public_token for hit in hits]
    tokens.append(new.get_model("hits", "Batch").objects.get(pk=batch.pk).public_token)
    assert len(set(tokens)) == 4
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", token) for token in tokens)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
