"""The console's form reading (issue 30): parts counted as the body arrives, whatever
its chunks; the multipart splitter; Origin against Host; amounts in their currency."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from levy.console.app import _money
from levy.console.http import BodyTimeout, BodyTooLarge, FormRefused, TokenRefused, parse_form, read_body, same_origin

TYPE = "multipart/form-data; boundary=xx"


def multipart(parts: int) -> bytes:
    return b'--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n' * parts + b"--xx--\r\n"


def feed(body: bytes, size: int):  # type: ignore[no-untyped-def]
    messages = iter([{"type": "http.request", "body": body[i:i + size], "more_body": i + size < len(body)}
                     for i in range(0, len(body), size)])

    async def receive() -> dict:
        return next(messages)

    return receive


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 65_536])
def test_parts_are_counted_as_the_body_arrives_whatever_its_chunks(size: int) -> None:
    # 32 parts is the limit: a delimiter split across two chunks is counted once.
    assert asyncio.run(read_body(feed(multipart(32), size), 10**6, content_type=TYPE)) == multipart(32)
    with pytest.raises(BodyTooLarge, match="at most 32 parts"):
        asyncio.run(read_body(feed(multipart(33), size), 10**6, content_type=TYPE))


def test_size_and_deadline() -> None:
    with pytest.raises(BodyTooLarge):
        asyncio.run(read_body(feed(b"x" * 101, 10), 100))

    async def stalled() -> dict:
        await asyncio.sleep(10)
        return {}

    with pytest.raises(BodyTimeout, match="within 0.05 seconds"):
        asyncio.run(read_body(stalled, 100, 0.05))


def test_multipart_fields_files_and_the_token_before_any_file() -> None:
    request = httpx.Request("POST", "http://x/", data={"csrf_token": "t", "name": 'a "quoted" é'},
                            files={"document": ("scan.pdf", b"%PDF-1 \r\n--x", "application/pdf")})
    body, ctype = request.read(), request.headers["content-type"]
    fields, files = parse_form(ctype, body, token="t")
    assert fields == {"csrf_token": "t", "name": 'a "quoted" é'}
    assert (files["document"].filename, files["document"].data) == ("scan.pdf", b"%PDF-1 \r\n--x")
    with pytest.raises(TokenRefused):
        parse_form(ctype, body, token="another")
    with pytest.raises(BodyTooLarge, match="over 4 bytes"):
        parse_form(ctype, body, max_field=4)
    for bad in (b"--xx\r\nno blank line", b"no delimiter", b"--xx\r\n\r\nno end"):
        with pytest.raises(FormRefused):
            parse_form(TYPE, bad)
    with pytest.raises(FormRefused, match="no boundary"):
        parse_form("multipart/form-data", body)


def test_url_encoded_forms_are_bounded_too() -> None:
    assert parse_form("application/x-www-form-urlencoded", b"a=1&b=%20x") == ({"a": "1", "b": " x"}, {})
    with pytest.raises(BodyTooLarge, match="at most 32 fields"):
        parse_form("application/x-www-form-urlencoded", b"&".join([b"a=1"] * 33))


@pytest.mark.parametrize("origin, host, ok", [
    (None, "127.0.0.1:8080", True),  # no Origin: the token decides
    ("http://127.0.0.1:8080", "127.0.0.1:8080", True),
    ("https://levy.example", "levy.example", True),
    ("https://levy.example", "levy.example:443", True),  # default ports alike
    ("http://[::1]:8080", "[::1]:8080", True),
    ("http://evil.example", "127.0.0.1:8080", False),
    ("http://127.0.0.1:9090", "127.0.0.1:8080", False),
    ("null", "127.0.0.1:8080", False),
    ("http://levy.example:x", "levy.example", False),
])
def test_origin_must_name_this_host(origin: str | None, host: str, ok: bool) -> None:
    headers = {"host": host} | ({"origin": origin} if origin is not None else {})
    assert same_origin(headers) is ok


def test_the_forwarded_host_counts_only_behind_a_trusted_proxy() -> None:
    headers = {"origin": "https://levy.example", "host": "10.0.0.5:8080", "x-forwarded-host": "levy.example"}
    assert not same_origin(headers)
    assert same_origin(headers, trust_forwarded_host=True)


@pytest.mark.parametrize("minor, currency, shown", [
    ("10000", "JPY", "¥10,000"),  # exponent 0
    ("123456", "USD", "$1,234.56"),  # exponent 2
    ("-5", "USD", "-$0.05"),
    ("1500", "BHD", "BHD 1.500"),  # exponent 3, no symbol
    ("1250", "CAD", "CAD 12.50"),
    ("12", "XXX", "XXX 12"),  # no minor unit known: the minor units as they are
    (None, "USD", "—"),
])
def test_money_in_its_currency(minor: str | None, currency: str, shown: str) -> None:
    assert _money(minor, currency) == shown
