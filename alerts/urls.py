app_name = "alerts"

urlpatterns = []
