"""The IP address the web process reports to the hub for the OLED's QR screens (`hub.address_url`):
whatever text arrives, either a one-line refusal or a URL whose host is exactly that address of
a home network and that carries nothing else (the host's QR appends its token to it)."""
from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

import pytest
from hypothesis import given, strategies as st

from pi_companion.hub import CommandError, address_url

BOARD = "http://box.local:8080/"


def check(text):
    try:
        url = address_url(BOARD, text)
    except CommandError as err:
        assert "\n" not in str(err)
        return None
    parts = urlsplit(url)
    ip = ipaddress.ip_address(parts.hostname)
    assert ip == ipaddress.ip_address(text) and (ip.is_private or ip.is_loopback or ip.is_link_local)
    assert not ip.is_multicast and not ip.is_unspecified
    assert parts.scheme == "http" and parts.port == 8080 and parts.path == "/"
    assert not parts.query and not parts.fragment and not parts.username and "@" not in url
    return url


@given(st.text(max_size=80))
def test_any_text_is_refused_or_becomes_a_clean_url(text):
    check(text)


@given(st.ip_addresses())
def test_any_ip_address_is_taken_exactly_when_it_is_a_home_networks(ip):
    home = (ip.is_private or ip.is_loopback or ip.is_link_local) and not ip.is_multicast \
        and not ip.is_unspecified
    assert (check(str(ip)) is not None) == home


@pytest.mark.parametrize("text,url", [
    ("192.168.1.23", "http://192.168.1.23:8080/"),
    ("10.0.0.5", "http://10.0.0.5:8080/"),
    ("fd00::1", "http://[fd00::1]:8080/"),
    ("127.0.0.1", "http://127.0.0.1:8080/"),
])
def test_home_addresses(text, url):
    assert address_url(BOARD, text) == url


@pytest.mark.parametrize("text", ["8.8.8.8", "0.0.0.0", "224.0.0.1", "evil.example", "192.168.1.2/x",
                                  "192.168.1.2#t=", "fe80::1%eth0", "", None, 3232235777, ["10.0.0.1"]])
def test_refused(text):
    with pytest.raises(CommandError):
        address_url(BOARD, text)
