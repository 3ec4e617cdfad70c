# HIT items and answers speak the scheme's words: an item's kind is the scheme's, `control` says
# which items are checks (the SWORDS controls of existing HITs are marked), an answer may carry
# structured data, and a batch's step is one of its scheme's.

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0005_scheme_settings'),
        ('hits', '0004_hititem_text_500'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='batch',
            name='batch_step_is_2_or_3',
        ),
        migrations.RemoveConstraint(
            model_name='hititem',
            name='hititem_candidate_iff_kind_candidate',
        ),
        migrations.AddField(
            model_name='answer',
            name='data',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='hititem',
            name='control',
            field=models.BooleanField(default=False),
        ),
        migrations.RunSQL(
            "UPDATE hits_hititem SET control = TRUE WHERE kind IN ('control_target', 'control_distractor')",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name='answer',
            name='value',
            field=models.CharField(max_length=32),
        ),
        migrations.AlterField(
            model_name='batch',
            name='step',
            field=models.PositiveSmallIntegerField(),
        ),
        migrations.AlterField(
            model_name='hititem',
            name='kind',
            field=models.CharField(max_length=20),
        ),
        migrations.AddConstraint(
            model_name='batch',
            constraint=models.CheckConstraint(condition=models.Q(('step__gte', 1)), name='batch_step_positive'),
        ),
        migrations.AddConstraint(
            model_name='hititem',
            constraint=models.CheckConstraint(condition=models.Q(('control', False), ('candidate__isnull', True), _connector='OR'), name='hititem_control_has_no_candidate'),
        ),
    ]
