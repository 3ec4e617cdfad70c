from django.urls import path

from hits import views, views_mturk

urlpatterns = [
    path("work/", views.work_home, name="work-home"),
    path("mturk/hit/<int:hit_id>/", views_mturk.mturk_hit, name="mturk-hit"),
]
