from django.urls import path

app_name = "evals"

urlpatterns = []
