from django.urls import path

from metrics.api import views as api_views

urlpatterns = [
    path("metrics/values", api_views.ValuesView.as_view(), name="api-metrics-values"),
    path("metrics/summary", api_views.SummaryView.as_view(), name="api-metrics-summary"),
    path("metrics/options", api_views.OptionsView.as_view(), name="api-metrics-options"),
    path("metrics/<slug:name>", api_views.DashboardView.as_view(), name="api-metrics-dashboard"),
]
