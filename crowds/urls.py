"""Pages of the crowds: each backend's public pages and the researcher's crowd pages."""

from django.urls import URLPattern, URLResolver, path

from crowds import views as crowd
from crowds.interface import backends

# Each crowd's public pages, where its workers arrive (its backend's ``public_urls``).
urlpatterns: list[URLPattern | URLResolver] = [pattern for backend in backends() for pattern in backend.public_urls()]

# Researcher pages for batches on a paid crowd: publish, sync, expire, review.
urlpatterns += [
    path("batches/<int:pk>/crowd/", crowd.batch_crowd, name="batch-crowd"),
    path("batches/<int:pk>/crowd/publish/", crowd.batch_crowd_publish, name="batch-crowd-publish"),
    path("batches/<int:pk>/crowd/sync/", crowd.batch_crowd_sync, name="batch-crowd-sync"),
    path("batches/<int:pk>/crowd/expire/", crowd.batch_crowd_expire, name="batch-crowd-expire"),
    path("batches/<int:pk>/crowd/policy/", crowd.batch_crowd_policy, name="batch-crowd-policy"),
    path("batches/<int:pk>/crowd/notify/", crowd.batch_crowd_notify, name="batch-crowd-notify"),
    path(
        "assignments/<int:assignment_id>/approve/",
        crowd.assignment_crowd_approve,
        name="assignment-crowd-approve",
    ),
    path("assignments/<int:assignment_id>/reject/", crowd.assignment_crowd_reject, name="assignment-crowd-reject"),
    path("assignments/<int:assignment_id>/bonus/", crowd.assignment_crowd_bonus, name="assignment-crowd-bonus"),
    path("workers/<int:worker_id>/crowd-block/", crowd.worker_crowd_block, name="worker-crowd-block"),
]

# Pausing and resuming a batch on its crowd (docs/batches.md, "Operations").
urlpatterns += [
    path("batches/<int:pk>/pause/", crowd.batch_pause, name="batch-pause"),
    path("batches/<int:pk>/resume/", crowd.batch_resume, name="batch-resume"),
]
