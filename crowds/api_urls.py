"""REST API of the crowds: publish, sync, expire, review, bonuses, blocks."""

from django.urls import URLPattern, URLResolver, path

from crowds import api as crowd

urlpatterns: list[URLPattern | URLResolver] = []

# Researchers: crowd operations (publish, sync, expire, review, bonuses, blocks).
urlpatterns += [
    path("batches/<int:pk>/publish-plan/", crowd.PublishPlanView.as_view(), name="api-batch-publish-plan"),
    path("batches/<int:pk>/publish/", crowd.PublishView.as_view(), name="api-batch-publish"),
    path("batches/<int:pk>/sync/", crowd.SyncView.as_view(), name="api-batch-sync"),
    path("batches/<int:pk>/expire/", crowd.ExpireView.as_view(), name="api-batch-expire"),
    path("batches/<int:pk>/crowd-status/", crowd.CrowdStatusView.as_view(), name="api-batch-crowd-status"),
    path("batches/<int:pk>/review-policy/", crowd.PolicyView.as_view(), name="api-batch-review-policy"),
    path("batches/<int:pk>/notify/", crowd.NotifyView.as_view(), name="api-batch-notify"),
    path("assignments/<int:pk>/approve/", crowd.ApproveView.as_view(), name="api-assignment-approve"),
    path("assignments/<int:pk>/reject/", crowd.RejectView.as_view(), name="api-assignment-reject"),
    path("assignments/<int:pk>/bonus/", crowd.BonusView.as_view(), name="api-assignment-bonus"),
    path("workers/<int:pk>/crowd-block/", crowd.BlockView.as_view(), name="api-worker-crowd-block"),
]

# Researchers: pausing and resuming a batch on its crowd (docs/api.md).
urlpatterns += [
    path("batches/<int:pk>/pause/", crowd.BatchPauseApi.as_view(), name="api-batch-pause"),
    path("batches/<int:pk>/resume/", crowd.BatchResumeApi.as_view(), name="api-batch-resume"),
]
