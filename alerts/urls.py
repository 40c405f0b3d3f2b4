from django.urls import path

from alerts import views

app_name = "alerts"

urlpatterns = [
    path("<slug:slug>/", views.rule_list, name="rule-list"),
]
