import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")

app = Celery("crowdlex")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
