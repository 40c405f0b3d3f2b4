"""The site's URLs and error handlers, plus a page that fails: for the 500 page's tests."""

from django.urls import path

from denoise_dashboard.urls import handler400, handler403, handler404, handler500, urlpatterns  # noqa: F401


def broken_page(request):
    raise RuntimeError("a bug in a page")


urlpatterns = [path("broken/", broken_page), path("api/v1/broken", broken_page), *urlpatterns]
