# Annotators flag a HIT or one of its items (reason from a fixed list, optional note) without returning it.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('hits', '0006_batch_parent'),
    ]

    operations = [
        migrations.CreateModel(
            name='HITFlag',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('reason', models.CharField(choices=[('broken', 'The text is broken or garbled'), ('offensive', 'Offensive content'), ('unknown_target', 'I do not know the highlighted word'), ('other', 'Something else (please say what)')], max_length=16)),
                ('note', models.TextField(blank=True, max_length=1000)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('assignment', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='hits.assignment')),
                ('item', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='flags', to='hits.hititem')),
            ],
            options={
                'verbose_name': 'HIT flag',
                'ordering': ['-created_at', '-id'],
                'constraints': [models.UniqueConstraint(condition=models.Q(('item__isnull', False)), fields=('assignment', 'item'), name='hitflag_once_per_item'), models.UniqueConstraint(condition=models.Q(('item__isnull', True)), fields=('assignment',), name='hitflag_once_per_whole_hit')],
            },
        ),
    ]
