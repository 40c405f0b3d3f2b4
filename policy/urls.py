from django.urls import path

from policy import views

app_name = "policy"

urlpatterns = [
    path("<slug:slug>/", views.policy_page, name="policy"),
]
