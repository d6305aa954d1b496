"""The "phone" of the image's hotspot boot (tests/image/phone.py, run by make image-test in a
network namespace of the booted image): its DHCP packets and its mDNS query and answers, built
and parsed (round trips; a truncated or garbage packet is a clear PacketError, never a crash
or a hang), and, where the host allows it (root, `ip netns`, dnsmasq), the whole phone on a
veth pair between two network namespaces: a lease from a real dnsmasq, a name from an mDNS
responder, a page fetched by address with the name as its Host header."""
from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

REPO = Path(__file__).resolve().parents[2]
PHONE = REPO / "tests" / "image" / "phone.py"

spec = importlib.util.spec_from_file_location("image_phone", PHONE)
assert spec is not None and spec.loader is not None
phone = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = phone       # dataclasses look their module up there
spec.loader.exec_module(phone)


class Hang(Exception):
    pass


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Fails the test with Hang instead of letting a loop run for ever."""
    def alarm(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- DHCP ----------------------------------------------------------------------------------

addresses = st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t)))
option_codes = st.integers(1, 254)
dhcp_messages = st.builds(
    phone.Dhcp,
    op=st.sampled_from([phone.BOOTREQUEST, phone.BOOTREPLY]),
    xid=st.integers(0, 2**32 - 1),
    chaddr=st.binary(min_size=1, max_size=16),
    # Values past 255 bytes are split into several options and joined again (RFC 3396).
    options=st.dictionaries(option_codes, st.one_of(st.binary(max_size=40), st.binary(min_size=250, max_size=600)),
                            max_size=8).filter(
        lambda o: phone.OPT_MESSAGE_TYPE not in o or len(o[phone.OPT_MESSAGE_TYPE]) == 1),
    ciaddr=addresses, yiaddr=addresses, siaddr=addresses,
    flags=st.sampled_from([0, phone.FLAG_BROADCAST]))


@given(dhcp_messages)
def test_a_dhcp_message_survives_its_packet(message) -> None:
    assert phone.parse_dhcp(phone.build_dhcp(message)) == message


@settings(deadline=None)     # every cut of each packet: a second under load is no hang
@given(dhcp_messages)
def test_every_cut_dhcp_packet_is_a_packet_error(message) -> None:
    # The end option is the last byte: a packet cut anywhere before it has lost something.
    packet = phone.build_dhcp(message)
    for cut in range(len(packet)):
        with pytest.raises(phone.PacketError):
            phone.parse_dhcp(packet[:cut])


@settings(max_examples=300)
@given(st.one_of(
    st.binary(max_size=600),
    # Past the fixed part and the cookie, so that the options' walk meets the garbage.
    st.binary(max_size=200).map(lambda tail: bytes([2, 1, 6]) + bytes(233) + phone.MAGIC + tail)))
def test_garbage_is_a_dhcp_packet_or_a_packet_error(packet) -> None:
    with bounded(2):
        try:
            message = phone.parse_dhcp(packet)
        except phone.PacketError as error:
            assert "\n" not in str(error) and str(error)
        else:
            assert message.op in (1, 2) and 1 <= len(message.chaddr) <= 16


def test_a_dnsmasq_offer_as_it_comes() -> None:
    # An OFFER as dnsmasq 2.90 sends it (its fields and option order; sname and file empty).
    mac = bytes.fromhex("02000000010a")
    options = bytes([53, 1, 2, 54, 4, 10, 42, 0, 1, 51, 4, 0, 0, 14, 16, 58, 4, 0, 0, 7, 8,
                     59, 4, 0, 0, 12, 78, 1, 4, 255, 255, 255, 0, 28, 4, 10, 42, 0, 255,
                     3, 4, 10, 42, 0, 1, 6, 4, 10, 42, 0, 1, 255])
    packet = (struct.pack("!BBBBIHH", 2, 1, 6, 0, 0xDEADBEEF, 0, 0x8000) + bytes(4)
              + socket.inet_aton("10.42.0.57") + socket.inet_aton("10.42.0.1") + bytes(4)
              + mac + bytes(10) + bytes(192) + phone.MAGIC + options + bytes(8))
    offer = phone.parse_dhcp(packet)
    assert (offer.message_type, offer.xid, offer.chaddr, offer.yiaddr) == (phone.OFFER, 0xDEADBEEF, mac, "10.42.0.57")
    assert offer.address_option(phone.OPT_SERVER_ID) == "10.42.0.1"
    assert offer.address_option(phone.OPT_SUBNET) == "255.255.255.0"
    assert offer.options[phone.OPT_LEASE] == struct.pack("!I", 3600)


def test_a_discover_asks_for_broadcast_replies() -> None:
    # The phone's interface has no address until the ACK: a unicast reply would be dropped.
    discover = phone.parse_dhcp(phone.build_dhcp(phone.Dhcp(
        phone.BOOTREQUEST, 7, b"\x02" * 6, {phone.OPT_MESSAGE_TYPE: bytes([phone.DISCOVER])},
        flags=phone.FLAG_BROADCAST)))
    assert discover.flags & 0x8000 and discover.message_type == phone.DISCOVER


# --- mDNS ----------------------------------------------------------------------------------

labels = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="."),
                 min_size=1, max_size=63)
names = st.lists(labels, min_size=1, max_size=5).map(".".join).filter(lambda n: len(n) + 2 <= 255)


def compressed(ident: int, flags: int, question: str | None, records: list[tuple[str, int, int, bytes]]) -> bytes:
    """A DNS message whose names are compressed as responders do: any name's tail already
    written is a pointer to it (RFC 1035 4.1.4)."""
    out = bytearray(struct.pack("!HHHHHH", ident, flags, question is not None, len(records), 0, 0))
    seen: dict[tuple[str, ...], int] = {}

    def name(text: str) -> None:
        parts = text.split(".")
        for i in range(len(parts)):
            tail = tuple(p.lower() for p in parts[i:])
            if tail in seen:
                out.extend(struct.pack("!H", 0xC000 | seen[tail]))
                return
            if len(out) < 0x4000:
                seen[tail] = len(out)
            raw = parts[i].encode()
            out.extend(bytes([len(raw)]) + raw)
        out.append(0)

    if question is not None:
        name(question)
        out.extend(struct.pack("!HH", phone.TYPE_A, 1))
    for owner, rtype, rclass, data in records:
        name(owner)
        out.extend(struct.pack("!HHIH", rtype, rclass, 120, len(data)) + data)
    return bytes(out)


@given(names, st.integers(1, 0xFFFF))
def test_a_query_asks_one_question_for_an_a_record(name, ident) -> None:
    message = phone.parse_message(phone.build_query(name, ident))
    assert (message.ident, message.is_response, message.records) == (ident, False, [])
    assert message.questions == [(name, phone.TYPE_A, 1)]


@given(names, st.lists(addresses, min_size=1, max_size=3), st.lists(names, max_size=3), st.data())
def test_the_answer_s_addresses_are_read_through_compressed_names(name, addrs, others, data) -> None:
    # The name's A records with the cache-flush bit, and other records a responder adds
    # (another name's A record, this name's AAAA), whose names point into each other.
    records = [(name.upper() if data.draw(st.booleans()) else name, phone.TYPE_A, 0x8001, socket.inet_aton(a))
               for a in addrs]
    records += [(f"{o}.{name}", phone.TYPE_A, 1, bytes(4)) for o in others if len(o) + len(name) + 3 <= 255]
    records.insert(data.draw(st.integers(0, len(records))), (name, 28, 0x8001, bytes(16)))
    packet = compressed(0x1234, 0x8400, name, records)
    message = phone.parse_message(packet)
    assert message.is_response and message.questions == [(name, phone.TYPE_A, 1)]
    assert message.addresses(name) == addrs
    assert [r.name.lower() for r in message.records] == [r[0].lower() for r in records]


def test_avahi_s_legacy_unicast_answer() -> None:
    # avahi's answer to a query from a port other than 5353: the query's ID and question, an
    # A record whose name is a pointer to the question's (0xC00C), TTL 10, no cache-flush bit.
    packet = bytes.fromhex("beef84000001000100000000"
                           "0b67616d65732d7461626c65056c6f63616c0000010001"
                           "c00c000100010000000a00040a2a0001")
    message = phone.parse_message(packet)
    assert message.ident == 0xBEEF and message.addresses("games-table.local") == ["10.42.0.1"]
    assert message.addresses("Games-Table.local.") == ["10.42.0.1"] and message.addresses("other.local") == []


@pytest.mark.parametrize("packet, why", [
    (bytes(12 - 1), "header"),
    (struct.pack("!6H", 1, 0x8400, 0, 1, 0, 0) + b"\xc0\x0c" + bytes(10), "points forward or to itself"),
    # Two names that point at each other.
    (struct.pack("!6H", 1, 0x8400, 0, 2, 0, 0) + b"\xc0\x18" + struct.pack("!HHIH", 1, 1, 0, 0)
     + b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 0), "points forward or to itself"),
    (struct.pack("!6H", 1, 0x8400, 0, 1, 0, 0) + b"\x05games\xc0", "pointer cut off"),
    (struct.pack("!6H", 1, 0x8400, 0, 1, 0, 0) + b"\x45games", "label type"),
    (struct.pack("!6H", 1, 0x8400, 0, 1, 0, 0) + b"\x00" + struct.pack("!HHIH", 1, 1, 0, 5) + bytes(5), "4"),
    (struct.pack("!6H", 1, 0x8400, 0, 1, 0, 0) + b"\x00" + struct.pack("!HHIH", 1, 1, 0, 4) + bytes(3), "runs past"),
    (struct.pack("!6H", 1, 0x8400, 0, 1, 0, 0) + (b"\x3f" + b"a" * 63) * 4 + b"\x00", "longer than 255"),
])
def test_a_bad_answer_is_a_packet_error_that_says_why(packet, why) -> None:
    with bounded(2), pytest.raises(phone.PacketError, match=why):
        phone.parse_message(packet)


@settings(deadline=None)
@given(names, st.lists(addresses, min_size=1, max_size=2))
def test_every_cut_answer_is_a_packet_error(name, addrs) -> None:
    packet = compressed(1, 0x8400, name, [(name, phone.TYPE_A, 1, socket.inet_aton(a)) for a in addrs])
    for cut in range(len(packet)):
        with pytest.raises(phone.PacketError):
            phone.parse_message(packet[:cut])


@settings(max_examples=300)
@given(st.one_of(
    st.binary(max_size=300),
    # A header that promises records, then garbage (pointers among it, so that loops are tried).
    st.tuples(st.integers(0, 3), st.integers(0, 5),
              st.lists(st.one_of(st.binary(max_size=8), st.integers(0, 48).map(lambda o: struct.pack("!H", 0xC000 | o))),
                       max_size=12)).map(lambda t: struct.pack("!6H", 1, 0x8400, t[0], t[1], 0, 0) + b"".join(t[2]))))
def test_garbage_is_a_message_or_a_packet_error(packet) -> None:
    with bounded(2):
        try:
            message = phone.parse_message(packet)
        except phone.PacketError as error:
            assert "\n" not in str(error) and str(error)
        else:
            message.addresses("games-table.local")


# --- the command line, and the whole phone between two network namespaces ----------------

def run_phone(*args: str, netns: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    prefix = ["ip", "netns", "exec", netns] if netns else []
    return subprocess.run([*prefix, sys.executable, str(PHONE), *args], capture_output=True, text=True, timeout=timeout)


def test_wrong_usage_exits_2_and_a_bad_url_exits_1_with_one_line() -> None:
    assert run_phone("dhcp").returncode == 2
    bad = run_phone("get", "ftp://games-table.local/", "--address", "127.0.0.1")
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr == "phone.py: get: not an http:// URL: ftp://games-table.local/\n"


_names = itertools.count()


@pytest.fixture
def link() -> Iterator[tuple[str, str, str, str]]:
    """Two network namespaces joined by a veth pair: ("box", with 10.99.0.1/24) and ("phone",
    no address). Yields (box netns, box interface, phone netns, phone interface)."""
    if os.geteuid() != 0:
        pytest.skip("not root: the phone's exchange between two network namespaces is not run")
    if shutil.which("ip") is None:
        pytest.skip("no ip command (iproute2): the phone's exchange between two network namespaces is not run")
    tag = f"{os.getpid() % 100000}x{next(_names)}"
    box, ph = f"pcbox{tag}", f"pcph{tag}"
    made: list[str] = []
    try:
        for ns in (box, ph):
            added = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
            if added.returncode != 0:
                pytest.skip(f"ip netns add does not work here ({added.stderr.strip()}): the phone's exchange is not run")
            made.append(ns)
        for cmd in (["ip", "link", "add", f"b{tag}", "netns", box, "type", "veth", "peer", "name", f"p{tag}", "netns", ph],
                    ["ip", "-n", box, "addr", "add", "10.99.0.1/24", "dev", f"b{tag}"],
                    ["ip", "-n", box, "link", "set", f"b{tag}", "up"],
                    ["ip", "-n", ph, "link", "set", f"p{tag}", "up"]):
            subprocess.run(cmd, check=True, capture_output=True)
        yield box, f"b{tag}", ph, f"p{tag}"
    finally:
        for ns in made:       # the veth pair goes with its namespaces
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


RESPONDER = r"""
import socket, struct, sys
sys.path.insert(0, sys.argv[1])
from test_image_phone import compressed
iface, name, address = sys.argv[2:5]
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())
sock.bind(("", 5353))
sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton("224.0.0.251") + socket.inet_aton(address))
print("ready", flush=True)
while True:
    packet, source = sock.recvfrom(9000)
    ident = struct.unpack_from("!H", packet)[0]
    # First some noise to the asker (garbage, then another name's answer), then the answer.
    sock.sendto(b"\xc0\xc0garbage", source)
    sock.sendto(compressed(ident, 0x8400, None, [("other.local", 1, 1, socket.inet_aton("10.99.0.9"))]), source)
    sock.sendto(compressed(ident, 0x8400, name, [(name, 1, 1, socket.inet_aton(address))]), source)
"""

WEB = r"""
import http.server, sys
class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.headers["Host"] == "games-table.local:8080" and self.path == "/api/snapshot"
        body = b'{"players": ["Ann", "Bob", "Cy"]}' if ok else b"wrong host or path"
        self.send_response(200 if ok else 421)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
server = http.server.HTTPServer(("10.99.0.1", 8080), Page)
print("ready", flush=True)
server.serve_forever()
"""


def background(netns: str, *argv: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(["ip", "netns", "exec", netns, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    return proc


def test_the_phone_gets_a_lease_a_name_and_the_page_between_two_namespaces(link, tmp_path) -> None:
    box, box_if, ph, ph_if = link
    dnsmasq = shutil.which("dnsmasq") or ("/usr/sbin/dnsmasq" if Path("/usr/sbin/dnsmasq").exists() else None)
    if dnsmasq is None:
        pytest.skip("dnsmasq is not installed (apt install dnsmasq-base): the phone's DHCP against a real server is not run")
    # No server yet: the phone gives up in its time with one line, and exit 1.
    start = time.monotonic()
    alone = run_phone("dhcp", ph_if, "--timeout", "3", netns=ph)
    assert alone.returncode == 1 and time.monotonic() - start < 10
    assert alone.stderr.startswith("phone.py: dhcp: no OFFER within the time (2 DISCOVERs sent") and alone.stderr.count("\n") == 1
    procs = [background(box, dnsmasq, "--no-daemon", "--conf-file=/dev/null", "--port=0", f"--interface={box_if}",
                        "--bind-interfaces", "--dhcp-range=10.99.0.50,10.99.0.60,255.255.255.0,1h",
                        f"--dhcp-leasefile={tmp_path / 'leases'}", f"--pid-file={tmp_path / 'pid'}", "--user=root"),
             background(box, sys.executable, "-c", RESPONDER, str(Path(__file__).parent), box_if, "games-table.local", "10.99.0.1"),
             background(box, sys.executable, "-c", WEB)]
    try:
        for proc in procs[1:]:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        lease = run_phone("dhcp", ph_if, "--timeout", "20", netns=ph)
        assert lease.returncode == 0, lease.stderr
        address, rest = lease.stdout.split(" ", 1)
        assert address.startswith("10.99.0.") and address.endswith("/24") and 50 <= int(address[8:-3]) <= 60
        assert rest == "server 10.99.0.1 router 10.99.0.1 lease 3600\n"
        shown = subprocess.run(["ip", "-n", ph, "-4", "-o", "addr", "show", ph_if], capture_output=True, text=True)
        assert f"inet {address} " in shown.stdout
        named = run_phone("mdns", ph_if, "games-table.local", "--timeout", "10", netns=ph)
        assert (named.returncode, named.stdout) == (0, "10.99.0.1\n"), named.stderr
        page = run_phone("get", "http://games-table.local:8080/api/snapshot", "--address", "10.99.0.1", netns=ph)
        assert page.returncode == 0, page.stdout + page.stderr
        assert page.stdout == '200 application/json 33\n{"players": ["Ann", "Bob", "Cy"]}\n'
        lost = run_phone("mdns", ph_if, "nobody.local", "--timeout", "1", netns=ph)
        assert lost.returncode == 1 and lost.stderr.startswith("phone.py: mdns: no mDNS answer for nobody.local")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)
