"""Writes on benchmarks and workers. One function per domain operation (STYLE: Where logic lives)."""

from django.contrib.auth.models import User

from annotation.models import Worker, WorkerKind


def worker_for_user(*, user: User) -> Worker:
    """The local worker row of an account, created on first use."""
    worker, _ = Worker.objects.get_or_create(
        user=user, defaults={"kind": WorkerKind.LOCAL, "external_id": user.get_username()}
    )
    return worker
