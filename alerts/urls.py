from django.urls import path

from alerts import views

app_name = "alerts"

urlpatterns = [
    path("<slug:slug>/", views.rule_list, name="rule-list"),
    path("<slug:slug>/new/", views.rule_new, name="rule-new"),
    path("<slug:slug>/history/", views.history, name="history"),
    path("<slug:slug>/inbox/", views.inbox, name="inbox"),
    path("<slug:slug>/<int:rule_id>/", views.rule_detail, name="rule-detail"),
    path("<slug:slug>/<int:rule_id>/edit/", views.rule_edit, name="rule-edit"),
    path("<slug:slug>/<int:rule_id>/toggle/", views.rule_toggle, name="rule-toggle"),
    path("<slug:slug>/<int:rule_id>/mute/", views.rule_mute, name="rule-mute"),
    path("<slug:slug>/<int:rule_id>/test/", views.rule_test, name="rule-test"),
    path("<slug:slug>/<int:rule_id>/delete/", views.rule_delete, name="rule-delete"),
    path("<slug:slug>/<int:rule_id>/destinations/<int:destination_id>/enable/", views.destination_enable,
         name="destination-enable"),
    path("<slug:slug>/<int:rule_id>/destinations/<int:destination_id>/test/", views.destination_test,
         name="destination-test"),
    path("<slug:slug>/destinations/", views.destinations, name="destinations"),
    path("<slug:slug>/silences/", views.silence_list, name="silences"),
    path("<slug:slug>/silences/<int:silence_id>/end/", views.silence_end, name="silence-end"),
    path("<slug:slug>/destinations/<int:destination_id>/delete/", views.destination_delete,
         name="destination-delete"),
    path("<slug:slug>/destinations/<int:destination_id>/enable/", views.shared_destination_enable,
         name="shared-destination-enable"),
]
