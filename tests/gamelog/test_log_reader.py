"""The log reader reads in chunks; what it yields and where it stops must not depend on where a
chunk ends: the same records, the same valid prefix, the same damage or torn tail as reading
the file line by line (the reader before chunks, kept here as the reference)."""
from __future__ import annotations

import io
import json
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_companion.gamelog import Damaged, decode, open_log

MAX = 48                     # a small MAX_LINE, so that over-long lines are cheap to make


def v2(payload: bytes) -> bytes:
    return payload + b" %08x\n" % zlib.crc32(payload)


def line_by_line(data: bytes, start: int, limit: int | None) -> tuple:
    """The reference: one readline(MAX_LINE) per record."""
    f = io.BytesIO(data)
    f.seek(start)
    records, end, damage, torn = [], start, None, 0
    while limit is None or len(records) < limit:
        line = f.readline(MAX)
        if not line:
            break
        if not line.endswith(b"\n"):
            if len(line) >= MAX:
                damage = f"record {len(records) + 1}: longer than {MAX} bytes"
            else:
                torn = len(line)
            break
        try:
            record = decode(line[:-1], 2)
        except Damaged as err:
            damage = f"record {len(records) + 1}: {err}"
            break
        if not isinstance(record, dict):
            damage = f"record {len(records) + 1}: not an object"
            break
        records.append(record)
        end += len(line)
    return records, len(records), end, damage, torn


lines = st.one_of(
    st.builds(lambda t: v2(json.dumps({"t": t, "advance": 1}, separators=(",", ":")).encode()),
              st.floats(0, 1e4, allow_nan=False)),
    st.builds(lambda n: v2(b'{"t":1.5,"hall":"A","level":1,"pad":"' + b"x" * n + b'"}'), st.integers(0, 60)),
    st.just(v2(b"[1,2]")),                                   # JSON, not an object
    st.just(b'{"t":1.0,"press":"P1"} 00000000\n'),           # checksum mismatch
    st.just(v2(b' {"t":1.0,"press":"P1"} ')),                # whitespace around the JSON
    st.binary(max_size=70).map(lambda b: b.replace(b"\n", b"") + b"\n"),
)


@settings(max_examples=300, deadline=None)
@given(body=st.lists(lines, max_size=12), cut=st.integers(0, 80), chunk=st.integers(1, 70),
       limit=st.one_of(st.none(), st.integers(0, 12)))
def test_chunks_read_exactly_what_lines_read(tmp_path_factory, body, cut, chunk, limit):
    header = v2(json.dumps({"v": 2, "game": "grab-bag", "players": ["A", "B"], "options": {},
                            "seed": 1}, separators=(",", ":")).encode())
    data = b"".join(body)
    data = header + data[: max(0, len(data) - cut)]          # a torn or cut tail, sometimes
    path = tmp_path_factory.mktemp("log") / "current.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as mp, open_log(path) as reader:
        mp.setattr("pi_companion.gamelog.reader.MAX_LINE", MAX)
        mp.setattr("pi_companion.gamelog.reader.CHUNK", chunk)
        got = list(reader.records(limit))
        result = (got, reader.count, reader.good_end, reader.damage, reader.torn)
    assert result == line_by_line(data, len(header), limit)
