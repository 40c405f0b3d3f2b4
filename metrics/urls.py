from django.urls import path

from metrics import views

app_name = "metrics"

urlpatterns = [
    path("<slug:slug>/", views.page("overview"), name="overview"),
    path("<slug:slug>/fuses/", views.page("fuses"), name="fuses"),
    path("<slug:slug>/uncertainty/", views.page("uncertainty"), name="uncertainty"),
    path("<slug:slug>/drift/", views.page("drift"), name="drift"),
    path("<slug:slug>/cost/", views.page("cost"), name="cost"),
    path("<slug:slug>/calibration/", views.page("calibration"), name="calibration"),
    path("<slug:slug>/data/<slug:name>.json", views.data, name="data"),
]
