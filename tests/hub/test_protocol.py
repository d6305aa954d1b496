"""The hub's wire protocol (pure): every parser takes any input and gives a message or one
clear refusal, and what the web process forwards is only ever a host verb with its own fields."""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from pi_companion.hub import protocol
from pi_companion.hub.protocol import CommandError

JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                              st.text(max_size=30)),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
                    max_leaves=12)
KINDS = sorted(protocol.KNOWN) + ["press", "power", "", "HELLO", "yes "]


@settings(max_examples=500)
@given(st.binary(max_size=protocol.LINE_LIMIT + 10) | JSON.map(lambda v: json.dumps(v).encode()))
def test_any_line_is_a_message_object_or_one_refusal(raw):
    try:
        msg = protocol.parse_line(raw)
    except CommandError as err:
        assert str(err) in ("command too long", "not JSON", "a command must be a JSON object")
        return
    assert isinstance(msg, dict)
    protocol.message_id(msg)                              # never raises, whatever the id


@settings(max_examples=500)
@given(cmd=st.sampled_from(KINDS) | JSON, fields=st.dictionaries(st.text(max_size=10) | st.sampled_from(
    ["player", "name", "names", "game", "options", "delta", "key", "address", "on", "role", "token", "id"]),
    JSON, max_size=5))
def test_the_web_process_forwards_only_a_host_verb_with_its_own_fields(cmd, fields):
    page = {**fields, "cmd": cmd}
    try:
        line = protocol.host_message(page, "the-token", 7)
    except CommandError as err:
        assert cmd not in protocol.FORWARDED and str(err).startswith("unknown command")
        return
    sent = json.loads(line)
    assert sent["cmd"] in protocol.FORWARDED and sent["cmd"] in protocol.VERBS["host"]
    assert sent["token"] == "the-token" and sent["id"] == 7
    assert set(sent) <= {"cmd", "token", "id", *protocol.FIELDS.get(sent["cmd"], ())}
    assert not set(sent) & {"address", "on", "role"}


@settings(max_examples=300)
@given(role=st.sampled_from(protocol.ROLES), cmd=st.sampled_from(KINDS) | JSON)
def test_each_role_has_its_verbs_and_no_other(role, cmd):
    problem = protocol.verb_problem(role, {"cmd": cmd})
    if isinstance(cmd, str) and cmd in protocol.VERBS[role]:
        assert problem is None
    else:
        assert problem is not None and "\n" not in problem


def test_the_verbs_that_move_the_qr_or_the_pages_are_no_page_s():
    assert not {"address", "watch", "hotspot", "auth", "hello"} & set(protocol.FORWARDED)
    assert protocol.VERBS["board"] == {"watch", "address"}
    assert protocol.VERBS["dispatcher"] == {"hotspot"}
    assert all(not protocol.VERBS[a] & protocol.VERBS[b]
               for a in protocol.ROLES for b in protocol.ROLES if a < b)


@given(JSON)
def test_a_hello_names_a_role_or_is_refused(value):
    msg = value if isinstance(value, dict) else {"cmd": "hello", "role": value}
    try:
        assert protocol.hello_role(msg) in protocol.ROLES
    except CommandError as err:
        assert "\n" not in str(err)


@given(st.binary(max_size=200) | JSON.map(lambda v: json.dumps(v).encode()))
def test_a_hub_line_the_web_process_reads_is_a_known_kind_or_a_value_error(raw):
    try:
        msg = protocol.parse_server_line(raw)
    except ValueError:
        return
    assert msg["type"] in ("snapshot", "oled", "beat", "reply")
