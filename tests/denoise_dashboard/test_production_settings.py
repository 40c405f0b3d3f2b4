"""Production settings: `check --deploy` clean, the development secret key and
malformed variables refused at start-up with one clear line, system checks for
misconfiguration, HSTS and Secure cookies on HTTPS requests (through a trusted
proxy too), a local key kept in var/ for the embedded default."""

import os
import stat
import subprocess
import sys

import httpx
import pytest
from django.db import connection
from django.test import Client

from tests.support.serving import REPO, Serve, database_url

STRONG_KEY = "k3y-" + "x7Qp9" * 12
PRODUCTION = {"DEBUG": "0", "SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "dash.example.com",
              "HTTPS_ONLY": "1", "TRUST_PROXY_HEADERS": "1"}
OURS = {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "HTTPS_ONLY", "TRUST_PROXY_HEADERS", "REDIS_URL", "DATABASE_URL",
        "API_RATE_LIMIT", "DJANGO_ALLOW_ASYNC_UNSAFE"}


def manage(tmp_path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {key: value for key, value in os.environ.items() if key not in OURS}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, capture_output=True, text=True,
                          env={**base, "VAR_DIR": str(tmp_path / "var"), **env}, timeout=120)


def test_check_deploy_is_clean_in_production_settings(tmp_path):
    result = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_development_secret_key_is_refused_with_debug_off(tmp_path):
    result = manage(tmp_path, "serve", "127.0.0.1:0", **{**PRODUCTION, "SECRET_KEY": "dev-only-insecure-key-change-me"})
    assert result.returncode != 0
    assert result.stderr.startswith("error: SECRET_KEY is the development key while DEBUG is off")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("DEBUG", "maybe", "DEBUG='maybe' is not a boolean"),
    ("HTTPS_ONLY", "yes please", "HTTPS_ONLY='yes please' is not a boolean"),
    ("API_RATE_LIMIT", "lots", "API_RATE_LIMIT='lots' is not a whole number"),
    ("API_RATE_LIMIT", "-1", "API_RATE_LIMIT='-1' must be 0 or more"),
    ("LOGIN_FAILURE_LIMIT", "1.5", "LOGIN_FAILURE_LIMIT='1.5' is not a whole number"),
])
def test_a_malformed_value_stops_the_start_naming_the_variable(tmp_path, variable, value, message):
    result = manage(tmp_path, "serve", "127.0.0.1:0", **{**PRODUCTION, variable: value})
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}"), result.stderr


def test_debug_on_a_public_host_is_warned_about(tmp_path):
    result = manage(tmp_path, "check", DEBUG="1", ALLOWED_HOSTS="dash.example.com")
    assert "denoise.W001" in result.stderr and "DEBUG is on while ALLOWED_HOSTS serves dash.example.com" in result.stderr


def test_redis_configured_but_unreachable_stops_the_start(tmp_path):
    result = manage(tmp_path, "check", **{**PRODUCTION, "REDIS_URL": "redis://127.0.0.1:1/0"})
    assert result.returncode != 0
    assert "denoise.E002" in result.stderr and "Redis does not answer" in result.stderr


def test_the_embedded_default_keeps_a_generated_key_in_var(tmp_path):
    show = ("shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)")
    first, second = (manage(tmp_path, *show).stdout.strip().splitlines()[-1] for _ in range(2))
    key_file = tmp_path / "var" / "secret_key"
    assert first == second == key_file.read_text().strip()
    assert len(first) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "denoise.W002" in manage(tmp_path, "check", "--deploy").stderr  # fine for one box, not for several


@pytest.mark.django_db
def test_hsts_and_secure_cookies_only_on_https_requests():
    client = Client()
    plain = client.get("/login/")
    assert "Strict-Transport-Security" not in plain.headers and not plain.cookies["csrftoken"]["secure"]
    # Without TRUST_PROXY_HEADERS a client cannot claim HTTPS with a header.
    claimed = client.get("/login/", headers={"X-Forwarded-Proto": "https"})
    assert "Strict-Transport-Security" not in claimed.headers

    https = client.get("/login/", secure=True)
    assert https.headers["Strict-Transport-Security"].startswith("max-age=31536000")
    assert https.cookies["csrftoken"]["secure"]


@pytest.mark.django_db(transaction=True)
def test_behind_a_tls_proxy_https_is_recognised_from_x_forwarded_proto(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    env = {"DATABASE_URL": database_url(connection.settings_dict), "TRUST_PROXY_HEADERS": "1"}
    with Serve(tmp_path, **env) as server:
        proxied = httpx.get(f"{server.url}/login/", headers={"X-Forwarded-Proto": "https"})
        assert proxied.headers["Strict-Transport-Security"].startswith("max-age=31536000")
        assert "secure" in proxied.headers["set-cookie"].lower()

        direct = httpx.get(f"{server.url}/login/")
        assert "Strict-Transport-Security" not in direct.headers
        assert "secure" not in direct.headers["set-cookie"].lower()
