from django.urls import URLPattern, URLResolver, path

from hits import researcher_api

urlpatterns: list[URLPattern | URLResolver] = []

# Researchers: batches, HITs and assignments.
urlpatterns += [
    path("batches/", researcher_api.BatchListCreateView.as_view(), name="api-batch-list"),
    path("batches/<int:pk>/", researcher_api.BatchDetailView.as_view(), name="api-batch-detail"),
    path("batches/<int:pk>/close/", researcher_api.BatchCloseView.as_view(), name="api-batch-close"),
    path("batches/<int:pk>/hits/", researcher_api.BatchHITListView.as_view(), name="api-batch-hits"),
    path("hits/<int:pk>/", researcher_api.HITDetailView.as_view(), name="api-hit-detail"),
    path("assignments/", researcher_api.AssignmentListView.as_view(), name="api-assignment-list"),
]
