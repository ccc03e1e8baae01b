"""Which S3 address each request reached, and pinning a message's requests to one address.

`instrument(client)` notes each connection's peer address for the `response-received` listener;
`pinned(client, host, address)` sends every connection to `host` to `address` for a block, TLS
still by the name. By hand: no botocore hook sees a request's connection, and botocore takes
addresses from the system's resolver only. Stdlib only plus the client it is given (it runs in
the Lambda runtime). Details: docs/strategies.md, *Endpoint addresses*.
"""

import ipaddress
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlsplit

AUTO = "auto"
NONE = "none"  # no pin: where the resolver says (a value, so that a sweep's unpinned cell has a name)
AUTO_LOOKUPS = 8
UNPINNED = {"pinned_ip": None, "pin_addresses": None}  # the record fields of a message without a pin

if TYPE_CHECKING:  # botocore ships no types: an S3 client is Any to mypy, named for the reader
    from botocore.client import BaseClient

_peer = threading.local()


class PinError(ValueError):
    """A pin value that is not allowed, or a name that does not resolve; one line."""


def parse_pin(text: object) -> str:
    """`none`, `auto`, or the address in `text` in its canonical form; PinError otherwise."""
    if text in (NONE, AUTO):
        return text
    try:
        return ipaddress.ip_address(text if isinstance(text, str) and text.isascii() else "").compressed
    except ValueError:
        raise PinError(f"pin={text!r} is not allowed: expected {NONE}, {AUTO} or an IPv4/IPv6 address") from None


def steers(pin: str | None) -> TypeGuard[str]:
    """Whether `pin` chooses where connections go (auto or an address), rather than leaving it
    to the resolver (no pin, or `none`)."""
    return pin is not None and pin != NONE


def instrument(client: "BaseClient") -> bool:
    """Make `client`'s connections note their peer address for take_peer(), per request.

    Swaps the client's urllib3 pool classes for subclasses whose connections note the peer
    when a response arrives, and drops the pools already made. Idempotent. False, changing
    nothing, when the client's HTTP layer is not the one this knows (a botocore whose session
    moved these attributes): the records then show unknown addresses instead of the function
    failing to start."""
    classes = getattr(_session(client), "_pool_classes_by_scheme", None)  # shared by pool and proxy managers
    if not isinstance(classes, dict):
        return False
    for scheme, pool_class in classes.items():
        if not getattr(pool_class, "notes_peers", False):
            classes[scheme] = _noting(pool_class)
    clear_pools(client)
    return True


def take_peer() -> str | None:
    """The peer address of the last response received on this thread, once (None if none
    since the last call: no connection, or a client not instrumented)."""
    address, _peer.address = getattr(_peer, "address", None), None
    return address


def clear_pools(client: "BaseClient") -> None:
    """Close `client`'s pooled connections: the next request connects anew (and resolves).
    (Where botocore keeps them elsewhere, nothing: `request_ips` still shows where requests went.)"""
    manager = getattr(_session(client), "_manager", None)
    if manager is not None:
        manager.clear()


def endpoint_host(client: "BaseClient", bucket: str, key: str) -> str:
    """The host name `client` connects to for GetObject of `key` (virtual-hosted or path style,
    as the client's endpoint rules decide): a presigned URL is built offline by the same rules."""
    url = client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=60)
    return urlsplit(url).hostname


def resolve(pin: str, host: str, port: int, seq: int) -> tuple[str, list[str]]:
    """The address a message pinned to `pin` connects to, and the addresses found (auto)."""
    if pin != AUTO:
        return pin, [pin]
    found: set[str] = set()
    for _ in range(AUTO_LOOKUPS):
        try:
            found |= {str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
        except socket.gaierror as exc:
            raise PinError(f"pin=auto: {host} does not resolve ({exc.strerror})") from None
    ordered = sorted(found, key=lambda a: (ipaddress.ip_address(a).version, int(ipaddress.ip_address(a))))
    return ordered[seq % len(ordered)], ordered


@contextmanager
def pinned(client: "BaseClient", host: str, address: str) -> Iterator[None]:
    """Connections of this process to `host` go to `address` while in the block (see above)."""
    original = socket.getaddrinfo
    wanted = host.lower()

    def getaddrinfo(name: bytes | str | None, *args: Any, **kwargs: Any) -> list:  # getaddrinfo's own arguments
        if isinstance(name, str) and name.lower().rstrip(".") == wanted:
            name = address
        return original(name, *args, **kwargs)

    clear_pools(client)
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]  # a stand-in with the same call
    try:
        yield
    finally:
        socket.getaddrinfo = original
        clear_pools(client)


@contextmanager
def pinned_download(client: "BaseClient", bucket: str, key: str, pin: str | None, seq: int,
                    own_http: bool = False) -> Iterator[dict[str, str | None]]:
    """The block's requests for `key` go to the address `pin` selects for message `seq` (None or
    `none`: where the resolver says); yields the record's pinned_ip and pin_addresses. `own_http`:
    the strategy's client resolves and connects itself (crt), which no pin can steer."""
    if not steers(pin):
        yield dict(UNPINNED)
        return
    if own_http:
        raise PinError(f"pin={pin!r} cannot steer this strategy: its client resolves and connects itself")
    host = endpoint_host(client, bucket, key)
    address, found = resolve(pin, host, port_of(client), seq)
    with pinned(client, host, address):
        yield {"pinned_ip": address, "pin_addresses": " ".join(found)}


def port_of(client: "BaseClient") -> int:
    """The port of `client`'s endpoint (443 for https, 80 for http, unless the URL names one)."""
    url = urlsplit(client.meta.endpoint_url)
    return url.port or (443 if url.scheme == "https" else 80)


def _session(client: "BaseClient") -> Any:  # botocore's private http session, when it has one
    return getattr(getattr(client, "_endpoint", None), "http_session", None)


def _noting(pool_class: type) -> type:
    """A subclass of `pool_class` whose connections note their peer when they wait for a response."""

    class Connection(pool_class.ConnectionCls):  # type: ignore[name-defined]  # urllib3's, known when called
        def getresponse(self, *args: Any, **kwargs: Any) -> Any:  # urllib3's response, passed through
            _peer.address = _address(self.sock)  # the request is out; a closing response drops sock
            return super().getresponse(*args, **kwargs)

    return type(pool_class.__name__, (pool_class,), {"ConnectionCls": Connection, "notes_peers": True})


def _address(sock: Any) -> str | None:  # the connection's socket, None or closed once it is done
    try:
        return sock.getpeername()[0]
    except (AttributeError, OSError):  # closed already
        return None
