"""The body limits in front of the real hub (:mod:`chaja.hub.limits`): size, a bad
Content-Length, a stalled body, and any body read as JSON."""
from __future__ import annotations

import select

import pytest

from hubs import READ_KEY, WRITE_KEY
from raw import call, open_socket, read_response


def test_curl_style_form_content_type_is_read_as_json(hub):
    status, out, _ = call(hub.url, "POST", "/v1/search", raw=b'{"query": "tire pressure"}', key=READ_KEY,
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 200 and out["results"]


def test_a_body_over_the_limit_is_refused_before_it_is_sent(hub):
    sock = open_socket(hub.url)
    sock.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer " + WRITE_KEY.encode() + b"\r\nContent-Length: 5000000\r\n\r\n")
    status, body = read_response(sock)
    sock.close()
    assert status == 413 and b"limit" in body


def test_a_body_that_grows_past_the_limit_is_refused(hub):
    """No Content-Length (chunked): the hub counts the bytes and stops at the limit."""
    sock = open_socket(hub.url)
    sock.sendall(b"POST /v1/documents HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                 b"Authorization: Bearer " + WRITE_KEY.encode() + b"\r\n\r\n")
    part = b"x" * 100_000
    try:
        for _ in range(30):          # 3 MB offered, the limit is 1 MB
            sock.sendall(b"%x\r\n" % len(part) + part + b"\r\n")
            if select.select([sock], [], [], 0.05)[0]:
                break                # the hub has answered
    except (BrokenPipeError, ConnectionResetError):
        pass                         # refused before the client finished: as it should be
    status, body = read_response(sock)
    sock.close()
    assert status == 413 and b"limit" in body


@pytest.mark.parametrize("length", [b"-1", b"abc", b"1e3"])
def test_a_bad_content_length_is_400(hub, length):
    sock = open_socket(hub.url)
    sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n"
                 b"Authorization: Bearer " + READ_KEY.encode() + b"\r\n\r\n{}")
    status, _ = read_response(sock)
    sock.close()
    assert status == 400


def test_a_stalled_body_times_out_and_blocks_no_one(hub):
    stalled = open_socket(hub.url)
    stalled.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Authorization: Bearer " + READ_KEY.encode() + b"\r\nContent-Length: 100\r\n\r\n{\"query\"")
    assert hub.client().search("타이어 공기압", 3)["results"]          # served while the other waits
    assert call(hub.url, "GET", "/healthz")[0] == 200
    status, body = read_response(stalled)
    stalled.close()
    assert status == 408 and b"did not arrive" in body     # (the socket gives up after 30 s otherwise)
