#!/usr/bin/env python3
"""The "phone" of make image-test's hotspot boot (tests/image/hotspot-guest.sh): what a phone
does after it joins the box's Wi-Fi, with Python's standard library only (the image has
python3, but no DHCP client and no avahi tools for a second network namespace).

    phone.py dhcp IFACE [--timeout S] [--no-configure]
        DISCOVER, OFFER, REQUEST, ACK over UDP on IFACE; then `ip addr add` the lease.
        Prints: ADDRESS/PREFIX server SERVER router ROUTER lease SECONDS
    phone.py mdns IFACE NAME [--timeout S]
        One-shot mDNS query (legacy unicast, RFC 6762 6.7) for NAME's A record on IFACE.
        Prints: ADDRESS
    phone.py get URL --address ADDRESS [--timeout S] [--max-bytes N]
        HTTP GET of URL from ADDRESS, with URL's host:port as the Host header.
        Prints: STATUS CONTENT-TYPE LENGTH, then the body (at most --max-bytes).

Exit codes: 0 done, 1 the network or the answer failed (one line on stderr says which),
2 wrong usage.
"""
from __future__ import annotations

import argparse
import http.client
import ipaddress
import random
import socket
import struct
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field


class PacketError(ValueError):
    """A packet that is not what it claims to be (truncated, garbage), said in one line."""


class PhoneError(RuntimeError):
    """The exchange failed (no answer, a refusal, a bad reply), said in one line."""


# --- DHCP (RFC 2131, 2132; long options split and joined as RFC 3396 says) -----------------

DHCP_SERVER_PORT, DHCP_CLIENT_PORT = 67, 68
MAGIC = b"\x63\x82\x53\x63"
BOOTREQUEST, BOOTREPLY = 1, 2
DISCOVER, OFFER, REQUEST, DECLINE, ACK, NAK, RELEASE, INFORM = range(1, 9)
MESSAGE_NAMES = {DISCOVER: "DISCOVER", OFFER: "OFFER", REQUEST: "REQUEST", DECLINE: "DECLINE",
                 ACK: "ACK", NAK: "NAK", RELEASE: "RELEASE", INFORM: "INFORM"}
OPT_PAD, OPT_END = 0, 255
OPT_SUBNET, OPT_ROUTER, OPT_DNS, OPT_REQUESTED_IP, OPT_LEASE = 1, 3, 6, 50, 51
OPT_MESSAGE_TYPE, OPT_SERVER_ID, OPT_PARAMETERS, OPT_MESSAGE, OPT_CLIENT_ID = 53, 54, 55, 56, 61
FLAG_BROADCAST = 0x8000
# op, htype, hlen, hops, xid, secs, flags, ciaddr, yiaddr, siaddr, giaddr, chaddr, sname, file
BOOTP = struct.Struct("!BBBBIHH4s4s4s4s16s64s128s")


@dataclass(frozen=True)
class Dhcp:
    op: int
    xid: int
    chaddr: bytes
    options: dict[int, bytes] = field(default_factory=dict)
    ciaddr: str = "0.0.0.0"
    yiaddr: str = "0.0.0.0"
    siaddr: str = "0.0.0.0"
    flags: int = 0

    @property
    def message_type(self) -> int | None:
        value = self.options.get(OPT_MESSAGE_TYPE)
        return value[0] if value else None

    def address_option(self, code: int) -> str | None:
        value = self.options.get(code)
        return socket.inet_ntoa(value[:4]) if value is not None and len(value) >= 4 else None


def build_dhcp(message: Dhcp) -> bytes:
    """The packet for a DHCP message; an option longer than 255 bytes is split into several."""
    if not 1 <= len(message.chaddr) <= 16:
        raise ValueError(f"a hardware address has 1 to 16 bytes, not {len(message.chaddr)}")
    head = BOOTP.pack(message.op, 1, len(message.chaddr), 0, message.xid, 0, message.flags,
                      socket.inet_aton(message.ciaddr), socket.inet_aton(message.yiaddr),
                      socket.inet_aton(message.siaddr), bytes(4), message.chaddr, b"", b"")
    body = bytearray(MAGIC)
    for code, value in message.options.items():
        if code in (OPT_PAD, OPT_END):
            raise ValueError(f"option {code} is the pad or end marker, not an option")
        for start in range(0, max(len(value), 1), 255):
            chunk = value[start:start + 255]
            body += bytes((code, len(chunk))) + chunk
    body.append(OPT_END)
    return head + bytes(body)


def parse_dhcp(packet: bytes) -> Dhcp:
    """A DHCP message from its packet; PacketError says what is wrong with one that is not."""
    if len(packet) < BOOTP.size + len(MAGIC):
        raise PacketError(f"DHCP packet of {len(packet)} bytes, shorter than the {BOOTP.size + len(MAGIC)} of its fixed part")
    op, htype, hlen, _hops, xid, _secs, flags, ciaddr, yiaddr, siaddr, _giaddr, chaddr, _sname, _file = \
        BOOTP.unpack_from(packet)
    if op not in (BOOTREQUEST, BOOTREPLY):
        raise PacketError(f"DHCP packet with op {op} (1 request or 2 reply)")
    if not 1 <= hlen <= 16:
        raise PacketError(f"DHCP packet with a {hlen}-byte hardware address (1 to 16)")
    if packet[BOOTP.size:BOOTP.size + 4] != MAGIC:
        raise PacketError("DHCP packet without the magic cookie 99.130.83.99")
    options: dict[int, bytes] = {}
    at = BOOTP.size + 4
    while True:
        if at >= len(packet):
            raise PacketError(f"DHCP options run to the end of the packet ({len(packet)} bytes) without an end option: truncated?")
        code = packet[at]
        if code == OPT_END:
            break
        if code == OPT_PAD:
            at += 1
            continue
        if at + 2 > len(packet) or at + 2 + packet[at + 1] > len(packet):
            raise PacketError(f"DHCP option {code} at byte {at} runs past the end of the packet ({len(packet)} bytes)")
        length = packet[at + 1]
        options[code] = options.get(code, b"") + packet[at + 2:at + 2 + length]
        at += 2 + length
    kind = options.get(OPT_MESSAGE_TYPE)
    if kind is not None and len(kind) != 1:
        raise PacketError(f"DHCP message type option of {len(kind)} bytes (1)")
    return Dhcp(op, xid, chaddr[:hlen], options, socket.inet_ntoa(ciaddr), socket.inet_ntoa(yiaddr),
                socket.inet_ntoa(siaddr), flags)


@dataclass(frozen=True)
class Lease:
    address: str
    prefix: int
    server: str
    router: str | None
    seconds: int | None

    def __str__(self) -> str:
        return (f"{self.address}/{self.prefix} server {self.server} router {self.router or '-'}"
                f" lease {self.seconds if self.seconds is not None else '-'}")


def interface_mac(iface: str) -> bytes:
    try:
        with open(f"/sys/class/net/{iface}/address") as f:
            return bytes.fromhex(f.read().strip().replace(":", ""))
    except (OSError, ValueError) as error:
        raise PhoneError(f"no hardware address for interface {iface!r}: {error}") from None


def bound_socket(iface: str, port: int) -> socket.socket:
    """A UDP socket that sends and receives on IFACE only (it may have no address yet)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())
        sock.bind(("0.0.0.0", port))
    except OSError as error:
        sock.close()
        raise PhoneError(f"cannot open a UDP socket on {iface!r} port {port}: {error}") from None
    return sock


def exchange(sock: socket.socket, request: bytes, want: set[int], xid: int, mac: bytes,
             deadline: float, what: str) -> Dhcp:
    """Broadcast REQUEST (again every 2 s) until a reply of a WANT type for XID and MAC."""
    sent = ignored = 0
    while time.monotonic() < deadline:
        sock.sendto(request, ("255.255.255.255", DHCP_SERVER_PORT))
        sent += 1
        resend = min(deadline, time.monotonic() + 2.0)
        while (left := resend - time.monotonic()) > 0:
            sock.settimeout(left)
            try:
                packet, _ = sock.recvfrom(4096)
            except TimeoutError:
                break
            try:
                reply = parse_dhcp(packet)
            except PacketError:
                ignored += 1
                continue
            if reply.op != BOOTREPLY or reply.xid != xid or reply.chaddr != mac:
                ignored += 1
                continue
            if reply.message_type == NAK:
                why = reply.options.get(OPT_MESSAGE, b"").decode(errors="replace")
                raise PhoneError(f"the server said NAK to the {what}" + (f": {why}" if why else ""))
            if reply.message_type in want:
                return reply
            ignored += 1
    names = "/".join(MESSAGE_NAMES[w] for w in sorted(want))
    raise PhoneError(f"no {names} within the time ({sent} {what}s sent, {ignored} other packets ignored)")


def dhcp(iface: str, timeout: float) -> Lease:
    """A lease for IFACE from whichever DHCP server answers first."""
    mac = interface_mac(iface)
    xid = random.getrandbits(32)
    deadline = time.monotonic() + timeout
    params = bytes((OPT_SUBNET, OPT_ROUTER, OPT_DNS, OPT_LEASE))
    client_id = b"\x01" + mac
    with bound_socket(iface, DHCP_CLIENT_PORT) as sock:
        # The broadcast flag: the interface has no address yet, so the replies must be broadcast.
        discover = Dhcp(BOOTREQUEST, xid, mac, {OPT_MESSAGE_TYPE: bytes((DISCOVER,)), OPT_CLIENT_ID: client_id,
                                                 OPT_PARAMETERS: params}, flags=FLAG_BROADCAST)
        offer = exchange(sock, build_dhcp(discover), {OFFER}, xid, mac, deadline, "DISCOVER")
        server = offer.options.get(OPT_SERVER_ID)
        if server is None or len(server) != 4:
            raise PhoneError("the OFFER has no server identifier (option 54)")
        request = Dhcp(BOOTREQUEST, xid, mac, {
            OPT_MESSAGE_TYPE: bytes((REQUEST,)), OPT_CLIENT_ID: client_id,
            OPT_REQUESTED_IP: socket.inet_aton(offer.yiaddr), OPT_SERVER_ID: server,
            OPT_PARAMETERS: params}, flags=FLAG_BROADCAST)
        ack = exchange(sock, build_dhcp(request), {ACK}, xid, mac, deadline, "REQUEST")
    if ack.yiaddr == "0.0.0.0":
        raise PhoneError("the ACK gives no address")
    mask = ack.address_option(OPT_SUBNET) or "255.255.255.0"
    try:
        prefix = ipaddress.IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        raise PhoneError(f"the ACK's subnet mask {mask} is not a mask") from None
    lease = ack.options.get(OPT_LEASE)
    return Lease(ack.yiaddr, prefix, socket.inet_ntoa(server), ack.address_option(OPT_ROUTER),
                 struct.unpack("!I", lease)[0] if lease is not None and len(lease) == 4 else None)


# --- mDNS (RFC 6762) over DNS messages (RFC 1035 4.1, names compressed as 4.1.4) ------------

MDNS_GROUP, MDNS_PORT = "224.0.0.251", 5353
TYPE_A, CLASS_IN = 1, 1
DNS_HEADER = struct.Struct("!HHHHHH")
MAX_NAME = 255


@dataclass(frozen=True)
class Record:
    name: str
    rtype: int
    rclass: int
    ttl: int
    data: bytes


@dataclass(frozen=True)
class Message:
    ident: int
    flags: int
    questions: list[tuple[str, int, int]]
    records: list[Record]   # answers, then authority and additional records

    @property
    def is_response(self) -> bool:
        return bool(self.flags & 0x8000)

    def addresses(self, name: str) -> list[str]:
        """NAME's IPv4 addresses in the message (names compare without case)."""
        want = name.rstrip(".").lower()
        found = []
        for record in self.records:
            if record.rtype == TYPE_A and record.rclass == CLASS_IN and record.name.lower() == want:
                found.append(socket.inet_ntoa(record.data))
        return found


def encode_name(name: str) -> bytes:
    """NAME as DNS labels, uncompressed ("" or "." is the root)."""
    labels = [label for label in name.rstrip(".").split(".")] if name.rstrip(".") else []
    out = bytearray()
    for label in labels:
        raw = label.encode()
        if not 1 <= len(raw) <= 63:
            raise ValueError(f"DNS label {label!r} has {len(raw)} bytes (1 to 63)")
        out += bytes((len(raw),)) + raw
    out.append(0)
    if len(out) > MAX_NAME:
        raise ValueError(f"DNS name of {len(out)} bytes (at most {MAX_NAME})")
    return bytes(out)


def read_name(packet: bytes, at: int) -> tuple[str, int]:
    """The name at AT, following compression pointers, and the offset after it where it is
    written. A pointer must point before the label it stands in for, so no loop can form."""
    labels: list[str] = []
    length = 1
    end: int | None = None
    floor = at
    while True:
        if at >= len(packet):
            raise PacketError(f"DNS name runs past the end of the packet (byte {at} of {len(packet)})")
        size = packet[at]
        if size == 0:
            at += 1
            break
        if size & 0xC0 == 0xC0:
            if at + 1 >= len(packet):
                raise PacketError(f"DNS name pointer cut off at the end of the packet (byte {at})")
            target = ((size & 0x3F) << 8) | packet[at + 1]
            if target >= floor:
                raise PacketError(f"DNS name pointer at byte {at} points forward or to itself (to {target})")
            if end is None:
                end = at + 2
            at = floor = target
            continue
        if size & 0xC0:
            raise PacketError(f"DNS label type {size >> 6:#x} at byte {at} (only plain labels and pointers)")
        if at + 1 + size > len(packet):
            raise PacketError(f"DNS label at byte {at} runs past the end of the packet ({len(packet)} bytes)")
        length += size + 1
        if length > MAX_NAME:
            raise PacketError(f"DNS name longer than {MAX_NAME} bytes")
        labels.append(packet[at + 1:at + 1 + size].decode("utf-8", errors="replace"))
        at += 1 + size
    return ".".join(labels), (end if end is not None else at)


def build_query(name: str, ident: int, qtype: int = TYPE_A) -> bytes:
    """A one-question query (QU bit clear: sent from a port other than 5353 it is a legacy
    unicast query, which a responder answers to that port, RFC 6762 6.7)."""
    return DNS_HEADER.pack(ident, 0, 1, 0, 0, 0) + encode_name(name) + struct.pack("!HH", qtype, CLASS_IN)


def parse_message(packet: bytes) -> Message:
    """A DNS message from its packet; PacketError says what is wrong with one that is not."""
    if len(packet) < DNS_HEADER.size:
        raise PacketError(f"DNS message of {len(packet)} bytes, shorter than its 12-byte header")
    ident, flags, qdcount, ancount, nscount, arcount = DNS_HEADER.unpack_from(packet)
    at = DNS_HEADER.size
    questions = []
    for _ in range(qdcount):
        name, at = read_name(packet, at)
        if at + 4 > len(packet):
            raise PacketError(f"DNS question for {name!r} cut off at the end of the packet")
        qtype, qclass = struct.unpack_from("!HH", packet, at)
        questions.append((name, qtype, qclass & 0x7FFF))
        at += 4
    records = []
    for _ in range(ancount + nscount + arcount):
        name, at = read_name(packet, at)
        if at + 10 > len(packet):
            raise PacketError(f"DNS record for {name!r} cut off at the end of the packet")
        rtype, rclass, ttl, rdlength = struct.unpack_from("!HHIH", packet, at)
        at += 10
        if at + rdlength > len(packet):
            raise PacketError(f"DNS record data for {name!r} ({rdlength} bytes) runs past the end of the packet")
        data = packet[at:at + rdlength]
        if rtype == TYPE_A and (rclass & 0x7FFF) == CLASS_IN and rdlength != 4:
            raise PacketError(f"DNS A record for {name!r} with {rdlength} bytes of data (4)")
        # The top bit of an mDNS record's class is the cache-flush bit, not part of the class.
        records.append(Record(name, rtype, rclass & 0x7FFF, ttl, data))
        at += rdlength
    return Message(ident, flags, questions, records)


def mdns(iface: str, name: str, timeout: float) -> str:
    """NAME's IPv4 address from an mDNS responder on IFACE's link."""
    ident = random.randrange(1, 0x10000)
    query = build_query(name, ident)
    deadline = time.monotonic() + timeout
    sent = ignored = 0
    with bound_socket(iface, 0) as sock:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
        while time.monotonic() < deadline:
            sock.sendto(query, (MDNS_GROUP, MDNS_PORT))
            sent += 1
            resend = min(deadline, time.monotonic() + 1.0)
            while (left := resend - time.monotonic()) > 0:
                sock.settimeout(left)
                try:
                    packet, _ = sock.recvfrom(9000)
                except TimeoutError:
                    break
                try:
                    message = parse_message(packet)
                except PacketError:
                    ignored += 1
                    continue
                found = message.addresses(name) if message.is_response else []
                if found:
                    return found[0]
                ignored += 1
    raise PhoneError(f"no mDNS answer for {name} on {iface} within {timeout:g} s"
                     f" ({sent} queries sent, {ignored} other packets ignored)")


# --- HTTP ------------------------------------------------------------------------------

def http_get(url: str, address: str, timeout: float) -> tuple[int, str, bytes]:
    """GET URL from ADDRESS (URL's host and port as the Host header, as a browser sends it)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise PhoneError(f"not an http:// URL: {url}")
    try:
        port = parts.port or 80
    except ValueError:
        raise PhoneError(f"bad port in {url}") from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": parts.netloc})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", "-"), response.read()
    except (OSError, http.client.HTTPException) as error:
        raise PhoneError(f"GET {url} from {address}: {error or type(error).__name__}") from None
    finally:
        connection.close()


# --- command line -------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="phone.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("dhcp", help="get an address by DHCP and put it on the interface")
    p.add_argument("iface")
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--no-configure", action="store_true", help="print the lease, do not run ip addr add")
    p = sub.add_parser("mdns", help="resolve NAME.local by a one-shot mDNS query")
    p.add_argument("iface")
    p.add_argument("name")
    p.add_argument("--timeout", type=float, default=15.0)
    p = sub.add_parser("get", help="HTTP GET by address, with the URL's Host header")
    p.add_argument("url")
    p.add_argument("--address", required=True)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--max-bytes", type=int, default=4096)
    args = parser.parse_args(argv)
    try:
        if args.command == "dhcp":
            lease = dhcp(args.iface, args.timeout)
            if not args.no_configure:
                done = subprocess.run(["ip", "addr", "add", f"{lease.address}/{lease.prefix}", "dev", args.iface],
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    raise PhoneError(f"ip addr add {lease.address}/{lease.prefix} dev {args.iface}: {done.stderr.strip()}")
            print(lease)
        elif args.command == "mdns":
            print(mdns(args.iface, args.name, args.timeout))
        else:
            status, kind, body = http_get(args.url, args.address, args.timeout)
            print(status, kind.replace(" ", ""), len(body))
            sys.stdout.write(body[:args.max_bytes].decode("utf-8", errors="replace") + "\n")
            if status != 200:
                raise PhoneError(f"GET {args.url} from {args.address}: HTTP {status}")
    except (PhoneError, OSError) as error:
        print(f"phone.py: {args.command}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
