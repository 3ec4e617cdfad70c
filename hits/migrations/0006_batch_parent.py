# A batch may continue the targets of a batch of an earlier step (SWORDS: one step-3 batch per step-2 batch).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('hits', '0005_scheme_blind_items'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='batch',
            name='parent',
            field=models.ForeignKey(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='children', to='hits.batch'),
        ),
        migrations.AddConstraint(
            model_name='batch',
            constraint=models.UniqueConstraint(condition=models.Q(('parent__isnull', False), models.Q(('status', 'closed'), _negated=True)), fields=('parent',), name='batch_one_open_step3_per_parent'),
        ),
    ]
