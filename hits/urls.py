from django.urls import path

from hits import views, views_mturk

urlpatterns = [
    path("work/", views.work_home, name="work-home"),
    path("work/next", views.work_next, name="work-next"),
    path("work/assignments/<int:assignment_id>/", views.work_assignment, name="work-assignment"),
    path("work/assignments/<int:assignment_id>/return", views.work_return, name="work-return"),
    path("mturk/hit/<int:hit_id>/", views_mturk.mturk_hit, name="mturk-hit"),
]
