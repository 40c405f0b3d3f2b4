"""A webhook URL whose host name resolves to a private address is refused when
the destination is saved, saying it resolved so (delivery resolves it again).
The resolver is the outside world here: a local stand-in answers."""

import socket

import pytest

from alerts.models import Destination

LOCAL_DNS = {"intranet.corp.test": ["10.1.2.3"], "metadata.cloud.test": ["169.254.169.254"],
             "mixed.test": ["93.184.216.34", "192.168.1.9"], "v6-loopback.test": ["::1"],
             "hooks.public.test": ["93.184.216.34"]}
CONDITION = {"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2}


@pytest.fixture(autouse=True)
def local_dns(monkeypatch, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = False
    real = socket.getaddrinfo

    def answer(host, port, *args, **kwargs):
        if host not in LOCAL_DNS:
            if host in ("localhost", "127.0.0.1", "::1"):
                return real(host, port, *args, **kwargs)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        family = {4: socket.AF_INET, 6: socket.AF_INET6}
        return [(family[6 if ":" in a else 4], socket.SOCK_STREAM, 6, "", (a, port)) for a in LOCAL_DNS[host]]

    monkeypatch.setattr(socket, "getaddrinfo", answer)


def rule_with(url: str) -> dict:
    return {"name": "r", "conditions": [CONDITION], "destinations": [{"type": "webhook", "url": url}]}


@pytest.mark.parametrize(("host", "address"), [
    ("intranet.corp.test", "10.1.2.3"), ("metadata.cloud.test", "169.254.169.254"), ("mixed.test", "192.168.1.9"),
    ("v6-loopback.test", "::1")])
def test_a_name_resolving_to_a_private_address_is_refused_at_creation(api, host, address):
    response = api.post("/api/v1/alert-rules", rule_with(f"https://{host}/hook"), format="json")
    assert response.status_code == 400, response.content
    message = response.json()["fields"]["destinations[0].url"]
    assert f"{host} resolves to {address}" in message and "saved and again at every delivery" in message
    assert not Destination.objects.exists()


def test_a_name_resolving_to_public_addresses_or_not_yet_is_accepted(api):
    assert api.post("/api/v1/alert-rules", rule_with("https://hooks.public.test/hook"), format="json").status_code == 201
    # Not resolvable yet: delivery resolves it again and retries.
    assert api.post("/api/v1/alert-rules", rule_with("https://later.test/hook"), format="json").status_code == 201


def test_allowing_private_destinations_allows_such_names(api, settings):
    settings.WEBHOOK_ALLOW_PRIVATE = True
    assert api.post("/api/v1/alert-rules", rule_with("http://intranet.corp.test/h"), format="json").status_code == 201
