"""LLM failures against a stub Ollama server, with the REAL ``langchain_ollama.ChatOllama``.

The stub (stdlib ``ThreadingHTTPServer`` on 127.0.0.1, started in a thread by
each test) implements what ChatOllama 1.1 calls: ``POST /api/chat`` with a
streaming NDJSON answer (``stream: true``, the default) or one JSON object
(``stream: false``), plus ``POST /api/show`` / ``GET /api/tags`` for clients
that validate the model. Structured output (the judge's ``AuditVerdict``, the
controller's ``ControllerOutput``) arrives as a JSON schema in ``format``; the
stub tells the three callers apart by that schema's title.

Scenarios: slower than the timeout, malformed JSON (in the model's text and in
the NDJSON stream itself), valid JSON naming ids outside the pair / pool,
empty answer, connection refused, and a server that dies mid-run. For each:
the judge falls back (``source="fallback"``, ``keep_both`` with
``fallback=None``), the controller keeps the stable pre-rank
(``fallback:<reason>``), the answerer returns ``status="failed"`` with a
readable error, nothing is half-committed (``verify`` is clean, statuses are
unchanged), and every fallback shows in the write / read trace. A healthy
stub run is the positive control (the same harness can supersede, apply and
answer).

Needs sockets on 127.0.0.1: run with ``-m integration --force-enable-socket``.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_ollama import ChatOllama

from langchain_atma.bank import StateBank
from langchain_atma.bank.judge import LLMJudge
from langchain_atma.bank.write_graph import create_write_graph, ingest_events
from langchain_atma.qa.answerer import LLMAnswerer
from langchain_atma.records import MemoryRecord, Provenance, RecordStatus
from langchain_atma.retrieval.controller import LLMController
from langchain_atma.retrieval.read_graph import ReadResult, aask, ask

pytestmark = pytest.mark.integration

NS = "ann"
QUESTION = "Where does Ann live now?"
TIMEOUT = 10.0  # per-call limit of the LLM parts where the stub does not stall (load-proof)
SLOW_TIMEOUT = 0.3  # per-call limit against the stalling stub
STALL = 4.0  # seconds the stalling stub waits before answering

Reply = Callable[[str, dict[str, Any]], str]
"""(kind, request body) -> the model's text; kind is judge | controller | answer."""


# ----------------------------------------------------------------------- the stub


class StubOllama:
    """A minimal Ollama-compatible HTTP server.

    Args:
        reply: the model text for a request (see :data:`Reply`).
        delay: seconds to wait before answering (cut short when the stub closes).
        die_after: answer this many chat requests, then die: the next request
            gets the response head and half a chunk, the connection is cut, and
            the listening socket is closed (later requests: connection refused).
        broken_stream: send NDJSON lines that are not JSON.
    """

    def __init__(  # noqa: C901 - to split (issue 27)
        self,
        reply: Reply,
        *,
        delay: float = 0.0,
        die_after: int | None = None,
        broken_stream: bool = False,
    ) -> None:
        self.reply = reply
        self.delay = delay
        self.die_after = die_after
        self.broken_stream = broken_stream
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._closed = False
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/api/tags":
                    self._json(200, {"models": [{"name": "stub:latest", "model": "stub:latest"}]})
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                size = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    self._json(400, {"error": "bad request body"})
                    return
                if self.path == "/api/show":
                    self._json(
                        200,
                        {
                            "modelfile": "",
                            "parameters": "",
                            "template": "",
                            "details": {"family": "stub"},
                            "capabilities": ["tools"],
                        },
                    )
                    return
                if self.path != "/api/chat":
                    self._json(404, {"error": f"unknown endpoint {self.path}"})
                    return
                n = stub._record(body)
                if stub.die_after is not None and n > stub.die_after:
                    stub._die(self)
                    return
                if stub.delay and stub._closing.wait(stub.delay):
                    self._hang_up()  # the stub is closing: leave without an answer
                    return
                kind = _kind(body)
                text = stub.reply(kind, body)
                if body.get("stream", True):
                    self._stream(body, text)
                else:
                    self._json(200, _final(body, text))

            # -- responses ------------------------------------------------------
            def _json(self, code: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

            def _stream(self, body: dict[str, Any], text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Connection", "close")
                self.end_headers()
                if stub.broken_stream:
                    lines = ["{this is not json", "<html>502 Bad Gateway</html>"]
                else:
                    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
                    lines = [json.dumps(_chunk(body, p)) for p in pieces]
                    lines.append(json.dumps(_final(body, "")))
                for line in lines:
                    self._chunk((line + "\n").encode())
                self.wfile.write(b"0\r\n\r\n")
                self.close_connection = True

            def _hang_up(self) -> None:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def _record(self, body: dict[str, Any]) -> int:
        with self._lock:
            self.requests.append((_kind(body), body))
            return len(self.requests)

    def _die(self, handler: BaseHTTPRequestHandler) -> None:
        """Send a response head and half a chunk, cut the connection, stop listening."""
        handler.send_response(200)
        handler.send_header("Content-Type", "application/x-ndjson")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.wfile.write(b'40\r\n{"model": "stub", "mess')
        handler.wfile.flush()
        handler.close_connection = True
        try:
            handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        threading.Thread(target=self.close, daemon=True).start()

    def kinds(self) -> list[str]:
        """The kind of every chat request received, in order."""
        with self._lock:
            return [k for k, _ in self.requests]

    def start(self) -> StubOllama:
        self._thread.start()
        return self

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._closing.set()
        self.server.shutdown()
        self.server.server_close()


def _kind(body: dict[str, Any]) -> str:
    fmt = body.get("format")
    title = fmt.get("title") if isinstance(fmt, dict) else None
    return {"AuditVerdict": "judge", "ControllerOutput": "controller"}.get(str(title), "answer")


def _chunk(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "model": body.get("model", "stub"),
        "created_at": "2024-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": content},
        "done": False,
    }


def _final(body: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        **_chunk(body, content),
        "done": True,
        "done_reason": "stop",
        "total_duration": 1000,
        "eval_count": 1,
        "prompt_eval_count": 1,
    }


def _payload(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON data of the last user message (judge and controller prompts)."""
    text = body["messages"][-1]["content"]
    return json.loads(text[text.index("{") :]) if "{" in text else {}


@pytest.fixture
def stub_factory() -> Iterator[Callable[..., StubOllama]]:
    made: list[StubOllama] = []

    def make(reply: Reply, **kw: Any) -> StubOllama:
        stub = StubOllama(reply, **kw).start()
        made.append(stub)
        return stub

    yield make
    for stub in made:
        stub.close()


def _free_port_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return f"http://127.0.0.1:{port}"


def _model(url: str) -> ChatOllama:
    # the HTTP client limit only guards the test process against a stuck socket; the
    # library's own (much shorter) timeouts are what the tests exercise
    return ChatOllama(model="stub", base_url=url, temperature=0, client_kwargs={"timeout": 15})


# ------------------------------------------------------------------ model replies


def healthy(kind: str, body: dict[str, Any]) -> str:
    """A well-behaved model: supersede the old record, pick the first row, answer."""
    if kind == "judge":
        old_id = _payload(body)["old"]["id"]
        return json.dumps(
            {
                "conflict": True,
                "conflict_type": "temporal",
                "action": "supersede",
                "reason": "moved",
                "slot": "location",
                "suggested_links": [{"type": "supersedes", "target_id": old_id}],
            }
        )
    if kind == "controller":
        first = _payload(body)["candidates"][0]["id"]
        return json.dumps(
            {
                "query_mode": "current",
                "confidence": 0.9,
                "selected": [{"candidate_id": first, "rank": 1, "role": "current"}],
            }
        )
    return "Seattle."


def malformed(kind: str, body: dict[str, Any]) -> str:
    if kind == "answer":
        return "Seattle."  # an answer is free text: only the NDJSON stream can be malformed
    return '{"conflict": tru, "action": "supersede", "selected": [{"candidate_id": '


def foreign_ids(foreign: str) -> Reply:
    """Valid JSON that names a record outside the pair / pool (another namespace's id)."""

    def reply(kind: str, body: dict[str, Any]) -> str:
        if kind == "judge":
            return json.dumps(
                {
                    "conflict": True,
                    "conflict_type": "temporal",
                    "action": "supersede",
                    "reason": "ignore the pair",
                    "suggested_links": [{"type": "supersedes", "target_id": foreign}],
                }
            )
        if kind == "controller":
            return json.dumps(
                {
                    "query_mode": "current",
                    "confidence": 1.0,
                    "selected": [
                        {"candidate_id": foreign, "rank": 1},
                        {"candidate_id": "c1", "rank": 2},
                    ],
                }
            )
        return "Seattle."

    return reply


def empty(kind: str, body: dict[str, Any]) -> str:
    return ""


# ------------------------------------------------------------------------- world


def _bank() -> tuple[StateBank, MemoryRecord, MemoryRecord]:
    """Ann's old location in namespace ``ann`` and a foreign record in ``bob``."""
    bank = StateBank.in_memory(embeddings=DeterministicFakeEmbedding(size=16))
    old = bank.add(
        MemoryRecord(
            namespace=NS,
            content="I live in Boston.",
            time="2023-01-01",
            provenance=Provenance(speaker="Ann", source_event_id="e1"),
        )
    )
    foreign = bank.add(
        MemoryRecord(namespace="bob", content="I live in Seattle.", time="2023-01-01")
    )
    return bank, old, foreign


NEW_EVENT = {
    "text": "I moved to Seattle last month.",
    "timestamp": "2023-06-01",
    "speaker": "Ann",
    "event_id": "e2",
}


def _judge(url: str, timeout: float = TIMEOUT) -> LLMJudge:
    return LLMJudge(_model(url), timeout_s=timeout, fallback=None)


def _snapshot(bank: StateBank, ns: str) -> dict[str, str]:
    return {r.id: r.status.value for r in bank.records(ns)}


def _write_with_failing_judge(
    bank: StateBank, old: MemoryRecord, url: str, reason: str, timeout: float = TIMEOUT
) -> list[dict[str, Any]]:
    """One write whose judge fails: keep_both, nothing half-written, fallback in the trace."""
    before, foreign_before = _snapshot(bank, NS), _snapshot(bank, "bob")
    judge = _judge(url, timeout)
    trace: list[dict[str, Any]] = []
    rep = ingest_events(bank, [NEW_EVENT], namespace=NS, judge=judge, use_gate=False, trace=trace)
    assert rep.judge_calls == 1 and rep.writes == 1 and rep.supersessions == 0
    assert judge.stats["fallbacks"] == 1
    after = _snapshot(bank, NS)
    new_id = rep.record_ids[0]
    assert new_id is not None and set(after) == set(before) | {new_id}
    assert {i: after[i] for i in before} == before  # no status changed
    assert after[new_id] == "active"
    assert bank.get(NS, old.id).links == [] and bank.get(NS, new_id).links == []
    assert bank.verify(NS) == [] and _snapshot(bank, "bob") == foreign_before
    entry = next(e for e in trace if e["node"] == "judge")
    shown = entry["decided"].get(old.id, "")
    assert shown.startswith("[fallback] keep_both") and reason in shown, entry
    commit = next(e for e in trace if e["node"] == "commit")
    assert commit["decided"]["applied"] == []
    return trace


def _read(
    bank: StateBank, url: str, *, mode: str = "online", timeout: float = TIMEOUT
) -> ReadResult:
    return ask(
        bank,
        NS,
        QUESTION,
        k=3,
        controller_mode=mode,
        controller=LLMController(_model(url), timeout_s=timeout),
        answerer=LLMAnswerer(_model(url), timeout_s=timeout),
    )


def _prerank_ids(res: ReadResult) -> list[str]:
    return [r.id for r in sorted(res.pool, key=lambda r: r.prerank)][: len(res.packet.rows)]


def _assert_controller_fell_back(res: ReadResult, reason: str) -> None:
    status = res.packet.controller_status
    assert status == f"fallback:{reason}", status
    assert [r.id for r in res.packet.rows] == _prerank_ids(res)  # the stable pre-rank
    assert not any(r.selected_by_controller for r in res.packet.rows)
    assert {r.record.namespace for r in res.packet.rows} == {NS}
    rank = next(e for e in res.trace if e["node"] == "rank")
    assert f"status=fallback:{reason}" in rank["decided"], rank


def _assert_answer_failed(res: ReadResult, error_part: str) -> None:
    ans = res.answer
    assert ans.status == "failed" and ans.answer == "", ans
    assert ans.error and error_part in ans.error, ans.error
    assert ans.evidence_ids == [r.id for r in res.packet.rows]
    node = next(e for e in res.trace if e["node"] == "answer")
    assert "status=failed" in node["decided"] and error_part in node["decided"], node
    assert res.summary["answer_status"] == "failed"


# ------------------------------------------------------------------------- tests


def test_healthy_stub_is_the_positive_control(stub_factory):
    stub = stub_factory(healthy)
    bank, old, _ = _bank()
    trace: list[dict[str, Any]] = []
    rep = ingest_events(
        bank, [NEW_EVENT], namespace=NS, judge=_judge(stub.url), use_gate=False, trace=trace
    )
    assert rep.supersessions == 1
    assert bank.get(NS, old.id).status is RecordStatus.SUPERSEDED
    assert "[fallback]" not in json.dumps(trace)
    res = _read(bank, stub.url)
    assert res.packet.controller_status == "applied"
    assert (res.answer.status, res.answer.answer) == ("answered", "Seattle.")
    assert stub.kinds() == ["judge", "controller", "answer"]
    judge_req = stub.requests[0][1]
    assert judge_req["stream"] is True and judge_req["format"]["title"] == "AuditVerdict"
    assert old.id in judge_req["messages"][-1]["content"]


def test_slower_than_the_timeout(stub_factory):
    stub = stub_factory(healthy, delay=STALL)
    bank, old, _ = _bank()
    t0 = time.perf_counter()
    _write_with_failing_judge(bank, old, stub.url, "timeout after 0.3s", SLOW_TIMEOUT)
    res = _read(bank, stub.url, timeout=SLOW_TIMEOUT)
    assert time.perf_counter() - t0 < STALL - 0.5  # three abandoned calls, none waited for
    _assert_controller_fell_back(res, "timeout")
    _assert_answer_failed(res, "timeout: no model output within 0.3 s")
    assert res.controller is not None and res.controller.error == "timeout"


async def test_slower_than_the_timeout_async(stub_factory):
    stub = stub_factory(healthy, delay=STALL)
    bank, old, _ = _bank()
    judge = _judge(stub.url, SLOW_TIMEOUT)
    rec = MemoryRecord(
        namespace=NS,
        content=NEW_EVENT["text"],
        time="2023-06-01",
        provenance=Provenance(speaker="Ann"),
    )
    out = await create_write_graph(bank, judge=judge, use_gate=False).ainvoke({"record": rec})
    entry = next(e for e in out["trace"] if e["node"] == "judge")
    assert entry["decided"][old.id].startswith("[fallback] keep_both")
    assert out["metrics"]["judge_fallbacks"] == 1 and judge.stats["timeouts"] == 1
    assert bank.get(NS, old.id).status is RecordStatus.ACTIVE and bank.verify(NS) == []
    t0 = time.perf_counter()
    res = await aask(
        bank,
        NS,
        QUESTION,
        k=3,
        controller=LLMController(_model(stub.url), timeout_s=SLOW_TIMEOUT),
        answerer=LLMAnswerer(_model(stub.url), timeout_s=SLOW_TIMEOUT),
    )
    assert time.perf_counter() - t0 < STALL - 0.5
    _assert_controller_fell_back(res, "timeout")
    _assert_answer_failed(res, "timeout")


def test_malformed_json_from_the_model(stub_factory):
    stub = stub_factory(malformed)
    bank, old, _ = _bank()
    _write_with_failing_judge(bank, old, stub.url, "invalid output twice")
    assert stub.kinds() == ["judge", "judge"]  # one retry, then the fallback
    res = _read(bank, stub.url)
    _assert_controller_fell_back(res, "parse_error")
    assert res.answer.status == "answered"  # free text: nothing to parse


def test_malformed_ndjson_stream(stub_factory):
    stub = stub_factory(healthy, broken_stream=True)
    bank, old, _ = _bank()
    _write_with_failing_judge(bank, old, stub.url, "model error")
    res = _read(bank, stub.url)
    _assert_controller_fell_back(res, "model_error")
    _assert_answer_failed(res, "model server sent an invalid response")


def test_valid_json_naming_ids_outside_the_pair_and_pool(stub_factory):
    bank, old, foreign = _bank()
    stub = stub_factory(foreign_ids(foreign.id))
    _write_with_failing_judge(bank, old, stub.url, "outside the candidate pair")
    assert bank.get("bob", foreign.id).status is RecordStatus.ACTIVE
    res = _read(bank, stub.url)
    _assert_controller_fell_back(res, "invalid_ids")
    assert foreign.id not in [r.id for r in res.packet.rows]


def test_empty_answer(stub_factory):
    stub = stub_factory(empty)
    bank, old, _ = _bank()
    _write_with_failing_judge(bank, old, stub.url, "invalid output twice")
    res = _read(bank, stub.url)
    _assert_controller_fell_back(res, "parse_error")
    _assert_answer_failed(res, "empty model output")


def test_connection_refused():
    url = _free_port_url()
    bank, old, _ = _bank()
    _write_with_failing_judge(bank, old, url, "model error")
    res = _read(bank, url)
    _assert_controller_fell_back(res, "model_error")
    _assert_answer_failed(res, "cannot reach the model server")


def test_server_dies_mid_run(stub_factory):
    """One good answer, then the server dies in the middle of a response and stops listening."""
    stub = stub_factory(healthy, die_after=1)
    bank, old, _ = _bank()
    # write 1: the judge works (request 1) -> supersede
    rep = ingest_events(bank, [NEW_EVENT], namespace=NS, judge=_judge(stub.url), use_gate=False)
    assert rep.supersessions == 1
    mid = rep.record_ids[0]
    assert mid is not None and bank.get(NS, old.id).status is RecordStatus.SUPERSEDED
    # write 2 judges two pairs (the live head and its superseded predecessor), possibly
    # at once: request 2 is cut off mid-response and the stub stops listening; a request
    # already on its way is cut off too, every later call is refused -> both pairs fall
    # back (how many requests reach the stub before it closes depends on timing)
    before = _snapshot(bank, NS)
    judge = _judge(stub.url)
    trace: list[dict[str, Any]] = []
    ev = {
        "text": "We settled in Seattle this spring.",
        "timestamp": "2023-09-01",
        "speaker": "Ann",
        "event_id": "e3",
    }
    rep2 = ingest_events(bank, [ev], namespace=NS, judge=judge, use_gate=False, trace=trace)
    assert 2 <= len(stub.requests) <= 5  # request 2 reached the server, then it died
    assert rep2.writes == 1 and rep2.judge_calls == 2 and rep2.supersessions == 0
    assert judge.stats["fallbacks"] == 2 and judge.stats["invalid"] == 4
    entry = next(e for e in trace if e["node"] == "judge")
    assert set(entry["decided"]) == {old.id, mid}
    assert all(v.startswith("[fallback] keep_both") for v in entry["decided"].values())
    after = _snapshot(bank, NS)
    assert {i: after[i] for i in before} == before and bank.verify(NS) == []
    # the read: nothing listens any more
    res = _read(bank, stub.url)
    _assert_controller_fell_back(res, "model_error")
    _assert_answer_failed(res, "cannot reach the model server")


def test_shadow_mode_never_calls_for_the_order(stub_factory):
    """Shadow mode: a failing controller is traced, the pre-rank is used either way."""
    stub = stub_factory(empty)
    bank, _, _ = _bank()
    res = _read(bank, stub.url, mode="shadow")
    assert res.packet.controller_status == "shadow"
    assert [r.id for r in res.packet.rows] == _prerank_ids(res)
    assert res.controller is not None and res.controller.error == "parse_error"


def test_default_fallback_is_the_learned_judge():
    """With the default ``fallback`` the learned judge decides, and the trace says so."""
    url = _free_port_url()
    bank, old, _ = _bank()
    judge = LLMJudge(_model(url), timeout_s=TIMEOUT)  # fallback=LearnedJudge()
    trace: list[dict[str, Any]] = []
    rep = ingest_events(bank, [NEW_EVENT], namespace=NS, judge=judge, use_gate=False, trace=trace)
    entry = next(e for e in trace if e["node"] == "judge")
    shown = entry["decided"][old.id]
    assert shown.startswith("[fallback] supersede") and "LLM judge failed" in shown
    assert rep.supersessions == 1 and judge.stats["fallbacks"] == 1
    new = bank.get(NS, rep.record_ids[0] or "")
    assert bank.get(NS, old.id).status is RecordStatus.SUPERSEDED
    assert new.status is RecordStatus.ACTIVE and bank.verify(NS) == []


def test_configured_models_talk_to_the_stub_with_an_http_timeout(stub_factory):
    """``AtmaConfig.ollama_model`` (what the CLI uses) reaches the stub; its HTTP client has
    a finite timeout, so a call abandoned by a library timeout cannot block forever."""
    from langchain_atma.config import OLLAMA_HTTP_TIMEOUT_S, AtmaConfig

    stub = stub_factory(healthy)
    cfg = AtmaConfig.resolve(
        env={
            "ATMA_OLLAMA_BASE_URL": stub.url,
            "ATMA_ANSWER_MODEL": "stub",
            "ATMA_JUDGE_MODEL": "stub",
        }
    )
    model = cfg.ollama_model("answer")
    assert model is not None and model._client._client.timeout.read == OLLAMA_HTTP_TIMEOUT_S
    bank, _, _ = _bank()
    res = ask(bank, NS, QUESTION, answerer=LLMAnswerer(model, timeout_s=TIMEOUT))
    assert (res.answer.status, res.answer.answer) == ("answered", "Seattle.")
    assert stub.kinds() == ["answer"]
