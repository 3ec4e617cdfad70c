"""Each candidate names its target's benchmark (docs/design.md §7, "Candidates by benchmark").

The column is added empty, filled from each candidate's target in one statement, then made required;
the data browser's index leads with it. On PostgreSQL the candidate's foreign key to its target
becomes the pair (target, benchmark) referring to the target's (id, benchmark), so that no candidate
can name another benchmark than its target's: it replaces the target's own key, so a candidate
written is checked once, as before, and moving a target to another benchmark moves its candidates.
The unique (benchmark, id) it refers to (PostgreSQL matches a key's columns to a unique index's in
any order) replaces the targets' indexes on the benchmark alone and on (benchmark, stage), which the key's check
could take.
"""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE annotation_candidate SET benchmark_id = target.benchmark_id
FROM annotation_target target WHERE target.id = annotation_candidate.target_id
"""

# Deferred to the commit as Django's own foreign keys are; the update of a target's benchmark is
# carried to its candidates at once.
PAIR_KEY = """
ALTER TABLE annotation_candidate ADD CONSTRAINT candidate_target_in_benchmark
FOREIGN KEY (target_id, benchmark_id) REFERENCES annotation_target (id, benchmark_id)
ON UPDATE CASCADE DEFERRABLE INITIALLY DEFERRED
"""


def pair_key_add(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PAIR_KEY)


def pair_key_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE annotation_candidate DROP CONSTRAINT candidate_target_in_benchmark")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0033_candidate_tally_step2'),
    ]

    operations = [
        migrations.AddField(
            model_name='candidate',
            name='benchmark',
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name='+',
                to='annotation.benchmark',
            ),
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop, elidable=False),
        migrations.AlterField(
            model_name='candidate',
            name='benchmark',
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                editable=False,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name='+',
                to='annotation.benchmark',
            ),
        ),
        migrations.AddConstraint(
            model_name='target',
            constraint=models.UniqueConstraint(fields=('benchmark', 'id'), name='target_with_benchmark'),
        ),
        # The unique (benchmark, id) serves a benchmark's targets; the indexes on the benchmark alone and
        # on (benchmark, stage) go.
        migrations.RemoveIndex(model_name='target', name='annotation__benchma_4be9e7_idx'),
        migrations.AlterField(
            model_name='target',
            name='benchmark',
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name='targets',
                to='annotation.benchmark',
            ),
        ),
        migrations.AlterField(
            model_name='candidate',
            name='target',
            field=models.ForeignKey(
                db_constraint=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name='candidates',
                to='annotation.target',
            ),
        ),
        migrations.RunPython(pair_key_add, pair_key_drop, elidable=False),
        migrations.AddIndex(
            model_name='candidate',
            index=models.Index(fields=['benchmark', 'id'], name='candidate_by_benchmark'),
        ),
    ]
