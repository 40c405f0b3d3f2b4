from django.urls import path

from provenance import settings_views, views
from provenance.health import views as health_views
from provenance.root_causes import views as root_cause_views

app_name = "provenance"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/traces/", views.trace_list, name="trace-list"),
    path("p/<slug:slug>/bad-answers/", views.bad_answers, name="bad-answers"),
    path("p/<slug:slug>/why/", root_cause_views.why_answers_go_wrong, name="root-causes"),
    # The trace page's data; the node is named by `?id=` since product ids may hold any character.
    path("p/<slug:slug>/traces/<path:trace_id>/graph.json", views.trace_graph, name="trace-graph"),
    path("p/<slug:slug>/traces/<path:trace_id>/node.json", views.node_detail, name="node-detail"),
    path("p/<slug:slug>/traces/<path:trace_id>/root-cause.json", views.node_root_cause, name="node-root-cause"),
    path("p/<slug:slug>/traces/<path:trace_id>/impact.json", views.node_impact, name="node-impact"),
    path("p/<slug:slug>/traces/<path:trace_id>/", views.trace_detail, name="trace-detail"),
    path("p/<slug:slug>/health/", health_views.health_page, name="health"),
    path("p/<slug:slug>/settings/", settings_views.settings_page, name="settings"),
]
