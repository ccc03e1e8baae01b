"""Where a response ends (fanout.local.network.exchange), fed as the emulator's bytes arrive."""

import pytest

from fanout.local.network.exchange import Exchange

BODY = bytes(range(256)) * 40


def response(status: str, headers: list[str], body: bytes = b"") -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *headers]) + "\r\n\r\n").encode() + body


def feed(exchange: Exchange, data: bytes, step: int) -> tuple[bytes, list[bool]]:
    """What the function gets when `data` arrives `step` bytes at a time, and `done` after each."""
    out, done = b"", []
    for offset in range(0, len(data), step):
        out += exchange.received(data[offset:offset + step])
        done.append(exchange.done)
    return out, done


@pytest.mark.parametrize("step", [1, 7, 100, 10_000])
def test_a_known_length_is_counted_to_its_end_and_the_close_dropped(step):
    data = response("200 OK", ["Content-Length: %d" % len(BODY), "Connection: close", "ETag: x"], BODY)
    exchange = Exchange(b"GET /b/k HTTP/1.1\r\n")
    out, done = feed(exchange, data, step)
    assert out == response("200 OK", ["Content-Length: %d" % len(BODY), "ETag: x"], BODY)
    assert exchange.keep_alive and done[-1] and not any(done[:-1])


@pytest.mark.parametrize("emulators", [["Connection: close"], []])
def test_a_request_that_asks_for_the_close_is_answered_with_it(emulators):
    """`Connection: close` from the function: the answer says so, and the connection is not kept."""
    data = response("200 OK", ["Content-Length: %d" % len(BODY), *emulators, "ETag: x"], BODY)
    exchange = Exchange(b"GET /b/k HTTP/1.1\r\n", closing=True)
    out, done = feed(exchange, data, 100)
    assert out == response("200 OK", ["Content-Length: %d" % len(BODY), "ETag: x", "Connection: close"], BODY)
    assert not exchange.keep_alive and done[-1]


def test_a_head_answer_ends_with_its_head_whatever_its_length():
    exchange = Exchange(b"HEAD /b/k HTTP/1.1\r\n")
    out = exchange.received(response("200 OK", ["Content-Length: 5000", "Connection: close"]))
    assert exchange.done and exchange.keep_alive and b"Connection" not in out


def test_an_interim_continue_is_followed_by_the_real_answer():
    exchange = Exchange(b"PUT /b/k HTTP/1.1\r\n")
    interim = b"HTTP/1.1 100 Continue\r\n\r\n"
    assert exchange.received(interim) == interim and not exchange.done
    out = exchange.received(response("200 OK", ["Content-Length: 0", "Connection: close"]))
    assert exchange.done and out == response("200 OK", ["Content-Length: 0"])


@pytest.mark.parametrize("headers", [["Transfer-Encoding: chunked", "Connection: close"], ["Connection: close"]])
def test_an_end_not_known_from_the_head_is_relayed_as_it_came(headers):
    data = response("200 OK", headers, b"5\r\nhello\r\n0\r\n\r\n")
    exchange = Exchange(b"GET / HTTP/1.1\r\n")
    out, done = feed(exchange, data, 3)
    assert out == data and not exchange.keep_alive and not any(done)
