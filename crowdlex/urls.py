from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from crowdlex import views
from crowdlex.permissions import IsResearcher
from crowdlex.throttling import SignInThrottle, throttled

urlpatterns = [
    # First: every request of the annotator's cycle is one of these, and Django tries the patterns in
    # order. No path matches two of the API's routes, so their order is free
    # (tests/test_api_cycle_path.py; docs/benchmarks.md, "The API's cycle in one process").
    path("api/", include("hits.api")),
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/login/", throttled(SignInThrottle)(auth_views.LoginView.as_view()), name="login"),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path("accounts/api-token/", views.api_token, name="api-token"),
    # Before the admin's own URLs, so its sign-in is throttled like the others.
    path("admin/login/", throttled(SignInThrottle)(admin.site.login)),
    path("admin/", admin.site.urls),
    # The schema describes the controls and thresholds of the review: for researchers only.
    path("api/schema/", SpectacularAPIView.as_view(permission_classes=[IsResearcher]), name="api-schema"),
    # The schema as a page researchers can browse and try (Swagger UI, served from static files).
    path("docs/api/", views.api_docs, name="api-docs"),
    path("api/auth-token/", views.ObtainTokenView.as_view(), name="api-auth-token"),
    path("api/", include("annotation.api")),
    path("api/", include("crowds.api_urls")),
    path("api/", include("review.api")),
    path("api/", include("analysis.api")),
    path("", include("annotation.urls")),
    path("", include("hits.urls")),
    path("", include("crowds.urls")),
    path("", include("review.urls")),
    path("", include("analysis.urls")),
]

# Django's own errors: JSON under /api/ (crowdlex.api_errors), the site's pages elsewhere.
handler400 = "crowdlex.api_errors.bad_request"
handler403 = "crowdlex.api_errors.permission_denied"
handler404 = "crowdlex.api_errors.page_not_found"
handler500 = "crowdlex.api_errors.server_error"
