"""alerts/transports/safe_http.py: destinations on non-public addresses are
refused before any connection, in every spelling; DNS answers are checked and
the connection goes to the checked address. DNS is the outside world here, so
it is replaced by a table."""

import socket

import pytest

from alerts.transports import safe_http
from tests.support.receiver import running

FAKE_DNS = {
    "internal.example": ["10.0.0.5"],
    "metadata.example": ["169.254.169.254"],
    "loopback.example": ["127.0.0.1"],
    "v6-loopback.example": ["::1"],
    "v4-mapped.example": ["::ffff:127.0.0.1"],
    "ula.example": ["fd12:3456::1"],
    "cgnat.example": ["100.64.1.1"],
    "public-and-private.example": ["93.184.216.34", "192.168.1.20"],
    "127.0.0.1.nip.example": ["127.0.0.1"],
}

# {port} is a live receiver on loopback: anything not refused would reach it.
CORPUS = [
    "http://127.0.0.1:{port}/hook", "http://localhost:{port}/hook", "http://LOCALHOST:{port}/hook",
    "http://app.localhost:{port}/hook", "http://127.1:{port}/hook", "http://127.000.000.001:{port}/hook",
    "http://2130706433:{port}/hook", "http://0x7f000001:{port}/hook", "http://0x7f.0x0.0x0.0x1:{port}/hook",
    "http://0177.0.0.1:{port}/hook", "http://017700000001:{port}/hook", "http://127.0.0.1.:{port}/hook",
    "http://0:{port}/hook", "http://0.0.0.0:{port}/hook", "http://[::1]:{port}/hook", "http://[::]:{port}/hook",
    "http://[0:0:0:0:0:0:0:1]:{port}/hook", "http://[::ffff:127.0.0.1]:{port}/hook",
    "http://[::ffff:7f00:1]:{port}/hook", "http://[64:ff9b::7f00:1]:{port}/hook",
    "http://[2002:7f00:1::1]:{port}/hook", "http://①②⑦.0.0.1:{port}/hook", "http://127.0.0.1%2f:{port}/hook",
    "http://10.0.0.1/", "http://10.255.255.255/", "http://172.16.0.1/", "http://172.31.255.1/",
    "http://192.168.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:a9fe:a9fe]/",
    "http://[fe80::1]/", "http://[fc00::1]/", "http://[fd00:ec2::254]/", "http://100.64.0.1/", "http://192.0.0.8/",
    "http://192.0.2.10/", "http://198.18.0.1/", "http://198.51.100.7/", "http://203.0.113.9/",
    "http://224.0.0.1/", "http://239.255.255.250/", "http://240.0.0.1/", "http://255.255.255.255/",
    "http://[ff02::1]/", "http://[2001:db8::1]/", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "https://169.254.169.254/", "http://user:pass@93.184.216.34/", "http://127.0.0.1:80@93.184.216.34/",
    "file:///etc/passwd", "ftp://93.184.216.34/", "gopher://127.0.0.1:6379/_INFO", "dict://127.0.0.1:11211/",
    "javascript:alert(1)", "http:///hook", "http://", "http://%31%32%37.0.0.1/", "http://127.0.0.1\n.example/",
    "http://internal.example/", "http://metadata.example/", "http://loopback.example:{port}/hook",
    "http://v6-loopback.example:{port}/hook", "http://v4-mapped.example:{port}/hook", "http://ula.example/",
    "http://cgnat.example/", "http://public-and-private.example/", "http://127.0.0.1.nip.example:{port}/hook",
]


def fake_getaddrinfo(host, port, type=0, **kwargs):
    if host not in FAKE_DNS:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    answers = []
    for address in FAKE_DNS[host]:
        if ":" in address:
            answers.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
        else:
            answers.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
    return answers


@pytest.fixture
def listener():
    with running() as hook:
        yield hook


@pytest.fixture
def no_connections(monkeypatch):
    """Anything that got past the checks is recorded instead of connected: this
    test never opens a socket to any address."""
    attempted = []

    def record(target, addresses, timeout, deadline):
        attempted.append((target.host, addresses))
        raise safe_http.RequestFailed("connection attempted")

    monkeypatch.setattr(safe_http, "_connection", record)
    return attempted


def test_the_ssrf_corpus_is_refused_entirely(no_connections):
    refused, not_refused = [], []
    for template in CORPUS:
        url = template.format(port=8141)
        try:
            safe_http.post(url, b"{}", {}, timeout=1, allow_private=False, getaddrinfo=fake_getaddrinfo)
        except safe_http.UnsafeDestination:
            refused.append(url)
        except safe_http.RequestFailed:
            not_refused.append(url)
    assert not_refused == []
    assert len(refused) == len(CORPUS) == 67
    assert no_connections == []


@pytest.mark.parametrize("url", [template for template in CORPUS if "{port}" not in template and "//" in template
                                 and template.startswith("http") and "example" not in template][:12])
def test_refusal_happens_before_any_dns_lookup_for_literal_addresses(url, no_connections):
    def no_dns(*args, **kwargs):
        raise AssertionError("literal addresses are checked without the resolver")

    with pytest.raises(safe_http.UnsafeDestination):
        safe_http.post(url, b"{}", {}, timeout=1, allow_private=False, getaddrinfo=no_dns)
    assert no_connections == []


def test_every_dns_answer_must_pass():
    with pytest.raises(safe_http.UnsafeDestination, match="192.168.1.20 is a private address"):
        safe_http.resolve(safe_http.parse_target("http://public-and-private.example/"), False, fake_getaddrinfo)


def test_public_addresses_pass_the_check():
    checked = safe_http.resolve(safe_http.parse_target("https://93.184.216.34:8443/x"), False, fake_getaddrinfo)
    assert checked == [(socket.AF_INET, ("93.184.216.34", 8443))]
    FAKE_DNS["public.example"] = ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]
    try:
        assert len(safe_http.resolve(safe_http.parse_target("https://public.example/"), False, fake_getaddrinfo)) == 2
    finally:
        del FAKE_DNS["public.example"]


def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(listener):
    """Resolved once; a second (rebinding) answer is never asked for; Host keeps the name."""
    answers = [["127.0.0.1"], ["10.66.66.66"]]
    lookups = []

    def rebinding_dns(host, port, type=0, **kwargs):
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[len(lookups) - 1][0], port))]

    response = safe_http.post(f"http://hooks.rebind.test:{listener.port}/hook?x=1", b'{"a": 1}',
                              {"Content-Type": "application/json"}, timeout=2, allow_private=True,
                              getaddrinfo=rebinding_dns)
    assert response.status == 200
    assert lookups == ["hooks.rebind.test"]
    request = listener.received[0]
    assert request.headers["host"] == f"hooks.rebind.test:{listener.port}"
    assert request.path == "/hook?x=1"
    assert request.body == b'{"a": 1}'


def test_allow_private_lets_loopback_through(listener):
    response = safe_http.post(f"http://127.0.0.1:{listener.port}/hook", b"{}", {}, timeout=2, allow_private=True)
    assert response.status == 200


def test_an_unresolvable_name_is_a_retryable_failure_not_a_refusal():
    with pytest.raises(safe_http.RequestFailed, match="could not resolve"):
        safe_http.post("http://nowhere.example/", b"{}", {}, timeout=1, allow_private=False,
                       getaddrinfo=fake_getaddrinfo)
