from django.urls import path

from hits import researcher_views, views, views_mturk

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
