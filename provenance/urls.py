from django.urls import path

from provenance import health_views, views

app_name = "provenance"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/traces/", views.trace_list, name="trace-list"),
    path("p/<slug:slug>/bad-answers/", views.bad_answers, name="bad-answers"),
    path("p/<slug:slug>/traces/<path:trace_id>/", views.trace_detail, name="trace-detail"),
    path("p/<slug:slug>/health/", health_views.health_page, name="health"),
]
