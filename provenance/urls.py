from django.urls import path

from provenance import views

app_name = "provenance"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/traces/", views.trace_list, name="trace-list"),
    path("p/<slug:slug>/traces/<path:trace_id>/", views.trace_detail, name="trace-detail"),
]
