from django.urls import path

from hits import views

urlpatterns = [
    path("work/", views.work_home, name="work-home"),
]
