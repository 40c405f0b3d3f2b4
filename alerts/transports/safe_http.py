"""One HTTP POST to a URL an agent's operator typed in, without SSRF.

The destination's name is resolved once, every address it resolves to is
checked, and the connection is made to a checked address (with the name in the
Host header and in TLS SNI), so there is no window between the check and the
connect for DNS rebinding. Redirects are never followed. The whole exchange is
bounded by one deadline, not a per-read timeout a slow server could stretch.
"""

import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

EXCERPT_BYTES = 1024
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Special-purpose ranges (IANA registries) that older Pythons' is_global misses.
NOT_GLOBAL = [ipaddress.ip_network(n) for n in ("192.0.0.0/24", "192.88.99.0/24", "3fff::/20", "5f00::/16")]


class UnsafeDestination(Exception):
    """The URL may not be contacted (scheme, host or address refused)."""


class RequestFailed(Exception):
    """The request was made but did not complete (connect error, timeout, ...)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as written, without IPv6 brackets
    port: int
    path: str  # path and query


@dataclass(frozen=True)
class HttpResponse:
    status: int
    excerpt: str
    location: str = ""


def parse_target(url: str) -> Target:
    if not isinstance(url, str) or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise UnsafeDestination("the URL contains whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UnsafeDestination(f"the URL is malformed: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UnsafeDestination("only http and https URLs are allowed")
    host = parts.hostname or ""
    if not host:
        raise UnsafeDestination("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise UnsafeDestination("credentials in the URL are not allowed")
    if not host.isascii():
        # The resolver would apply IDNA (with NFKC) itself: check what it would look up.
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise UnsafeDestination("the host is malformed") from None
    if "%" in host or "\\" in host:
        raise UnsafeDestination("the host is malformed")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(scheme, host, port or (443 if scheme == "https" else 80), path)


def literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host names literally, in any form a resolver accepts:
    dotted, decimal (2130706433), octal (0177.0.0.1), hex (0x7f.1), short (127.1)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host.removesuffix(".")))
    except (OSError, UnicodeError, ValueError):
        return None


def refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an address is not a public unicast one, or None if it is."""
    if isinstance(address, ipaddress.IPv6Address):
        for embedded in (address.ipv4_mapped, address.sixtofour,
                         address.teredo[1] if address.teredo else None,
                         ipaddress.IPv4Address(int(address) & 0xFFFFFFFF) if address in NAT64 else None):
            if embedded is not None and (reason := refusal(embedded)):
                return f"{reason} (embedded in {address})"
    for flag, reason in (
        ("is_loopback", "a loopback"),
        ("is_unspecified", "an unspecified"),
        ("is_link_local", "a link-local"),
        ("is_multicast", "a multicast"),
        ("is_private", "a private"),
        ("is_reserved", "a reserved"),
    ):
        if getattr(address, flag):
            return f"{address} is {reason} address"
    if not address.is_global or any(address in network for network in NOT_GLOBAL):
        return f"{address} is not a public address"
    return None


def check_address(address, allow_private: bool) -> None:
    if not allow_private and (reason := refusal(address)):
        raise UnsafeDestination(f"refused: {reason}")


def _is_localhost(host: str) -> bool:
    host = host.rstrip(".").lower()
    return host in ("localhost", "localhost.localdomain") or host.endswith(".localhost")


def check_url(url: str, allow_private: bool) -> Target:
    """The checks that need no DNS: scheme, host, literal addresses, localhost."""
    target = parse_target(url)
    literal = literal_address(target.host)
    if literal is not None:
        check_address(literal, allow_private)
    elif _is_localhost(target.host):
        check_address(ipaddress.ip_address("127.0.0.1"), allow_private)
    return target


def check_name(target: Target, getaddrinfo=None) -> None:
    """When a destination is saved: a name whose addresses would be refused at
    delivery is refused now, saying it resolved so. Delivery resolves it again
    (the answer may change: DNS rebinding); a name that does not resolve yet is
    left to delivery, which retries."""
    if literal_address(target.host) is not None or _is_localhost(target.host):
        return  # check_url judged it without DNS
    try:
        resolve(target, False, getaddrinfo or socket.getaddrinfo)
    except RequestFailed:
        return
    except UnsafeDestination as error:
        reason = str(error).removeprefix("refused: ")
        raise UnsafeDestination(f"refused: {target.host} resolves to {reason} (names are resolved when the "
                                f"destination is saved and again at every delivery)") from None


def resolve(target: Target, allow_private: bool, getaddrinfo=socket.getaddrinfo) -> list[tuple]:
    """Checked (family, sockaddr) pairs for the target; every answer must pass."""
    literal = literal_address(target.host)
    if literal is not None:
        check_address(literal, allow_private)
        family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
        return [(family, (str(literal), target.port))]
    try:
        answers = getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        raise RequestFailed(f"could not resolve {target.host}: {error}") from None
    checked = []
    for family, _, _, _, sockaddr in answers:
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        check_address(address, allow_private)
        checked.append((family, (str(address), target.port)))
    if not checked:
        raise RequestFailed(f"{target.host} has no address")
    return checked


class _Deadline:
    """Shuts the socket down when the time is up, whatever read is blocking."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = False
        self._timer: threading.Timer | None = None

    def watch(self, sock: socket.socket):
        def expire():
            self.expired = True
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        self._timer = threading.Timer(self.seconds, expire)
        self._timer.daemon = True
        self._timer.start()

    def cancel(self):
        if self._timer:
            self._timer.cancel()


def _connection(target: Target, addresses: list[tuple], timeout: float, deadline: _Deadline):
    def connect_checked(_address, connect_timeout, source_address=None):
        last_error: OSError | None = None
        for family, sockaddr in addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(connect_timeout)
            try:
                sock.connect(sockaddr)
            except OSError as error:
                sock.close()
                last_error = error
                continue
            deadline.watch(sock)
            return sock
        raise last_error or OSError("no address to connect to")

    if target.scheme == "https":
        connection = http.client.HTTPSConnection(target.host, target.port, timeout=timeout,
                                                 context=ssl.create_default_context())
    else:
        connection = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
    # http.client opens its socket through this hook; pinning it to the checked
    # addresses keeps Host and SNI on the name while the bytes go to the IP.
    connection._create_connection = connect_checked
    return connection


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_private: bool,
         getaddrinfo=socket.getaddrinfo) -> HttpResponse:
    """POSTs `body`; returns the status and the start of the response body.
    Raises UnsafeDestination before any connection, RequestFailed after."""
    target = check_url(url, allow_private)
    addresses = resolve(target, allow_private, getaddrinfo)
    deadline = _Deadline(timeout)
    connection = _connection(target, addresses, timeout, deadline)
    started = time.monotonic()
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        excerpt = response.read(EXCERPT_BYTES)
        return HttpResponse(response.status, excerpt.decode("utf-8", "replace"), response.getheader("location") or "")
    except (OSError, http.client.HTTPException) as error:
        if deadline.expired or isinstance(error, TimeoutError) or time.monotonic() - started >= timeout:
            raise RequestFailed(f"timed out after {timeout:g} s") from None
        raise RequestFailed(f"{type(error).__name__}: {error}") from None
    finally:
        deadline.cancel()
        connection.close()
