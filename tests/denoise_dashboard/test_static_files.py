"""Static files as `make run` serves them after `collectstatic`: content-hashed
names, brotli or gzip as the browser asks, a year's immutable caching, one
Plotly bundle for every chart page, and a server log without Django's
sync-iterator warning."""

import json
import os
import re
import subprocess
import sys

import brotli  # noqa: F401  (httpx decodes br only with it)
import httpx
import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from tests.support.serving import REPO, Serve, database_url, signed_in

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "pw-stella-1234"
HASHED = r"/static/{name}\.[0-9a-f]{{12}}\.{ext}"


@pytest.fixture
def collected(tmp_path):
    root = tmp_path / "static-root"
    # Our own files only: compressing the admin's and the API browser's at brotli's best takes a minute.
    ignored = [arg for name in ("admin", "rest_framework", "drf_spectacular_sidecar") for arg in ("-i", name)]
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0", *ignored], cwd=REPO,
                   check=True, env={**os.environ, "STATIC_ROOT": str(root)})
    return root


@pytest.fixture
def server(tmp_path, collected, make_project):
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    project, _ = make_project("static")
    project.members.add(get_user_model().objects.create_user("stella", password=PASSWORD))
    with Serve(tmp_path, DATABASE_URL=database_url(connection.settings_dict), STATIC_ROOT=str(collected)) as served:
        yield served


def test_pages_name_hashed_files_served_compressed_and_cached_for_a_year(server, collected):
    login = httpx.get(f"{server.url}/login/").text
    stylesheet = re.search(HASHED.format(name=r"css/app", ext="css"), login).group(0)
    source = (REPO / "static" / "css" / "app.css").read_bytes()

    for encoding in ("br", "gzip"):
        answer = httpx.get(server.url + stylesheet, headers={"Accept-Encoding": encoding})
        assert answer.status_code == 200
        assert answer.headers["Content-Encoding"] == encoding
        assert "max-age=31536000" in answer.headers["Cache-Control"]
        assert "immutable" in answer.headers["Cache-Control"]
        assert answer.content == source  # httpx decodes either (brotli installed)
    plain = httpx.get(server.url + stylesheet, headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers and plain.content == source

    # The one Plotly bundle, hashed in the manifest, is what a chart page loads (a fifth of the full one, compressed).
    manifest = json.loads((collected / "staticfiles.json").read_text())["paths"]
    bundle = "/static/" + manifest["vendor/plotly/plotly-denoise.min.js"]
    answer = httpx.get(server.url + bundle, headers={"Accept-Encoding": "br"})
    assert answer.headers["Content-Encoding"] == "br" and "immutable" in answer.headers["Cache-Control"]
    assert int(answer.headers["Content-Length"]) < 600_000
    assert "plotly.js" in answer.text[:400]
    client = signed_in(server.url, "stella", PASSWORD)
    for path in ("/metrics/static/", "/p/static/health/", "/p/static/why/"):
        page = client.get(server.url + path, timeout=60).text
        scripts = re.findall(r'<script src="(/static/vendor/[^"]+)"', page)
        assert scripts in ([], [bundle]), (path, scripts)
    client.close()

    assert "StreamingHttpResponse must consume synchronous iterators" not in server.log_text()

