"""Sentry gate: shipped heads, the flag rule, errors, real MiniLM pairs, data and training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from langchain_atma.bank.sentry import (
    DATA_DIR,
    PairScores,
    Sentry,
    SentryHeads,
    SentryThresholds,
    heads_filename,
)
from langchain_atma.bank.sentry_data import (
    FAMILIES,
    PAIR_KINDS,
    generate_pairs,
    slot_names,
)
from langchain_atma.embeddings import DEFAULT_ENCODER_NAME
from langchain_atma.errors import ConfigError, SentryError

# ----------------------------------------------------------------- shipped heads


def test_shipped_heads_load_offline_and_match_the_encoder() -> None:
    path = DATA_DIR / heads_filename(DEFAULT_ENCODER_NAME)
    assert path.is_file()
    assert path.stat().st_size < 2 * 1024 * 1024
    sentry = Sentry.default()
    assert sentry.encoder_name == DEFAULT_ENCODER_NAME
    assert sentry.dim == 384
    assert sentry.heads.metadata.get("seed") == 0
    # the same heads are found by model path too (last path component)
    again = Sentry.for_encoder(f"/models/{DEFAULT_ENCODER_NAME}")
    assert again.heads.weights()["top_w1"].shape == sentry.heads.weights()["top_w1"].shape


def test_unknown_encoder_has_no_heads(tmp_path: Path) -> None:
    with pytest.raises(SentryError, match="no Sentry heads"):
        Sentry.for_encoder("some-other-encoder", data_dir=tmp_path)


def test_scores_are_deterministic_with_and_without_cache() -> None:
    rng = np.random.default_rng(3)
    new = rng.normal(size=384).astype(np.float32)
    cands = rng.normal(size=(7, 384)).astype(np.float32)
    cached = Sentry.default()
    plain = Sentry(cached.heads, cache_size=0)
    s1 = cached.score(new, cands)
    s2 = cached.score(new, cands)  # served from the cache
    s3 = plain.score(new, cands)
    for x, y in ((s1, s2), (s1, s3)):
        np.testing.assert_array_equal(x.a, y.a)
        np.testing.assert_array_equal(x.b, y.b)
        np.testing.assert_array_equal(x.flagged, y.flagged)
    # score() and score_pairs() agree
    s4 = plain.score_pairs(np.repeat(new[None, :], 7, axis=0), cands)
    np.testing.assert_allclose(s4.a, s1.a, atol=1e-5)
    np.testing.assert_allclose(s4.b, s1.b, atol=1e-5)


def test_save_load_roundtrip(tmp_path: Path) -> None:
    heads = SentryHeads.random(dim=6, hidden=5, out_dim=3, seed=1, encoder_name="enc")
    path = heads.save(tmp_path / "h.npz", dtype="float32")
    back = SentryHeads.load(path)
    assert back.encoder_name == "enc" and back.metadata["seed"] == 1
    for k, v in heads.weights().items():
        np.testing.assert_array_equal(back.weights()[k], v)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(SentryError):
        SentryHeads.load(tmp_path / "bad.npz")
    with pytest.raises(SentryError, match="not found"):
        SentryHeads.load(tmp_path / "missing.npz")


# ------------------------------------------------------------- the flag rule


def _crafted_sentry(thresholds: SentryThresholds | None = None) -> Sentry:
    """Heads whose scores are set by hand: a = cos of dims 0-1, b = cos of dims 2-3."""
    eye2 = np.eye(2)
    top_w1 = np.zeros((4, 2))
    top_w1[:2] = eye2
    log_w1 = np.zeros((4, 2))
    log_w1[2:] = eye2 * 1e-4  # tanh is linear this close to 0
    weights = {
        "top_w1": top_w1,
        "top_b1": np.zeros(2),
        "top_w2": eye2,
        "top_b2": np.zeros(2),
        "log_w1": log_w1,
        "log_b1": np.zeros(2),
        "log_w2": eye2 * 1e4,
        "log_b2": np.zeros(2),
    }
    return Sentry(SentryHeads(weights, encoder_name="crafted"), thresholds, cache_size=0)


def _pair_vec(a: float, b: float) -> np.ndarray:
    return np.array([a, np.sqrt(1 - a * a), b, np.sqrt(1 - b * b)], dtype=np.float32)


@pytest.mark.parametrize(
    ("a", "b", "flag"),
    [
        (0.95, 0.95, False),  # same slot, consistent
        (0.95, 0.75, True),  # b >= tau_log but the gap a - b = 0.20 > 0.15
        (0.95, 0.30, True),  # logic similarity below tau_log
        (0.70, 0.60, False),  # gap 0.10 and b above tau_log
        (0.50, 0.00, False),  # different slots: never flagged
        (0.61, 0.40, True),
    ],
)
def test_flag_rule_with_gap_term(a: float, b: float, flag: bool) -> None:
    sentry = _crafted_sentry()
    new = _pair_vec(1.0, 1.0)
    scores = sentry.score(new, _pair_vec(a, b)[None, :])
    assert isinstance(scores, PairScores) and len(scores) == 1
    assert scores.a[0] == pytest.approx(a, abs=1e-3)
    assert scores.b[0] == pytest.approx(b, abs=1e-3)
    assert scores.d[0] == pytest.approx(a - b, abs=2e-3)
    assert bool(scores.flagged[0]) is flag


def test_thresholds_change_the_gate() -> None:
    new = _pair_vec(1.0, 1.0)
    cand = _pair_vec(0.95, 0.75)[None, :]
    assert _crafted_sentry().score(new, cand).flagged[0]
    loose = SentryThresholds(tau_top=0.6, tau_log=0.45, tau_gap=0.3)
    assert not _crafted_sentry(loose).score(new, cand).flagged[0]
    strict_topic = SentryThresholds(tau_top=0.97)
    assert not _crafted_sentry(strict_topic).score(new, cand).flagged[0]


def test_empty_candidates_and_flagged_indices() -> None:
    sentry = _crafted_sentry()
    new = _pair_vec(1.0, 1.0)
    assert len(sentry.score(new, np.zeros((0, 4), np.float32))) == 0
    cands = np.stack([_pair_vec(0.2, 0.1), _pair_vec(0.9, 0.1), _pair_vec(0.9, 0.9)])
    assert sentry.score(new, cands).flagged_indices() == [1]


def test_shape_and_dimension_mismatches_raise() -> None:
    sentry = Sentry.default()
    rng = np.random.default_rng(0)
    with pytest.raises(SentryError, match="dimension"):
        sentry.score(rng.normal(size=10), rng.normal(size=(2, 10)))
    with pytest.raises(SentryError, match="dimension"):
        sentry.score(rng.normal(size=384), rng.normal(size=(2, 383)))
    with pytest.raises(SentryError, match="one vector"):
        sentry.score(rng.normal(size=(2, 384)), rng.normal(size=(2, 384)))
    with pytest.raises(SentryError, match="same shape"):
        sentry.score_pairs(rng.normal(size=(2, 384)), rng.normal(size=(3, 384)))
    with pytest.raises(SentryError):
        sentry.score(rng.normal(size=(1, 2, 384)), rng.normal(size=(2, 384)))
    with pytest.raises(SentryError, match="NaN"):
        sentry.score(np.full(384, np.nan), rng.normal(size=(2, 384)))
    with pytest.raises(SentryError):
        Sentry("not heads")  # type: ignore[arg-type]
    bad = SentryHeads.random(dim=4, hidden=3, out_dim=2).weights()
    bad["top_b1"] = np.zeros(5)
    with pytest.raises(SentryError, match="chain"):
        SentryHeads(bad, encoder_name="x")


# ------------------------------------------------------- real MiniLM vectors


@pytest.fixture(scope="module")
def minilm():  # type: ignore[no-untyped-def]
    from langchain_atma.embeddings import MiniLMEmbeddings

    emb = MiniLMEmbeddings()
    emb.encode(["warm up"])
    return emb


def _score(minilm, old: str, new: str) -> PairScores:  # type: ignore[no-untyped-def]
    vecs = minilm.encode([new, old])
    return Sentry.default().score(vecs[0], vecs[1:])


def test_real_conflict_pairs_are_flagged(minilm) -> None:  # type: ignore[no-untyped-def]
    scores = _score(minilm, "I live in Boston.", "I moved to Denver last month, that's home now.")
    assert scores.a[0] > 0.6
    assert scores.flagged[0]
    car = _score(minilm, "I drive a Honda.", "I sold my car and I bike everywhere now.")
    assert car.flagged[0]


def test_real_unrelated_and_restated_pairs_are_not_flagged(minilm) -> None:  # type: ignore[no-untyped-def]
    unrelated = _score(minilm, "I live in Boston.", "My favorite food is sushi.")
    assert unrelated.a[0] < 0.6 and not unrelated.flagged[0]
    chat = _score(
        minilm, "I adopted a puppy named Rex.", "The weather was lovely at the beach today."
    )
    assert not chat.flagged[0]
    restated = _score(minilm, "I work as a nurse.", "I'm a nurse.")
    assert restated.a[0] > 0.6  # same slot ...
    assert not restated.flagged[0]  # ... but consistent


# ----------------------------------------------------------- data generator


def test_generator_is_deterministic_per_seed_and_differs_across_seeds() -> None:
    a = generate_pairs(40, seed=0)
    b = generate_pairs(40, seed=0)
    c = generate_pairs(40, seed=1)
    assert a == b
    assert [p.new_text for p in a] != [p.new_text for p in c]
    # a longer run extends a shorter one (the first interactions are identical)
    longer = generate_pairs(60, seed=0)
    assert longer[: len(a)] == a


def test_generator_labels_kinds_and_families() -> None:
    pairs = generate_pairs(300, seed=5)
    labels = {(p.y_top, p.y_log) for p in pairs}
    assert labels == {(0, 0), (1, 0), (1, 1)}
    conflict = {"replace", "update", "scope", "contrast", "conflict_vs_consistent"}
    consistent = {"restate", "mention", "arrival"}
    for p in pairs:
        assert p.kind in PAIR_KINDS
        assert p.needs_audit == (p.kind in conflict)
        if p.kind in consistent:
            assert (p.y_top, p.y_log) == (1, 1)
        if p.kind in ("other_slot", "hard_negative", "chitchat", "smalltalk"):
            assert (p.y_top, p.y_log) == (0, 0)
        assert p.new_text.strip() and p.old_text.strip()
        assert "{" not in p.new_text + p.old_text and "[" not in p.new_text + p.old_text
    assert {p.slot for p in pairs} >= {"residence", "job", "pets", "relationship"}
    assert len(slot_names()) >= 30
    assert {p.new_family for p in pairs} >= set(FAMILIES)


def test_generator_can_hold_out_a_family() -> None:
    kept = [f for f in FAMILIES if f != "terse"]
    pairs = generate_pairs(150, seed=2, families=kept)
    assert all("terse" not in (p.new_family, p.old_family) for p in pairs)
    held = generate_pairs(50, seed=2, new_families=["terse"])
    same_slot = [p for p in held if p.y_top == 1]
    assert same_slot and all(p.new_family == "terse" for p in same_slot)
    with pytest.raises(ConfigError, match="unknown phrasing family"):
        generate_pairs(5, families=["shakespearean"])
    with pytest.raises(ConfigError):
        generate_pairs(0)


# ------------------------------------------------------------------ training


def test_train_config_rejects_unknown_family() -> None:
    from langchain_atma.bank.sentry_train import SentryTrainConfig, train_sentry

    with pytest.raises(ConfigError, match="holdout_family"):
        train_sentry(SentryTrainConfig(holdout_family="nope", n_interactions=10), progress=False)


def test_tiny_training_run_end_to_end(tmp_path: Path, minilm) -> None:  # type: ignore[no-untyped-def]
    from langchain_atma.bank.sentry_train import SentryTrainConfig, train_sentry

    out = tmp_path / "heads.npz"
    cfg = SentryTrainConfig(
        n_interactions=40,
        holdout_interactions=8,
        epochs=1,
        hidden=16,
        out_dim=8,
        out_path=str(out),
        holdout_family="terse",
    )
    report = train_sentry(cfg, progress=False)
    assert out.is_file() and report.output_file == str(out)
    heads = SentryHeads.load(out)
    assert heads.encoder_name == DEFAULT_ENCODER_NAME
    assert heads.dim == 384 and heads.hidden == 16 and heads.out_dim == 8
    assert heads.metadata["seed"] == 0 and heads.metadata["config"]["holdout_family"] == "terse"
    assert report.best_epoch == 1 and report.epochs_run == 1
    assert set(report.n_pairs) == {"train", "val", "test", "holdout"}
    assert min(report.n_pairs.values()) > 0
    assert 0.0 <= report.gate_test.precision <= 1.0 and 0.0 <= report.gate_test.recall <= 1.0
    assert report.gate_holdout_family is not None
    assert report.ms_per_pair > 0
    # the run is reproducible: same config -> same weights
    again = train_sentry(
        cfg.model_copy(update={"out_path": str(tmp_path / "again.npz")}), progress=False
    )
    back = SentryHeads.load(again.output_file)
    for k, v in heads.weights().items():
        np.testing.assert_array_equal(back.weights()[k], v)
