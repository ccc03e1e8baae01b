"""The platform's name resolution inside an execution environment.

With addresses in the network model (fanout.local.network.proxy), an environment's S3 endpoint is a
host name no DNS serves, which the platform resolves, as Lambda's resolver answers for S3's
regional name: every lookup of that exact name answers with the environment's list of addresses
(the host turns the list by one for each new environment), so its connections go to the first
one, and a function that resolves the name itself (PIN=auto) sees them all. Other names resolve
as before. Installed by the sandbox before the handler is imported, like the fault layer; the
function's zip knows nothing of it.

By hand: the standard library has no per-name resolver table short of /etc/hosts, which is the
whole machine's, and the environment must resolve the name differently from its neighbours.
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
