from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import langchain_atma
from langchain_atma.cli import build_parser, main
from langchain_atma.config import AtmaConfig
from langchain_atma.errors import AtmaError, ConfigError


def test_every_public_name_resolves():
    for name in langchain_atma.__all__:
        assert getattr(langchain_atma, name) is not None, name
    with pytest.raises(AttributeError):
        langchain_atma.NotAThing  # noqa: B018


def test_the_three_export_lists_agree():
    """``__all__``, the lazy table and the TYPE_CHECKING imports name the same things.

    Type checkers and ruff need the literal ``__all__`` and the imports; the lazy
    table maps each name to its module. They must never drift apart.
    """
    import ast

    tree = ast.parse(Path(langchain_atma.__file__).read_text(encoding="utf-8"))
    block = next(
        n
        for n in tree.body
        if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    typed = {
        a.asname or a.name: n.module
        for n in block.body
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    }
    assert typed == langchain_atma._EXPORTS
    assert sorted(langchain_atma.__all__) == sorted(["__version__", *typed])


def test_py_typed_shipped():
    assert (Path(langchain_atma.__file__).parent / "py.typed").exists()


@pytest.mark.parametrize("module", ["bank", "retrieval", "qa", "benchmarks"])
def test_three_levels_are_subpackages(module):
    assert importlib.import_module(f"langchain_atma.{module}").__doc__


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["demo"],
        ["ingest"],
        ["ask"],
        ["inspect"],
        ["verify"],
        ["judge", "train"],
        ["ltp", "build"],
        ["ltp", "validate"],
        ["bench", "ltp"],
        ["bench", "locomo"],
        ["bench", "perf"],
        ["bench", "seeds"],
        ["bench", "gate"],
    ],
)
def test_help_everywhere(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([*argv, "--help"])
    assert exc.value.code == 0
    assert "usage: atma" in capsys.readouterr().out


def test_config_precedence_and_errors(tmp_path):
    cfg_file = tmp_path / "atma.toml"
    cfg_file.write_text('[atma]\nk = 4\nseed_k = 20\ncontroller_mode = "shadow"\n')
    cfg = AtmaConfig.resolve({"k": 2}, env={"ATMA_SEED_K": "30"}, config_file=cfg_file)
    assert (cfg.k, cfg.seed_k, cfg.controller_mode) == (2, 30, "shadow")
    with pytest.raises(ConfigError, match="unknown"):
        AtmaConfig.resolve(env={}, config_file=_write(tmp_path / "b.toml", "bogus = 1\n"))
    with pytest.raises(ConfigError):
        AtmaConfig.resolve({"k": 0}, env={})
    with pytest.raises(ConfigError):
        AtmaConfig.resolve(env={}, config_file=tmp_path / "missing.toml")
    assert cfg.ollama_model("judge") is None  # offline unless URL and model are set


def _write(path, text):
    path.write_text(text)
    return path


def test_cli_reports_library_errors_as_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "ok"}\n\xff\xfe\n')
    code = main(["ingest", str(bad), "--path", str(tmp_path / "bank")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("atma: error:") and "UTF-8" in err
    assert issubclass(ConfigError, AtmaError)


def test_relative_bank_path_in_a_config_file_resolves_against_its_folder(tmp_path, monkeypatch):
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    cfg_file = _write(conf_dir / "atma.toml", 'path = "banks/main"\n')
    monkeypatch.chdir(tmp_path)
    cfg = AtmaConfig.resolve(env={}, config_file=cfg_file)
    assert Path(cfg.path) == conf_dir.resolve() / "banks" / "main"
    absolute = _write(conf_dir / "abs.toml", f'path = "{(tmp_path / "x").as_posix()}"\n')
    assert Path(AtmaConfig.resolve(env={}, config_file=absolute).path) == tmp_path / "x"


def test_read_only_commands_never_create_a_bank_or_namespace(tmp_path, capsys, fake_embeddings):
    missing = tmp_path / "nonexistent-bank"
    for argv in (["ask", "Where do I live?"], ["inspect"], ["verify"]):
        assert main([*argv, "--path", str(missing)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("atma: error:") and "no bank at" in err
        assert not missing.exists()

    from langchain_atma.bank import StateBank
    from langchain_atma.records import MemoryRecord

    real = tmp_path / "bank"
    bank = StateBank(path=real, embeddings=fake_embeddings)
    bank.commit(MemoryRecord(namespace="maya", content="I live in Boston.", time="2024-01-08"), [])
    del bank
    code = main(["ask", "Where do I live?", "--path", str(real), "--namespace", "mya"])
    err = capsys.readouterr().err
    assert code == 2 and "namespace 'mya' does not exist" in err and "maya" in err
    assert StateBank(path=real, embeddings=fake_embeddings, create=False).namespaces() == ["maya"]


def test_bank_rejects_embeddings_that_name_no_model(tmp_path):
    from langchain_atma.bank import StateBank

    for bad in ("defualt", tmp_path / "no-such-model", 42):
        with pytest.raises(ConfigError, match="embeddings"):
            StateBank(path=tmp_path / "b", embeddings=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "b").exists()
    assert type(StateBank.in_memory(embeddings="default").embeddings).__name__ == (
        "MiniLMEmbeddings"
    )


def test_ingest_accepts_a_json_array_of_events_and_is_idempotent(tmp_path, capsys):
    import json

    conv = tmp_path / "conv.json"
    conv.write_text(
        json.dumps(
            [
                {
                    "text": "I keep two hens in the yard.",
                    "speaker": "Ines",
                    "timestamp": "2024-03-01T08:00:00",
                },
                {
                    "text": "The fox got both hens, the coop is empty now.",
                    "speaker": "Ines",
                    "timestamp": "2024-05-02T08:00:00",
                },
            ]
        ),
        encoding="utf-8",
    )
    bank = str(tmp_path / "bank")
    assert main(["ingest", str(conv), "--path", bank, "-n", "ines"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["ingest", str(conv), "--path", bank, "-n", "ines"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert (first["ines"]["writes"], first["ines"]["idempotent"]) == (2, 0)
    assert (second["ines"]["writes"], second["ines"]["idempotent"]) == (0, 2)
    from langchain_atma.bank import StateBank

    assert StateBank(path=bank, create=False).count("ines") == 2
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps([{"text": "The library opens late on Thursdays.", "speaker": "Ines"}]),
        encoding="utf-8",
    )
    assert main(["ingest", str(other), "--path", bank, "-n", "ines"]) == 0  # line 1, new id
    capsys.readouterr()
    assert StateBank(path=bank, create=False).count("ines") == 3


def test_bank_and_retriever_reprs_are_short(tmp_path, fake_embeddings):
    from langchain_atma.bank import StateBank
    from langchain_atma.retrievers import AtmaRetriever

    bank = StateBank(path=tmp_path / "b", embeddings=fake_embeddings)
    assert repr(bank) == (
        f"StateBank('chroma-path:{(tmp_path / 'b').resolve()}/atma_memory', "
        "embeddings='DeterministicFakeEmbedding')"
    )
    text = repr(AtmaRetriever(bank=bank, namespace="maya", k=3))
    assert text.startswith("AtmaRetriever(bank=StateBank(") and "namespace='maya', k=3" in text
    assert "object at 0x" not in text and len(text) < 250


def test_every_docstring_example_runs():
    """The examples in the docs of every public module are doctests: they must pass."""
    import doctest
    import pkgutil

    failed, tried = 0, 0
    for info in pkgutil.walk_packages(langchain_atma.__path__, "langchain_atma."):
        module = importlib.import_module(info.name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
        failed, tried = failed + result.failed, tried + result.attempted
    assert tried > 50 and failed == 0


def test_loading_the_encoder_prints_no_progress_bar(tmp_path):
    import os
    import subprocess
    import sys

    code = (
        "from langchain_atma.embeddings import MiniLMEmbeddings\n"
        "MiniLMEmbeddings().embed_query('warm up')\n"
        "from transformers.utils import logging\n"
        "assert logging.is_progress_bar_enabled()  # restored for the user's own use\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Loading weights" not in proc.stderr and "it/s" not in proc.stderr


def test_a_bad_item_of_an_event_array_is_named_and_nothing_is_written(tmp_path, capsys):
    import json

    conv = tmp_path / "conv.json"
    conv.write_text(
        json.dumps([{"text": "I keep two hens.", "timestamp": "2024-03-01"}, {"speaker": "Ines"}]),
        encoding="utf-8",
    )
    assert main(["ingest", str(conv), "--path", str(tmp_path / "bank"), "-n", "ines"]) == 2
    err = capsys.readouterr().err
    assert "conv.json:2: 'text' must be a non-empty string" in err
    from langchain_atma.bank import StateBank

    with pytest.raises(AtmaError, match="no bank"):
        StateBank(path=tmp_path / "bank", create=False)
