from django.urls import path

from alerts import api_views

urlpatterns = [
    path("alert-rules", api_views.RuleListView.as_view(), name="api-alert-rules"),
    path("alert-rules/<int:rule_id>", api_views.RuleDetailView.as_view(), name="api-alert-rule"),
    path("alerts", api_views.AlertListView.as_view(), name="api-alerts"),
    path("destinations", api_views.SharedDestinationListView.as_view(), name="api-destinations"),
    path("destinations/<int:destination_id>", api_views.SharedDestinationDetailView.as_view(), name="api-destination"),
    path("silences", api_views.SilenceListView.as_view(), name="api-silences"),
    path("silences/<int:silence_id>", api_views.SilenceDetailView.as_view(), name="api-silence"),
]
