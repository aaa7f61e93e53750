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


def test_py_typed_shipped():
    assert (Path(langchain_atma.__file__).parent / "py.typed").exists()


@pytest.mark.parametrize("module", ["bank", "retrieval", "qa", "benchmarks"])
def test_three_levels_are_subpackages(module):
    assert importlib.import_module(f"langchain_atma.{module}").__doc__


@pytest.mark.parametrize(
    "argv",
    [[], ["demo"], ["ingest"], ["ask"], ["inspect"], ["verify"], ["judge", "train"],
     ["ltp", "build"], ["ltp", "validate"], ["bench", "ltp"], ["bench", "locomo"],
     ["bench", "perf"], ["bench", "seeds"], ["bench", "gate"]],
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
