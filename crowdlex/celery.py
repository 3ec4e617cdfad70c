import os

from celery import Celery
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")

app = Celery("crowdlex")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Idempotent tasks retry when the database went away under them: a restarted database fails the
# queries in flight, and the retry, seconds later, finds it back.
DATABASE_RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 2, "max_retries": 5}
