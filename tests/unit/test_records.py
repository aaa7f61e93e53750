from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from langchain_atma.errors import (
    InvalidMetadataError,
    InvalidRecordError,
    InvalidTimestampError,
    NamespaceError,
)
from langchain_atma.records import (
    RECIPROCAL_LINKS,
    LinkType,
    MemoryRecord,
    RecordStatus,
    parse_time,
)


def rec(**kw):
    base = {"namespace": "u1", "content": "I live in Boston."}
    base.update(kw)
    return MemoryRecord(**base)


def test_defaults_and_utc_time():
    r = rec(time="2023-05-20T10:00:00")
    assert r.status is RecordStatus.ACTIVE
    assert r.time.tzinfo is not None and r.time.utcoffset() == timedelta(0)
    assert r.time.hour == 10


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2023-05-08T13:56:00+02:00", datetime(2023, 5, 8, 11, 56, tzinfo=timezone.utc)),
        ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)),
        (datetime(2023, 5, 8, 13, 56), datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)),
        (0, datetime(1970, 1, 1, tzinfo=timezone.utc)),
    ],
)
def test_parse_time_normalizes_to_utc(value, expected):
    assert parse_time(value) == expected


@pytest.mark.parametrize("bad", ["", "yesterday", "2023-13-40", float("nan"), True, [], None])
def test_parse_time_rejects(bad):
    with pytest.raises(InvalidTimestampError):
        parse_time(bad)


@pytest.mark.parametrize("content", ["", "   ", "\n\t", 42, None, b"bytes", "a\x00b"])
def test_bad_content(content):
    with pytest.raises(InvalidRecordError):
        rec(content=content)


def test_huge_content_rejected_past_limit():
    rec(content="x" * 1_000_000)
    with pytest.raises(InvalidRecordError):
        rec(content="x" * 1_000_001)


def test_unknown_status_and_link():
    with pytest.raises(InvalidRecordError, match="unknown status"):
        rec(status="zombie")
    with pytest.raises(InvalidRecordError, match="unknown link type"):
        rec(links=[{"type": "replaces", "target": "x"}])


def test_self_link_rejected():
    with pytest.raises(InvalidRecordError):
        rec(id="a", links=[{"type": "related", "target": "a"}])


@pytest.mark.parametrize("ns", ["", " ", "a b", "x" * 200, None, 3, "-lead"])
def test_bad_namespace(ns):
    with pytest.raises(NamespaceError):
        rec(namespace=ns)


def test_metadata_normalization():
    r = rec(metadata={"a": 1, "b": None, "c": "x", "d": True, "e": 1.5})
    assert r.metadata == {"a": 1, "c": "x", "d": True, "e": 1.5}
    with pytest.raises(InvalidMetadataError, match="nested"):
        rec(metadata={"n": {"nested": 1}})
    with pytest.raises(InvalidMetadataError):
        rec(metadata={"l": [1, 2]})
    with pytest.raises(InvalidMetadataError, match="reserved"):
        rec(metadata={"atma_status": "active"})
    with pytest.raises(InvalidMetadataError):
        rec(metadata={"f": float("inf")})


def test_reciprocal_table_is_an_involution():
    for a, b in RECIPROCAL_LINKS.items():
        assert RECIPROCAL_LINKS[b] is a
    assert RECIPROCAL_LINKS[LinkType.SUPERSEDES] is LinkType.SUPERSEDED_BY


def test_sort_key_orders_by_time_then_seq():
    a = rec(time="2023-01-01T00:00:00", seq=2)
    b = rec(time="2023-01-01T00:00:00", seq=1)
    c = rec(time="2022-01-01T00:00:00", seq=9)
    assert [r.seq for r in sorted([a, b, c], key=lambda r: r.sort_key)] == [9, 1, 2]
