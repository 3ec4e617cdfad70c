import os
from typing import Any

from celery import Celery
from celery.fixups.django import DjangoFixup, DjangoWorkerFixup
from django.db import InterfaceError, OperationalError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")


class KeptConnectionsWorkerFixup(DjangoWorkerFixup):
    """Celery's Django fixup of a worker, keeping its database connection across tasks as a web
    server keeps one across requests (docs/design.md §16, "A worker's database connection").

    Celery closes every connection before and after each task, so each task paid a new backend and
    its set-up. With ``DATABASE_WORKER_KEEPS_CONNECTION`` each task starts and ends as a request
    does instead (``close_old_connections``): a connection older than ``DATABASE_CONN_MAX_AGE``, one
    left unusable by an error, or one left in a transaction is closed; a kept one is checked on its
    first use in the next task (``conn_health_checks``), so one the database ended between tasks is
    replaced before the task's first statement."""

    def close_database(self, **kwargs: Any) -> None:
        from django.conf import settings
        from django.db import close_old_connections

        if settings.DATABASE_WORKER_KEEPS_CONNECTION:
            close_old_connections()
            return
        super().close_database(**kwargs)


class KeptConnectionsFixup(DjangoFixup):
    """Celery's Django fixup, with ``KeptConnectionsWorkerFixup`` for the worker."""

    _worker_fixup: DjangoWorkerFixup | None

    @property
    def worker_fixup(self) -> DjangoWorkerFixup:
        if self._worker_fixup is None:
            self._worker_fixup = KeptConnectionsWorkerFixup(self.app)
        return self._worker_fixup

    @worker_fixup.setter
    def worker_fixup(self, value: DjangoWorkerFixup) -> None:
        self._worker_fixup = value


def _fixup(app: Celery) -> DjangoFixup:
    return KeptConnectionsFixup(app).install()


# In place of Celery's own Django fixup (the default ``fixups``), never both: each would close or
# keep the connections on its own signals.
app = Celery("crowdlex", fixups=[_fixup])
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Idempotent tasks retry when the database went away under them: a restarted database fails the
# queries in flight, and the retry, seconds later, finds it back.
DATABASE_RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 2, "max_retries": 5}
