"""``atma bench perf``: speed and memory of the write and read paths.

Write path (on a fresh embedded bank, real MiniLM encoder, the learned judge):

* ``ingest_turns_per_s`` — end-to-end ingest throughput of a synthetic chat
  (encode + propose + judge + commit);
* ``judge_ms_per_write_p50`` — median milliseconds the judge node took per write
  of that ingest (0 for a write that judged nothing),
  ``judge_ms_per_judged_write_p50`` the same over writes that judged a pair, and
  ``judge_share_of_ingest`` the judge's share of the ingest's wall time;
* ``judge_ms_per_pair`` — the learned judge alone, median milliseconds per pair
  over calls of 12 pairs (the gate's ``max_judged``; each pair runs alone);
* ``judge_calls_per_write`` — from the same ingest;
* ``view_ms_per_question`` — the state model's view head on one question, median
  (the profiler caches answers per question, so ``overhead_ms`` below mostly
  reads the cache for the benchmark's repeated questions).

* ``ingest_turns_per_s_no_judge`` — the same ingest with the judge's time taken
  out (encode, gate, host reads and the commit);
* ``host_calls_per_write`` — host protocol calls (round trips) per ingested turn,
  with the count per operation in ``host_calls``.

Read path, the *cost curve* (``curve``: one row per mode, tenant count and size;
sizes 1k, 10k, 100k by default, 1M on request; records spread evenly over 1 and
over 1,000 namespaces, each with its own collection; embedded, and with
``--server`` a local ``chroma run`` server too; about 5% of the records are
superseded by the next record of their namespace):

* ``seed_ms`` — the host seed search (Chroma top-``seed_k``, rows to records);
* ``overhead_ms`` — the overlay's own work on top of it: profile, the
  speaker-aware rewrite (name candidates and cached speaker checks), relation
  and neighbour expansion, dedup / pre-rank, offline controller, labels and
  serialization. When a question names a speaker, the rewrite is embedded
  *instead of* the question (one embedding either way); that encoder call is
  reported as ``rewrite_embed_ms`` and, like the plain question's embedding,
  is not part of the overhead;
* ``retrieve_ms`` — the two together (query vectors are precomputed so the
  encoder is not timed), each query to a random namespace;
* ``rss_mb`` and ``disk_bytes_per_record`` (embedded) after loading each size.

Flat keys: ``retrieve_ms_p95_100k`` (one namespace, embedded),
``retrieve_ms_p95_1m`` (1,000 namespaces, embedded; when 1M is measured), the
``_server`` variants, ``overhead_ms_p50`` (one namespace, largest size),
``overhead_ms_p50_max`` (over the whole curve), ``rss_growth_mb_10k_queries``
(resident memory growth over 10,000 queries after 1,000 warm-up queries) and
``peak_rss_mb``.

Bulk records use *precomputed* embeddings (real MiniLM vectors of 1,000 base
sentences, each perturbed by small seeded noise): encoding 100k texts would
take far longer than the measurement itself.

Example:
    >>> from langchain_atma.benchmarks.perf import percentile
    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from langchain_atma.errors import ConfigError
from langchain_atma.retrieval.packets import DEFAULT_K, DEFAULT_SEED_K

__all__ = ["main", "percentile", "run_perf"]

_PEOPLE = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hanneke", "Ivo", "Jun"]
_FACTS = [
    "I live in {city} now.",
    "I work as a {job} these days.",
    "My dog is called {pet}.",
    "I started learning {hobby} last month.",
    "I really love {food}.",
    "I moved to {city} for the new job.",
    "I quit being a {job}.",
    "We adopted a puppy named {pet}.",
    "My commute is {n} minutes each way.",
    "I run {n} kilometres every week.",
]
_CHAT = [
    "The weather was lovely this weekend, we went to the park.",
    "Did you watch the game last night?",
    "I'm so tired after this week.",
    "That sounds amazing, tell me more!",
    "My sister visited us on Sunday.",
    "I tried a new recipe for dinner and it worked out.",
    "We should grab coffee soon.",
    "The traffic this morning was terrible.",
    "I finished a great book about space exploration.",
    "Happy birthday to your mom!",
]
_VALUES = {
    "city": ["Boston", "Seattle", "Lisbon", "Osaka", "Ashcombe", "Leeds", "Quito", "Perth"],
    "job": ["nurse", "teacher", "chef", "pilot", "designer", "lawyer", "baker", "medic"],
    "pet": ["Rex", "Milo", "Luna", "Nimbus", "Nesbit", "Olwen", "Barnaby", "Pipkin"],
    "hobby": ["pottery", "salsa", "chess", "climbing", "sailing", "guitar", "yoga"],
    "food": ["sushi", "tacos", "ramen", "falafel", "paella", "curry", "pho"],
}
_QUESTIONS = [
    "Where does {p} live now?",
    "What did {p} do for work before?",
    "What is {p}'s dog called?",
    "Which hobby did {p} pick up recently?",
    "What food does {p} love?",
    "Where did {p} live originally?",
    "How long is {p}'s commute these days?",
    "What changed in {p}'s job?",
    "Tell me about {p}'s weekend.",
    "What book did {p} read?",
]


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100)."""
    if not values:
        return 0.0
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def _fill(template: str, rng: random.Random) -> str:
    out = template
    for key, vals in _VALUES.items():
        out = out.replace("{" + key + "}", rng.choice(vals))
    return out.replace("{n}", str(rng.randint(5, 90)))


def _base_texts(rng: random.Random, n: int = 1000) -> list[str]:
    texts = []
    for i in range(n):
        if i % 3 == 0:
            texts.append(rng.choice(_CHAT))
        else:
            texts.append(_fill(rng.choice(_FACTS), rng))
    return texts


def _chat_events(rng: random.Random, n: int) -> list[dict[str, Any]]:
    events = []
    t0 = 1_700_000_000
    for i in range(n):
        speaker = "Ana" if i % 2 == 0 else "Ben"
        text = (
            _fill(rng.choice(_FACTS), rng)
            if speaker == "Ana" and rng.random() < 0.4
            else rng.choice(_CHAT)
        )
        events.append(
            {"event_id": f"perf-{i}", "timestamp": t0 + 60 * i, "speaker": speaker, "text": text}
        )
    return events


def _bulk_load(
    bank: Any,
    spaces: list[str],
    start: int,
    stop: int,
    base_texts: list[str],
    base_vecs: np.ndarray,
    rng: np.random.Generator,
    chunk: int = 2000,
) -> None:
    """Write records [start, stop) directly as host rows (precomputed vectors).

    Record ``j`` belongs to namespace ``spaces[j % len(spaces)]``; every 20th record of
    a namespace is superseded by that namespace's next record. Each namespace's new
    records are written together, at most ``chunk`` rows per call, so every call goes
    to one collection.
    """
    from langchain_atma.text import cues

    # the flag the write path stores (so the seed search's demotion runs as on a real bank)
    states_fact = [cues(t).statement for t in base_texts]
    n_ns = len(spaces)
    for i in range(n_ns):
        first = start + (i - start) % n_ns  # the namespace's first record in the range
        js = range(first, stop, n_ns)
        for lo in range(0, len(js), chunk):
            bank.host.upsert(
                [
                    _bulk_row(j, spaces, stop, base_texts, base_vecs, states_fact, rng)
                    for j in js[lo : lo + chunk]
                ]
            )


def _bulk_row(
    j: int,
    spaces: list[str],
    stop: int,
    base_texts: list[str],
    base_vecs: np.ndarray,
    states_fact: list[bool],
    rng: np.random.Generator,
) -> Any:
    from langchain_atma.bank.bank import _record_to_row
    from langchain_atma.records import Link, LinkType, MemoryRecord, Provenance, RecordStatus

    n_ns = len(spaces)
    base = j % len(base_texts)
    vec = base_vecs[base] + rng.normal(scale=0.02, size=base_vecs.shape[1])
    vec = (vec / np.linalg.norm(vec)).astype(np.float32)
    links: list[Link] = []
    status = RecordStatus.ACTIVE
    nth = j // n_ns  # position inside its namespace
    if nth % 20 == 0 and j + n_ns < stop:  # superseded by the namespace's next record
        status = RecordStatus.SUPERSEDED
        links = [Link(type=LinkType.SUPERSEDED_BY, target=f"r{j + n_ns}")]
    elif nth % 20 == 1:
        links = [Link(type=LinkType.SUPERSEDES, target=f"r{j - n_ns}")]
    rec = MemoryRecord(
        id=f"r{j}",
        namespace=spaces[j % n_ns],
        content=f"{base_texts[base]} (#{j})",
        time=1_600_000_000 + j,
        status=status,
        links=links,
        seq=j,
        slot=None,
        states_fact=states_fact[base],
        # the question names are speakers, so the speaker-aware
        # rewrite (an extra search) runs and is timed as overhead
        provenance=Provenance(speaker=_PEOPLE[j % len(_PEOPLE)]),
    )
    return _record_to_row(rec, vec.tolist(), 1)


def _rss_mb() -> float:
    """Current resident memory of this process, MB (peak where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


class _Server:
    """A ``chroma run`` server on a free local port, for the server-mode curve."""

    def __init__(self, path: Path) -> None:
        import socket
        import subprocess
        import sys

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        chroma = Path(sys.executable).with_name("chroma")
        self.proc = subprocess.Popen(
            [
                str(chroma),
                "run",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--path",
                str(path),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise ConfigError("the chroma server did not start within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def _time_queries(
    retrievers: dict[str, Any],
    spaces: list[str],
    qtexts: list[str],
    qvecs: np.ndarray,
    rng: random.Random,
) -> dict[str, float]:
    """Seed, overlay and total milliseconds of queries spread over the namespaces."""
    from langchain_atma.qa.serializer import serialize_packet

    picks = [rng.choice(spaces) for _ in qtexts]
    for ns, q, v in zip(picks[:20], qtexts[:20], qvecs[:20], strict=False):  # warm up
        retrievers[ns].retrieve(q, query_vector=v)
    seed_ms, over_ms, total_ms, embed_ms = [], [], [], []
    for ns, q, v in zip(picks, qtexts, qvecs, strict=True):
        res = retrievers[ns].retrieve(q, query_vector=v)
        a = time.perf_counter()
        serialize_packet(res.packet.rows)
        ser = (time.perf_counter() - a) * 1000.0
        t = res.timings_ms
        over = t["profile"] + t.get("rewrite", 0.0) + t["expand"] + t["rank"] + t["label"] + ser
        seed_ms.append(t["seed"])
        embed_ms.append(t.get("embed", 0.0))
        over_ms.append(over)
        total_ms.append(t["seed"] + over)
    return {
        "seed_ms_p50": round(percentile(seed_ms, 50), 3),
        "seed_ms_p95": round(percentile(seed_ms, 95), 3),
        "rewrite_embed_ms_p50": round(percentile(embed_ms, 50), 3),
        "overhead_ms_p50": round(percentile(over_ms, 50), 3),
        "overhead_ms_p95": round(percentile(over_ms, 95), 3),
        "retrieve_ms_p50": round(percentile(total_ms, 50), 3),
        "retrieve_ms_p95": round(percentile(total_ms, 95), 3),
    }


def read_curve(
    emb: Any,
    *,
    sizes: list[int],
    namespaces: int,
    server: bool,
    queries: int,
    workdir: Path,
    seed: int = 0,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Read-path latency, memory and disk by bank size for one layout of tenants.

    Records are spread evenly over ``namespaces`` namespaces (sizes are cumulative:
    one bank grows from the smallest size to the largest); each query goes to a
    random namespace. Query vectors are precomputed, so the encoder is not timed.

    Returns:
        One row per size: the timings of :func:`_time_queries`, ``rss_mb`` and, for
        an embedded bank, ``disk_bytes_per_record``.
    """
    from tqdm.auto import tqdm

    from langchain_atma.bank import StateBank
    from langchain_atma.retrievers import AtmaRetriever

    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    base_texts = _base_texts(rng, 1000)
    base_vecs = np.asarray(emb.encode(base_texts), dtype=np.float32)
    qtexts = [
        q.replace("{p}", rng.choice(_PEOPLE))
        for q in (rng.choice(_QUESTIONS) for _ in range(queries))
    ]
    qvecs = np.asarray(emb.encode(qtexts), dtype=np.float32)
    spaces = [f"tenant-{i:05d}" for i in range(namespaces)]
    path = workdir / f"read-{namespaces}-{'server' if server else 'embedded'}"
    srv = _Server(path) if server else None
    try:
        bank = (
            StateBank(url=srv.url, embeddings=emb)
            if srv is not None
            else StateBank(path=path, embeddings=emb)
        )
        retrievers = {
            ns: AtmaRetriever(bank=bank, namespace=ns, k=DEFAULT_K, seed_k=DEFAULT_SEED_K)
            for ns in spaces
        }
        rows: list[dict[str, Any]] = []
        loaded = 0
        label = f"{namespaces} ns, {'server' if server else 'embedded'}"
        for size in tqdm(sizes, desc=label, disable=not progress):
            _bulk_load(bank, spaces, loaded, size, base_texts, base_vecs, nrng)
            loaded = size
            row: dict[str, Any] = {
                "size": size,
                "namespaces": namespaces,
                "mode": "server" if server else "embedded",
            }
            row.update(_time_queries(retrievers, spaces[:size], qtexts, qvecs, rng))
            row["rss_mb"] = _rss_mb()
            if srv is None:
                row["disk_bytes_per_record"] = round(_disk_bytes(path) / size, 1)
            rows.append(row)
        return rows
    finally:
        if srv is not None:
            srv.stop()


def _query_leak(emb: Any, workdir: Path, n: int = 10_000) -> float:
    """RSS growth (MB) over ``n`` queries after 1,000 warm-up queries (a leak check)."""
    from langchain_atma.bank import StateBank
    from langchain_atma.retrievers import AtmaRetriever

    rng = random.Random(1)
    base_texts = _base_texts(rng, 200)
    vecs = np.asarray(emb.encode(base_texts), dtype=np.float32)
    bank = StateBank(path=workdir / "leak", embeddings=emb)
    _bulk_load(bank, ["leak"], 0, 5000, base_texts, vecs, np.random.default_rng(1))
    retriever = AtmaRetriever(bank=bank, namespace="leak", k=DEFAULT_K, seed_k=DEFAULT_SEED_K)
    qs = [q.replace("{p}", rng.choice(_PEOPLE)) for q in _QUESTIONS]
    qv = np.asarray(emb.encode(qs), dtype=np.float32)
    noise = np.random.default_rng(2)

    def one(i: int) -> None:
        v = qv[i % len(qs)] + noise.normal(scale=0.01, size=qv.shape[1])
        # a distinct question text each time, so no cache answers it
        retriever.retrieve(f"{qs[i % len(qs)]} ({i})", query_vector=v.astype(np.float32))

    for i in range(1000):
        one(i)
    before = _rss_mb()
    for i in range(n):
        one(1000 + i)
    return round(_rss_mb() - before, 1)


_HOST_OPS = frozenset(
    {
        "upsert",
        "get",
        "query",
        "scan",
        "delete",
        "count",
        "journal_put",
        "journal_delete",
        "journal_pending",
    }
)


class _CountingHost:
    """A host proxy that counts the calls of the host protocol (round trips)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name not in _HOST_OPS:
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return attr(*args, **kwargs)

        return counted


def _write_path(
    emb: Any, rng: random.Random, turns: int, workdir: Path, progress: bool
) -> dict[str, Any]:
    """Ingest throughput, the judge's share and host round trips per write."""
    from langchain_atma.bank import ChromaHost, StateBank
    from langchain_atma.bank.learned_judge import default_judge
    from langchain_atma.bank.write_graph import ingest_events

    host = _CountingHost(ChromaHost.persistent(workdir / "write"))
    bank = StateBank(host=host, embeddings=emb)
    events = _chat_events(rng, turns)
    emb.encode(["warm up"])
    judge = default_judge()
    judge.model.pair_probabilities([("warm up", "the model")])
    host.calls.clear()
    trace: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    rep = ingest_events(bank, events, namespace="perf", progress=progress, trace=trace)
    dt = time.perf_counter() - t0
    judge_s = rep.seconds.get("judge", 0.0)
    judged = [float(e["ms"]) for e in trace if e.get("node") == "judge"]
    writes = rep.writes + rep.duplicates
    per_write = judged + [0.0] * max(0, writes - len(judged))
    return {
        "ingest_turns_per_s": round(len(events) / dt, 2),
        "ingest_turns_per_s_no_judge": round(len(events) / max(dt - judge_s, 1e-9), 2),
        "judge_calls_per_write": round(rep.judge_calls_per_write, 4),
        "judge_ms_per_write_p50": round(percentile(per_write, 50), 3),
        "judge_ms_per_judged_write_p50": round(percentile(judged, 50), 3) if judged else 0.0,
        "judge_share_of_ingest": round(judge_s / dt, 4),
        "host_calls_per_write": round(sum(host.calls.values()) / max(len(events), 1), 2),
        "host_calls": dict(sorted(host.calls.items())),
        "ingest": rep.model_dump(exclude={"record_ids"}),
        "judge_ms_per_pair": _judge_ms_per_pair(judge, _base_texts(rng, 64)),
        "view_ms_per_question": _view_ms(judge.model, rng),
    }


def _pick(
    curve: list[dict[str, Any]], mode: str, namespaces: int, size: int
) -> dict[str, Any] | None:
    return next(
        (
            r
            for r in curve
            if r["mode"] == mode and r["namespaces"] == namespaces and r["size"] == size
        ),
        None,
    )


def run_perf(
    *,
    sizes: list[int],
    namespaces: tuple[int, ...] = (1, 1000),
    server: bool = False,
    queries: int = 200,
    ingest_turns: int = 300,
    leak_queries: int = 10_000,
    seed: int = 0,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the perf benchmark and return the results dict.

    Args:
        sizes: bank sizes of the read-path curve (records, cumulative).
        namespaces: tenant counts of the curve (records spread evenly over them).
        server: also run every curve against a local ``chroma run`` server.
        queries: timed queries per point of the curve.
        ingest_turns: turns of the write-path measurement.
        leak_queries: queries of the memory-growth check (0 skips it).
        seed: seeds everything random.
        progress: show progress bars.
    """
    from langchain_atma.embeddings import default_embeddings

    if not sizes or any(s < 10 for s in sizes):
        raise ConfigError("sizes must be integers >= 10")
    if not namespaces or any(n < 1 for n in namespaces):
        raise ConfigError("namespaces must be integers >= 1")
    sizes = sorted(sizes)
    rng = random.Random(seed)
    emb = default_embeddings()
    tmp = Path(tempfile.mkdtemp(prefix="atma-perf-"))
    try:
        out = _write_path(emb, rng, ingest_turns, tmp, progress)
        curve: list[dict[str, Any]] = []
        for mode in ("embedded", "server") if server else ("embedded",):
            for n_ns in sorted(namespaces):
                curve += read_curve(
                    emb,
                    sizes=sizes,
                    namespaces=n_ns,
                    server=mode == "server",
                    queries=queries,
                    workdir=tmp,
                    seed=seed,
                    progress=progress,
                )
        one = [r for r in curve if r["mode"] == "embedded" and r["namespaces"] == min(namespaces)]
        largest = one[-1]
        out["overhead_ms_p50"] = largest["overhead_ms_p50"]
        out["overhead_ms_p95"] = largest["overhead_ms_p95"]
        out[f"retrieve_ms_p95_{_short(sizes[-1])}"] = largest["retrieve_ms_p95"]
        for key, mode, n_ns, size in (
            ("retrieve_ms_p95_100k", "embedded", 1, 100_000),
            ("retrieve_ms_p95_100k_server", "server", 1, 100_000),
            ("retrieve_ms_p95_1m", "embedded", 1000, 1_000_000),
            ("retrieve_ms_p95_1m_server", "server", 1000, 1_000_000),
        ):
            row = _pick(curve, mode, n_ns, size)
            if row is not None:
                out[key] = row["retrieve_ms_p95"]
        out["overhead_ms_p50_max"] = max(r["overhead_ms_p50"] for r in curve)
        out["curve"] = curve
        out["read"] = {
            "sizes": sizes,
            "queries": queries,
            "by_size": {str(r["size"]): r for r in one},
        }
        if leak_queries:
            out["rss_growth_mb_10k_queries"] = _query_leak(emb, tmp, leak_queries)
        out.update(_ask_startup(tmp / "demo"))
        out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        out["config"] = {
            "sizes": sizes,
            "namespaces": sorted(namespaces),
            "server": server,
            "queries": queries,
            "ingest_turns": ingest_turns,
            "leak_queries": leak_queries,
            "seed": seed,
            "host": "Chroma, one collection per namespace",
            "seed_k": 10,
            "k": 5,
            "machine": f"{platform.machine()} {os.cpu_count()} cores, "
            f"Python {platform.python_version()}",
        }
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ask_startup(demo_path: Path, repeats: int = 3, warm: int = 30) -> dict[str, float]:
    """``atma ask`` on the demo bank: a fresh process (cold), and asks in one process (warm).

    Cold is the wall time of ``atma ask`` as a user runs it (imports, bank, models,
    the answer), the median of ``repeats`` runs. Warm is the median of ``warm``
    in-process ``ask`` calls after the first (the default encoder runs its ONNX graph
    on one thread, as in ``atma ask``).
    """
    import io
    import subprocess
    import sys

    from langchain_atma.bank import StateBank
    from langchain_atma.demo import DEMO_QUESTIONS, run_demo
    from langchain_atma.retrieval.read_graph import ask

    run_demo(io.StringIO(), path=demo_path)
    cli = Path(sys.executable).with_name("atma")
    argv = [str(cli), "ask", DEMO_QUESTIONS[0], "--path", str(demo_path), "-n", "maya"]
    cold = []
    for _ in range(repeats):
        a = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, timeout=300)
        cold.append(time.perf_counter() - a)
    bank = StateBank(path=demo_path)
    ask(bank, "maya", DEMO_QUESTIONS[0])
    times = []
    for i in range(warm):
        q = DEMO_QUESTIONS[i % len(DEMO_QUESTIONS)] + " " * (i // len(DEMO_QUESTIONS))
        a = time.perf_counter()
        ask(bank, "maya", q)
        times.append((time.perf_counter() - a) * 1000.0)
    return {
        "cli_ask_cold_s": round(percentile(cold, 50), 2),
        "ask_warm_ms_p50": round(percentile(times, 50), 2),
    }


def _judge_ms_per_pair(judge: Any, texts: list[str], batch: int = 12, rounds: int = 40) -> float:
    """Median milliseconds per pair of the learned judge, over calls of ``batch`` pairs."""
    pairs = [(texts[i], texts[(i + 1) % len(texts)]) for i in range(len(texts))]
    per_pair = []
    for r in range(rounds):
        chunk = [pairs[(r * batch + j) % len(pairs)] for j in range(batch)]
        a = time.perf_counter()
        judge.model.pair_probabilities(chunk)
        per_pair.append((time.perf_counter() - a) * 1000.0 / batch)
    return round(percentile(per_pair, 50), 3)


def _view_ms(model: Any, rng: random.Random, n: int = 60) -> float:
    """Median milliseconds of the view head on one question (no profiler cache)."""
    times = []
    for _ in range(n):
        q = rng.choice(_QUESTIONS).replace("{p}", rng.choice(_PEOPLE))
        a = time.perf_counter()
        model.view_probabilities([q])
        times.append((time.perf_counter() - a) * 1000.0)
    return round(percentile(times, 50), 3)


def _short(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def main(args: argparse.Namespace) -> int:
    """CLI entry: ``atma bench perf --out RESULTS.json``."""
    try:
        sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    except ValueError as exc:
        raise ConfigError(f"--sizes must be comma-separated integers: {exc}") from exc
    try:
        spaces = tuple(int(s) for s in str(args.namespaces).split(",") if s.strip())
    except ValueError as exc:
        raise ConfigError(f"--namespaces must be comma-separated integers: {exc}") from exc
    res = run_perf(
        sizes=sizes,
        namespaces=spaces,
        server=bool(args.server),
        progress=True,
        leak_queries=int(args.leak_queries),
    )
    Path(args.out).write_text(json.dumps(res, indent=2), encoding="utf-8")
    keys = [k for k in res if k not in ("read", "config", "ingest", "curve", "host_calls")]
    print("| metric | value |\n|---|---:|")
    for key in keys:
        print(f"| {key} | {res[key]} |")
    print(f"\nwrote {args.out}")
    if getattr(args, "plot", None):
        from langchain_atma.benchmarks.plots import plot_perf

        plot_perf(res, Path(args.plot))
        print(f"wrote {args.plot}")
    return 0
