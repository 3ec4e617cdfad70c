"""Each label names its candidate's benchmark (docs/design.md §7, "Labels by benchmark").

The column is added empty, filled from each label's candidate's target in one statement, then made
required; the data browser's indexes lead with it. The fill is one statement joining labels to their
candidates and targets; it rewrites every label once, so on a large installation it takes minutes
(docs/design.md §7 gives the figure measured).
"""

import django.db.models.deletion
from django.db import migrations, models

FILL = """
UPDATE annotation_label SET benchmark_id = target.benchmark_id
FROM annotation_candidate candidate JOIN annotation_target target ON target.id = candidate.target_id
WHERE candidate.id = annotation_label.candidate_id
"""


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0030_activity_kinds_of_saved_views'),
    ]

    operations = [
        migrations.AddField(
            model_name='label',
            name='benchmark',
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name='+',
                to='annotation.benchmark',
            ),
        ),
        migrations.RunSQL(FILL, reverse_sql=migrations.RunSQL.noop, elidable=False),
        migrations.AlterField(
            model_name='label',
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
        migrations.RemoveIndex(model_name='label', name='label_by_value'),
        migrations.AddIndex(
            model_name='label',
            index=models.Index(fields=['benchmark', 'id'], name='label_by_benchmark'),
        ),
        migrations.AddIndex(
            model_name='label',
            index=models.Index(fields=['benchmark', 'value', 'id'], name='label_by_benchmark_value'),
        ),
    ]
