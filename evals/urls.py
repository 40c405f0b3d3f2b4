
app_name = "evals"

urlpatterns = []
