"""The ``atma`` command line.

Every command has ``--help``. Settings come from arguments, then environment
variables, then a config file (see :mod:`langchain_atma.config`). Library errors
are printed as one clear line and exit with status 2.

Example:
    >>> from langchain_atma.cli import build_parser
    >>> build_parser().parse_args(["demo"]).command
    'demo'
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_atma.errors import AtmaError, ConfigError

__all__ = ["build_parser", "main"]


def _add_bank_args(p: argparse.ArgumentParser, *, namespace: bool = True) -> None:
    g = p.add_argument_group("bank")
    g.add_argument("--path", help="embedded bank directory (ATMA_PATH; default ./.atma)")
    g.add_argument(
        "--chroma-url",
        dest="chroma_url",
        help="Chroma server URL, wins over --path (ATMA_CHROMA_URL)",
    )
    g.add_argument("--collection", help="collection name (ATMA_COLLECTION)")
    g.add_argument("--config", help="TOML config file (ATMA_CONFIG; default ./atma.toml)")
    if namespace:
        g.add_argument("--namespace", "-n", help="namespace (ATMA_NAMESPACE; default 'default')")


def _add_llm_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("models (offline defaults unless an Ollama URL and model are set)")
    g.add_argument("--ollama-base-url", dest="ollama_base_url", help="ATMA_OLLAMA_BASE_URL")
    g.add_argument("--judge-model", dest="judge_model", help="ATMA_JUDGE_MODEL")
    g.add_argument("--controller-model", dest="controller_model", help="ATMA_CONTROLLER_MODEL")
    g.add_argument("--answer-model", dest="answer_model", help="ATMA_ANSWER_MODEL")
    g.add_argument(
        "--controller-mode",
        dest="controller_mode",
        choices=["online", "shadow", "off"],
        help="ATMA_CONTROLLER_MODE",
    )


def _add_bench_model_args(p: argparse.ArgumentParser, *, judge_only: bool = False) -> None:
    g = p.add_argument_group(
        "models (offline defaults; only the parts named here use a model, model names in "
        "the environment are ignored)"
    )
    g.add_argument(
        "--ollama-base-url",
        dest="ollama_base_url",
        help="Ollama server (default ATMA_OLLAMA_BASE_URL)",
    )
    g.add_argument("--judge-model", dest="judge_model", help="e.g. qwen2.5:3b")
    if judge_only:
        return
    g.add_argument("--controller-model", dest="controller_model")
    g.add_argument(
        "--answer-model", dest="answer_model", help="answers for every method, host included"
    )


def _config(args: argparse.Namespace) -> Any:
    from langchain_atma.config import AtmaConfig

    return AtmaConfig.resolve(vars(args), config_file=getattr(args, "config", None))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``atma``."""
    parser = argparse.ArgumentParser(
        prog="atma",
        description="State-aware long-term memory (A-TMA) for LangChain/LangGraph agents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_bank_commands(sub)
    _add_model_commands(sub)
    _add_bench_commands(sub)
    return parser


def _add_bank_commands(sub: Any) -> None:
    """The bank commands: demo, ingest, ask, inspect, verify, migrate."""
    p = sub.add_parser(
        "demo",
        help="replay a built-in conversation offline and show the bank",
        description="Replay a short conversation where a person's facts change, "
        "show the bank per state chain, then ask current and historical questions.",
    )
    p.add_argument("--path", default="./.atma/demo", help="bank directory (default ./.atma/demo)")
    p.add_argument("--keep", action="store_true", help="do not wipe the demo bank first")

    p = sub.add_parser(
        "ingest",
        help="write a conversation into a bank",
        description="Ingest a LoCoMo-style JSON file or a JSONL file of "
        '{"text", "speaker", "timestamp"} objects through the write graph.',
    )
    p.add_argument("file", help="LoCoMo JSON or JSONL file")
    p.add_argument("--sample", help="LoCoMo sample id to ingest (default: all, one namespace each)")
    p.add_argument(
        "--audit-jsonl",
        dest="audit_jsonl",
        help="append one JSON line per event: what the write saw and decided "
        "(flagged earlier records, the judge's verdicts, what was committed)",
    )
    _add_bank_args(p)
    _add_llm_args(p)

    p = sub.add_parser("ask", help="ask a question: view, labelled evidence, answer, trace")
    p.add_argument("question")
    p.add_argument("--k", type=int, help="packet size (ATMA_K; default 5)")
    p.add_argument("--json", action="store_true", help="print the full trace T_q as JSON")
    p.add_argument(
        "--trace-jsonl",
        dest="trace_jsonl",
        help="append the per-node trace entries to this JSONL file",
    )
    _add_bank_args(p)
    _add_llm_args(p)

    p = sub.add_parser(
        "inspect",
        help="show state chains (timelines) of a namespace",
        description="Print every state chain with statuses and links; "
        "--html writes a self-contained page with the state graph and timelines.",
    )
    p.add_argument("--html", help="write a self-contained HTML page to this file")
    _add_bank_args(p)

    p = sub.add_parser("verify", help="check (and optionally repair) the bank invariants")
    p.add_argument("--repair", action="store_true", help="repair what can be repaired")
    _add_bank_args(p)

    p = sub.add_parser(
        "migrate",
        help="move a bank of 0.1 to one collection per namespace",
        description="Copy every namespace of a single-collection bank (0.1) "
        "into its own collection, check each copy, then empty the single "
        "collection. Resumable; run it with no writers.",
    )
    _add_bank_args(p, namespace=False)


def _add_model_commands(sub: Any) -> None:
    """The model and file commands: judge train, ltp build / validate."""
    p = sub.add_parser("judge", help="the learned state-change judge")
    jsub = p.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)
    t = jsub.add_parser(
        "train",
        help="train the judge on the corpus in training/ (seeded, "
        "CPU; needs the repository's atma-training package)",
    )
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--epochs", type=int)
    t.add_argument("--corpus", help="corpus pairs folder (default training/corpus/pairs)")
    t.add_argument("--out", help="output .onnx (default: the packaged model)")
    t.add_argument("--threads", type=int)

    p = sub.add_parser("ltp", help="LTP benchmark files")
    lsub = p.add_subparsers(dest="ltp_command", metavar="SUBCOMMAND", required=True)
    b = lsub.add_parser("build", help="build an LTP reconstruction from LoCoMo")
    b.add_argument("--locomo", required=True, help="path to locomo10.json")
    b.add_argument("--out", required=True, help="output LTP JSON file")
    b.add_argument("--profiles", type=int, default=10)
    b.add_argument("--units", type=int, default=40)
    b.add_argument("--seed", type=int, default=0)
    v = lsub.add_parser("validate", help="check an LTP file's structure")
    v.add_argument("file")


def _add_bench_commands(sub: Any) -> None:
    """The benchmarks: bench ltp / locomo / seeds / gate / judge / perf."""
    p = sub.add_parser("bench", help="benchmarks (JSON results + markdown table)")
    bsub = p.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)
    b = bsub.add_parser("ltp", help="run methods over an LTP-format file")
    b.add_argument("file")
    b.add_argument("--out", required=True)
    b.add_argument("--profiles", help="comma-separated profile ids or a count")
    b.add_argument("--k", type=int, default=5)
    b.add_argument("--methods", help="comma-separated methods (default: all)")
    b.add_argument("--plot", help="also write a PNG plot here")
    b.add_argument(
        "--details",
        help="also write one JSON line per unit and per probe here "
        "(bank step, answer, failure level, packet rows)",
    )
    _add_bench_model_args(b)
    b = bsub.add_parser("locomo", help="LoCoMo QA for host and atma")
    b.add_argument("path")
    b.add_argument("--out", required=True)
    b.add_argument("--samples", help="comma-separated sample ids or a count")
    b.add_argument("--k", type=int, default=5)
    b.add_argument("--plot", help="also write a PNG plot here")
    b.add_argument(
        "--details",
        help="also write one JSON line per method and question here (answer, scores, packet rows)",
    )
    _add_bench_model_args(b)
    b = bsub.add_parser("seeds", help="seed-search hit rates on an LTP-format file")
    b.add_argument("file")
    b.add_argument("--out", required=True)
    b.add_argument("--profiles", help="comma-separated profile ids or a count")
    b.add_argument("--k", type=int, default=5)
    b = bsub.add_parser(
        "gate",
        help="how often the judge gets to see an LTP file's changes "
        "(recall of true pairs among the judged candidates)",
    )
    b.add_argument("file")
    b.add_argument("--out", required=True)
    b.add_argument("--profiles", help="comma-separated profile ids or a count")
    b.add_argument("--candidate-k", dest="candidate_k", type=int, default=32)
    b = bsub.add_parser(
        "judge",
        help="the judge's verdicts on an LTP file's update pairs and negative pairs, in isolation",
    )
    b.add_argument("file")
    b.add_argument("--out", required=True)
    b.add_argument("--profiles", help="comma-separated profile ids or a count")
    b.add_argument(
        "--negatives",
        type=int,
        default=3,
        help="hard negatives per cue (nearest earlier dialog turns of the speaker)",
    )
    b.add_argument(
        "--dialog-pairs",
        dest="dialog_pairs",
        type=int,
        default=200,
        help="dialog turns sampled per profile, each against its nearest earlier turn",
    )
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--details", help="also write one JSON line per judged pair here")
    b.add_argument("--plot", help="also write a PNG plot here")
    b.add_argument(
        "--compare",
        nargs="+",
        metavar="RESULTS.json",
        help="earlier results of this command to plot beside this run",
    )
    _add_bench_model_args(b, judge_only=True)
    b = bsub.add_parser("perf", help="write/read path speed and memory")
    b.add_argument("--out", required=True)
    b.add_argument(
        "--sizes",
        default="1000,10000,100000",
        help="bank sizes of the read curve (add 1000000 for the 1M point)",
    )
    b.add_argument(
        "--namespaces",
        default="1,1000",
        help="tenant counts of the read curve (records spread evenly)",
    )
    b.add_argument(
        "--server",
        action="store_true",
        help="also run the curve against a local `chroma run` server",
    )
    b.add_argument(
        "--leak-queries",
        dest="leak_queries",
        type=int,
        default=10_000,
        help="queries of the memory-growth check (0 skips it)",
    )
    b.add_argument("--plot", help="also write a PNG plot here")


# ----------------------------------------------------------------------------- handlers


def _cmd_demo(args: argparse.Namespace) -> int:
    from langchain_atma.demo import run_demo

    return run_demo(sys.stdout, path=args.path, fresh=not args.keep)


def _existing_bank(cfg: Any, **kwargs: Any) -> Any:
    """Open the configured bank for a read-only command: never create a bank or namespace.

    Raises:
        BankNotFoundError: no bank there, or the namespace holds no record (the
            message lists the namespaces that do).
    """
    from langchain_atma.errors import BankNotFoundError

    bank = cfg.make_bank(create=False, **kwargs)
    if bank.count(cfg.namespace) == 0:
        names = bank.namespaces()
        raise BankNotFoundError(
            f"namespace {cfg.namespace!r} does not exist in this bank; namespaces: "
            + (", ".join(names) if names else "none (the bank is empty)")
        )
    return bank


def _cmd_inspect(args: argparse.Namespace) -> int:
    from langchain_atma.demo import render_bank

    cfg = _config(args)
    bank = _existing_bank(cfg)
    render_bank(bank, cfg.namespace, sys.stdout)
    if args.html:
        from langchain_atma.inspect_html import write_bank_html

        write_bank_html(bank, cfg.namespace, Path(args.html))
        print(f"wrote {args.html}")
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    cfg = _config(args)
    bank = cfg.make_bank(create=False, embeddings=_no_embeddings())
    with tqdm(desc="namespaces", unit="ns") as bar:
        got = bank.migrate(progress=lambda ns, n: bar.update(1))
    print(
        f"{got['namespaces']} namespace(s), {got['rows']} row(s) copied, "
        f"{got['left_over']} row(s) removed from the single collection"
    )
    problems = bank.layout_problems()
    for line in problems:
        print(f"layout: {line}")
    return 1 if problems else 0


def _cmd_verify(args: argparse.Namespace) -> int:
    cfg = _config(args)
    bank = _existing_bank(cfg, embeddings=_no_embeddings())
    if args.repair:
        for line in bank.repair_layout():
            print(f"layout: {line}")
    layout = bank.layout_problems()
    for line in layout:
        print(f"layout: {line}")
    if args.repair:
        fixed = bank.repair(cfg.namespace)
        print(f"repaired {len(fixed)} problem(s)")
        for v in fixed:
            print(f"  fixed {v.kind:<20} {v.record_id}  {v.detail}")
    problems = bank.verify(cfg.namespace)
    if not problems:
        print(f"namespace {cfg.namespace!r}: {bank.count(cfg.namespace)} records, invariants hold")
        return 1 if any(not line.startswith("single-collection") for line in layout) else 0
    for v in problems:
        print(f"{v.kind:<20} {v.record_id}  {v.detail}")
    print(f"{len(problems)} violation(s); run with --repair to fix")
    return 1


def _no_embeddings() -> Any:
    """Embeddings for commands that never embed (verify): no model is loaded."""
    from langchain_core.embeddings import Embeddings

    class _NoEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise AtmaError("this command does not embed text")

        def embed_query(self, text: str) -> list[float]:
            raise AtmaError("this command does not embed text")

    return _NoEmbeddings()


def _cmd_ingest(args: argparse.Namespace) -> int:
    from langchain_atma.ingest import ingest_file

    cfg = _config(args)
    audit = Path(args.audit_jsonl) if args.audit_jsonl else None
    if audit is not None:  # fail before anything is written, not after the ingest
        try:
            audit.open("a", encoding="utf-8").close()
        except OSError as exc:
            raise ConfigError(
                f"cannot write the audit file {audit}: {exc.strerror or exc}"
            ) from exc
    summary = ingest_file(cfg, Path(args.file), sample=args.sample, progress=True, audit_path=audit)
    print(json.dumps(summary, indent=2))
    return 0


def _cmd_ask(args: argparse.Namespace) -> int:
    from langchain_atma.ingest import ask_with_config

    cfg = _config(args)
    if args.k is not None:
        cfg = cfg.model_copy(update={"k": args.k})
    result = ask_with_config(cfg, args.question, bank=_existing_bank(cfg))
    if args.trace_jsonl:
        with open(args.trace_jsonl, "a", encoding="utf-8") as fh:
            for entry in result.trace:
                fh.write(json.dumps({"question": args.question, **entry}, default=str) + "\n")
    if args.json:
        print(json.dumps(result.summary, indent=2, default=str))
        return 0
    from langchain_atma.qa.serializer import clean_text

    # memories and answers are untrusted text: one line each, no terminal control codes
    print(f"view: {result.profile.view.value}")
    for i, row in enumerate(result.packet.rows, 1):
        label = row.label.value if row.label else "-"
        print(f"[{i}] {label:<24} {row.record.time.date()}  {clean_text(row.record.content, 160)}")
    print(f"answer: {clean_text(result.answer.answer, 4000) if result.answer.answer else ''}")
    if result.answer.error:
        print(f"answer failed: {clean_text(result.answer.error, 500)}")
    return 0


def _cmd_judge(args: argparse.Namespace) -> int:
    try:
        from atma_training.judge_train import JudgeTrainConfig, train_judge
    except ImportError as exc:
        raise ConfigError(
            "atma judge train needs the training package of the repository: from a checkout "
            "run `pip install -e training` (`make venv` does)"
        ) from exc
    fields: dict[str, Any] = {"seed": args.seed}
    for name, key in (
        ("epochs", "epochs"),
        ("threads", "threads"),
        ("corpus", "corpus"),
        ("out", "out_path"),
    ):
        if getattr(args, name) is not None:
            fields[key] = getattr(args, name)
    report = train_judge(JudgeTrainConfig(**fields), progress=True)
    print(report.model_dump_json(indent=2))
    return 0


def _cmd_ltp(args: argparse.Namespace) -> int:
    from langchain_atma.benchmarks.ltp_format import load_ltp, validate_ltp

    if args.ltp_command == "build":
        from langchain_atma.benchmarks.ltp_build import build_ltp, write_ltp

        ltp = build_ltp(args.locomo, profiles=args.profiles, units=args.units, seed=args.seed)
        write_ltp(ltp, args.out)
        n_probes = sum(len(p.probes) for p in ltp.profiles)
        print(f"wrote {args.out}: {len(ltp.profiles)} profiles, {n_probes} probes")
        return 0
    problems = validate_ltp(load_ltp(args.file))
    for msg in problems:
        print(msg)
    print("valid" if not problems else f"{len(problems)} problem(s)")
    return 0 if not problems else 1


def _cmd_bench(args: argparse.Namespace) -> int:
    if args.bench_command == "ltp":
        from langchain_atma.benchmarks.ltp_bench import main as ltp_main

        return ltp_main(args)
    if args.bench_command == "locomo":
        from langchain_atma.benchmarks.locomo_bench import main as locomo_main

        return locomo_main(args)
    if args.bench_command == "seeds":
        from langchain_atma.benchmarks.seed_bench import main as seeds_main

        return seeds_main(args)
    if args.bench_command == "gate":
        from langchain_atma.benchmarks.gate_bench import main as gate_main

        return gate_main(args)
    if args.bench_command == "judge":
        from langchain_atma.benchmarks.judge_bench import main as judge_main

        return judge_main(args)
    from langchain_atma.benchmarks.perf import main as perf_main

    return perf_main(args)


_ONE_QUERY = frozenset({"ask", "inspect", "verify"})
"""Commands that embed at most one text: one thread if the encoder falls back to torch."""

_HANDLERS = {
    "demo": _cmd_demo,
    "inspect": _cmd_inspect,
    "verify": _cmd_verify,
    "migrate": _cmd_migrate,
    "ingest": _cmd_ingest,
    "ask": _cmd_ask,
    "judge": _cmd_judge,
    "ltp": _cmd_ltp,
    "bench": _cmd_bench,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``atma`` console script."""
    args = build_parser().parse_args(argv)
    if args.command in _ONE_QUERY:
        # the default encoder runs ONNX on one thread; should it fall back to torch,
        # a second torch thread only adds contention (0.3-0.5 s against 15 ms per
        # embedding on a busy 2-core machine)
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        return _HANDLERS[args.command](args)
    except AtmaError as exc:
        print(f"atma: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("atma: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
