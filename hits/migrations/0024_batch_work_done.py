"""The count of each worker's submitted HITs per batch (``hits.models.BatchWorkDone``): the table,
the triggers that keep it on every write to the assignments, and its first filling.

The triggers and the filling run in the migration's transaction: on PostgreSQL creating a trigger
locks the assignments against writes until the commit, so no submit slips between the filling
and the first counted change.
"""

import django.db.models.deletion
from django.db import migrations, models

# The statuses of submitted work (hits.models.SUBMITTED_STATUSES), as stored.
COUNTED = "('submitted', 'approved', 'rejected')"

ADD_ONE = """
    INSERT INTO hits_batchworkdone (worker_id, batch_id, done)
    SELECT NEW.worker_id, h.batch_id, 1 FROM hits_hit h WHERE h.id = NEW.hit_id
    ON CONFLICT (worker_id, batch_id) DO UPDATE SET done = hits_batchworkdone.done + 1
"""
TAKE_ONE = """
    UPDATE hits_batchworkdone SET done = done - 1
    WHERE worker_id = OLD.worker_id AND batch_id = (SELECT h.batch_id FROM hits_hit h WHERE h.id = OLD.hit_id)
"""
# An update that moves an assignment in or out of the counted statuses (or, should one ever, to
# another worker or HIT); approvals and rejections stay counted and fire nothing.
MOVED = f"""
    (OLD.status IN {COUNTED}) IS NOT (NEW.status IN {COUNTED})
    OR OLD.worker_id IS NOT NEW.worker_id OR OLD.hit_id IS NOT NEW.hit_id
"""

# PostgreSQL: one function, run as the assignment's row is written, so the counter's row is locked
# right after the assignment's and before its HIT's (docs/design.md §4, "HITs done").
POSTGRESQL = [
    f"""
    CREATE FUNCTION hits_batch_work_done_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' AND OLD.status IN {COUNTED} THEN {TAKE_ONE};
        END IF;
        IF TG_OP <> 'DELETE' AND NEW.status IN {COUNTED} THEN {ADD_ONE};
        END IF;
        RETURN NULL;
    END
    $$
    """,
    f"""
    CREATE TRIGGER hits_batch_work_done_insert AFTER INSERT ON hits_assignment FOR EACH ROW WHEN (NEW.status IN {COUNTED})
    EXECUTE FUNCTION hits_batch_work_done_count()
    """,
    f"""
    CREATE TRIGGER hits_batch_work_done_update AFTER UPDATE OF status, worker_id, hit_id
    ON hits_assignment FOR EACH ROW WHEN ({MOVED.replace("IS NOT", "IS DISTINCT FROM")})
    EXECUTE FUNCTION hits_batch_work_done_count()
    """,
    f"""
    CREATE TRIGGER hits_batch_work_done_delete AFTER DELETE ON hits_assignment FOR EACH ROW WHEN (OLD.status IN {COUNTED})
    EXECUTE FUNCTION hits_batch_work_done_count()
    """,
]
POSTGRESQL_DROP = [
    "DROP TRIGGER hits_batch_work_done_insert ON hits_assignment",
    "DROP TRIGGER hits_batch_work_done_update ON hits_assignment",
    "DROP TRIGGER hits_batch_work_done_delete ON hits_assignment",
    "DROP FUNCTION hits_batch_work_done_count()",
]

# SQLite (a single writer at a time): the same changes, in SQLite's own trigger bodies.
SQLITE = [
    f"""
    CREATE TRIGGER hits_batch_work_done_insert AFTER INSERT ON hits_assignment
    WHEN NEW.status IN {COUNTED} BEGIN {ADD_ONE}; END
    """,
    f"""
    CREATE TRIGGER hits_batch_work_done_update AFTER UPDATE OF status, worker_id, hit_id ON hits_assignment
    WHEN {MOVED} BEGIN
    {TAKE_ONE} AND OLD.status IN {COUNTED};
    {ADD_ONE.replace("WHERE h.id = NEW.hit_id", f"WHERE h.id = NEW.hit_id AND NEW.status IN {COUNTED}")};
    END
    """,
    f"""
    CREATE TRIGGER hits_batch_work_done_delete AFTER DELETE ON hits_assignment
    WHEN OLD.status IN {COUNTED} BEGIN {TAKE_ONE}; END
    """,
]
SQLITE_DROP = [
    "DROP TRIGGER hits_batch_work_done_insert",
    "DROP TRIGGER hits_batch_work_done_update",
    "DROP TRIGGER hits_batch_work_done_delete",
]

FILL = f"""
    INSERT INTO hits_batchworkdone (worker_id, batch_id, done)
    SELECT a.worker_id, h.batch_id, COUNT(*) FROM hits_assignment a JOIN hits_hit h ON h.id = a.hit_id
    WHERE a.status IN {COUNTED} GROUP BY a.worker_id, h.batch_id
"""


def _run(schema_editor, statements):
    for statement in statements:
        schema_editor.execute(statement, params=None)


def keep_count(apps, schema_editor):
    postgresql = schema_editor.connection.vendor == "postgresql"
    _run(schema_editor, [*(POSTGRESQL if postgresql else SQLITE), FILL])


def stop_counting(apps, schema_editor):
    postgresql = schema_editor.connection.vendor == "postgresql"
    _run(schema_editor, POSTGRESQL_DROP if postgresql else SQLITE_DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0032_stored_lemmas"),
        ("hits", "0023_budget_reservation"),
    ]

    operations = [
        migrations.CreateModel(
            name="BatchWorkDone",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("done", models.IntegerField(default=0)),
                (
                    "batch",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+", to="hits.batch"),
                ),
                (
                    "worker",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="annotation.worker",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "batch work done",
                "constraints": [models.UniqueConstraint(fields=("worker", "batch"), name="batch_work_done_once")],
            },
        ),
        migrations.RunPython(keep_count, stop_counting),
    ]
