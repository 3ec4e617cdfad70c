from django.urls import path

from hits import researcher_views, views

urlpatterns = [
    path("work/", views.work_home, name="work-home"),
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
