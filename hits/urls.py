from django.urls import path

from hits import crowd_views, researcher_views, views, views_mturk

urlpatterns = [
    path("work/", views.work_home, name="work-home"),
    path("work/next", views.work_next, name="work-next"),
    path("work/assignments/<int:assignment_id>/", views.work_assignment, name="work-assignment"),
    path("work/assignments/<int:assignment_id>/return", views.work_return, name="work-return"),
    path("mturk/hit/<int:hit_id>/", views_mturk.mturk_hit, name="mturk-hit"),
]

# Researcher pages (batches and HITs).
urlpatterns += [
    path("benchmarks/<slug:name>/batches/", researcher_views.batch_list, name="batch-list"),
    path("batches/<int:pk>/", researcher_views.batch_detail, name="batch-detail"),
    path("batches/<int:pk>/close/", researcher_views.batch_close, name="batch-close"),
    path("batches/<int:pk>/reopen/", researcher_views.batch_reopen, name="batch-reopen"),
    path("batches/<int:pk>/hits.csv", researcher_views.batch_export, name="batch-export"),
    path("hits/<int:pk>/", researcher_views.hit_detail, name="hit-detail"),
]

# Researcher pages for batches on a paid crowd (MTurk): publish, sync, expire, review.
urlpatterns += [
    path("batches/<int:pk>/crowd/", crowd_views.batch_crowd, name="batch-crowd"),
    path("batches/<int:pk>/crowd/publish/", crowd_views.batch_crowd_publish, name="batch-crowd-publish"),
    path("batches/<int:pk>/crowd/sync/", crowd_views.batch_crowd_sync, name="batch-crowd-sync"),
    path("batches/<int:pk>/crowd/expire/", crowd_views.batch_crowd_expire, name="batch-crowd-expire"),
    path("batches/<int:pk>/crowd/policy/", crowd_views.batch_crowd_policy, name="batch-crowd-policy"),
    path("batches/<int:pk>/crowd/notify/", crowd_views.batch_crowd_notify, name="batch-crowd-notify"),
    path(
        "assignments/<int:assignment_id>/approve/",
        crowd_views.assignment_crowd_approve,
        name="assignment-crowd-approve",
    ),
    path(
        "assignments/<int:assignment_id>/reject/", crowd_views.assignment_crowd_reject, name="assignment-crowd-reject"
    ),
    path("assignments/<int:assignment_id>/bonus/", crowd_views.assignment_crowd_bonus, name="assignment-crowd-bonus"),
    path("workers/<int:worker_id>/crowd-block/", crowd_views.worker_crowd_block, name="worker-crowd-block"),
]
