from django.urls import path

from policy import views

app_name = "policy"

urlpatterns = [
    path("<slug:slug>/", views.policy_page, name="policy"),
    path("<slug:slug>/rollback", views.rollback, name="rollback"),
    path("<slug:slug>/apply-threshold", views.apply_threshold, name="apply-threshold"),
    path("<slug:slug>/inbox/", views.inbox_page, name="inbox"),
    path("<slug:slug>/inbox/<int:escalation_id>/verdict", views.give_verdict, name="verdict"),
]
