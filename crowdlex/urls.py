from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from crowdlex import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/auth-token/", views.ObtainTokenView.as_view(), name="api-auth-token"),
    path("api/", include("annotation.api")),
    path("api/", include("hits.api")),
    path("api/", include("review.api")),
    path("api/", include("analysis.api")),
    path("", include("annotation.urls")),
    path("", include("hits.urls")),
    path("", include("review.urls")),
    path("", include("analysis.urls")),
]
