# A benchmark names the language of its texts (the annotator's page marks the context with it), and a
# researcher may exclude a candidate: collected no more, left out of statistics and scores.

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0005_scheme_settings'),
    ]

    operations = [
        migrations.AddField(
            model_name='benchmark',
            name='language',
            field=models.CharField(default='en', help_text='language of the texts, e.g. en, de, ar', max_length=35, validators=[django.core.validators.RegexValidator('^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$', 'a language tag such as en or pt-BR')]),
        ),
        migrations.AlterField(
            model_name='candidate',
            name='stage',
            field=models.CharField(choices=[('reduce', 'step 2: reduce'), ('score', 'step 3: score'), ('dropped', 'dropped after step 2'), ('final', 'scored'), ('excluded', 'excluded by a researcher')], default='reduce', max_length=8),
        ),
    ]
