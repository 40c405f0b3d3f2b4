from django.urls import path

from provenance import audit_views, settings_views
from provenance.explorer import views
from provenance.health import views as health_views
from provenance.root_causes import views as root_cause_views

app_name = "provenance"

urlpatterns = [
    path("", views.home, name="home"),
    path("p/<slug:slug>/traces/", views.trace_list, name="trace-list"),
    path("p/<slug:slug>/bad-answers/", views.bad_answers, name="bad-answers"),
    path("p/<slug:slug>/why/", root_cause_views.why_answers_go_wrong, name="root-causes"),
    path("p/<slug:slug>/traces/<path:trace_id>/", views.trace_detail, name="trace-detail"),
    path("p/<slug:slug>/health/", health_views.health_page, name="health"),
    path("p/<slug:slug>/settings/", settings_views.settings_page, name="settings"),
    path("p/<slug:slug>/settings/audit/", audit_views.audit_page, name="audit-log"),
]
