"""The platform's name resolution inside an execution environment.

Under a model with addresses, every lookup of the S3 endpoint's name answers with the
environment's list of addresses, as Lambda's resolver answers for S3's regional name
(docs/network-model.md, *Endpoint addresses*). By hand: the standard library has no per-name
resolver table short of /etc/hosts, which is the whole machine's, and each environment must
resolve the name differently from its neighbours.
"""

import socket


def install(spec: dict | None) -> None:
    """Answer `spec["name"]` with `spec["addresses"]` in this process (no spec: nothing)."""
    if not spec:
        return
    name, addresses = spec["name"], list(spec["addresses"])
    original = socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host != name:
            return original(host, port, family, type, proto, flags)
        return [entry for address in addresses
                for entry in original(address, port, family, type, proto, flags | socket.AI_NUMERICHOST)]  # fmt: skip

    socket.getaddrinfo = getaddrinfo
