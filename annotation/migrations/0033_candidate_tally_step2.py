"""Each candidate's tally keeps its valid labels of step 2 and their accepts too (docs/design.md §7,
"Tallies"), so the pipeline's progress and HIT generation read them from a column instead of
grouping every label of the benchmark by step.

The columns are added as zeros, then counted from the labels already stored in one statement (valid
labels: imported, or of an assignment spam filtering kept); the check that they fit within the tally
comes last.
"""

from django.db import migrations, models

FILL = """
UPDATE annotation_candidatetally SET step2_labels = counted.labels, step2_accepts = counted.accepts
FROM (
    SELECT l.candidate_id, COUNT(*) AS labels, COUNT(*) FILTER (WHERE l.value = 'accept') AS accepts
    FROM annotation_label l LEFT JOIN hits_assignment a ON a.id = l.assignment_id
    WHERE l.step = 2 AND (l.assignment_id IS NULL OR NOT a.filtered)
    GROUP BY l.candidate_id
) counted
WHERE counted.candidate_id = annotation_candidatetally.candidate_id
"""


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0032_stored_lemmas'),
        ('hits', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='candidatetally',
            name='step2_accepts',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='candidatetally',
            name='step2_labels',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.AddConstraint(
            model_name='candidatetally',
            constraint=models.CheckConstraint(
                condition=models.Q(('step2_accepts__lte', models.F('step2_labels')), ('step2_labels__lte', models.F('labels'))),
                name='candidate_tally_step2_within',
            ),
        ),
    ]
