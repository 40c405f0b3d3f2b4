"""The admin names the alert models in proper English."""

from django.contrib.auth import get_user_model
from django.test import Client


def test_the_admin_lists_deliveries(db):
    admin = get_user_model().objects.create_superuser("root", password="pw-root-12345")
    client = Client()
    client.force_login(admin)
    page = client.get("/admin/").content.decode()
    assert "Deliveries" in page and "Deliverys" not in page
    assert client.get("/admin/alerts/delivery/").status_code == 200
