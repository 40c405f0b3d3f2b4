from django.urls import path

from metrics import views

app_name = "metrics"

urlpatterns = [
    path("<slug:slug>/", views.overview, name="overview"),
]
