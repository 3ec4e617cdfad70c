"""Pages of the crowds: each backend's public pages and the researcher's crowd pages."""

from django.urls import path, re_path

from crowds import views as crowd
from crowds.mturk import views as mturk
from crowds.prolific import views as prolific

urlpatterns = [
    # Public crowd pages, by random token (hits.models.new_public_token); the database-id forms only
    # send a published, open HIT or study on to its token URL (docs/mturk.md, docs/prolific.md).
    re_path(r"^mturk/hit/(?P<token>[A-Za-z0-9_-]{20,32})/$", mturk.mturk_hit, name="mturk-hit"),
    path("mturk/hit/<int:hit_id>/", mturk.mturk_hit_by_id, name="mturk-hit-by-id"),
    re_path(r"^prolific/study/(?P<token>[A-Za-z0-9_-]{20,32})/$", prolific.prolific_study, name="prolific-study"),
    path("prolific/study/<int:batch_id>/", prolific.prolific_study_by_id, name="prolific-study-by-id"),
]

# Researcher pages for batches on a paid crowd (MTurk): publish, sync, expire, review.
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
