"""Speaker-aware query rewrite and the fused seed search."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_atma.bank import StateBank
from langchain_atma.errors import ConfigError, InvalidQueryError
from langchain_atma.records import MemoryRecord, Provenance
from langchain_atma.retrieval.pool import (
    DEFAULT_OTHER_SPEAKER_PENALTY,
    SpeakerDirectory,
    seed_rows,
    speaker_seed_rows,
)
from langchain_atma.retrieval.read_graph import create_read_graph
from langchain_atma.retrieval.rewrite import first_person_query, name_candidates
from langchain_atma.retrievers import AtmaRetriever


@pytest.mark.parametrize(
    ("question", "name", "expected"),
    [
        ("Which city does Corisande live in now?", "Corisande", "Which city do I live in now?"),
        ("What is Jonas's job?", "Jonas", "What is my job?"),
        (
            "Which city did Corisande live in before her move?",
            "Corisande",
            "Which city did I live in before my move?",
        ),
        ("Who is Corisande dating?", "Corisande", "Who am I dating?"),
        ("What did Mel's sister give her?", "Mel", "What did my sister give me?"),
        ("Has Ann got a dog? Does she walk it?", "Ann", "Have I got a dog? Do I walk it?"),
        (
            "Who did Bob travel with, and did he like it?",
            "Bob",
            "Who did I travel with, and did I like it?",
        ),
        (
            "What gift did Melisande buy for Corisande?",
            "Corisande",
            "What gift did Melisande buy for me?",
        ),
        ("Corisande is a what now?", "Corisande", "I am a what now?"),
        ("Where does Marisol Jose work?", "Marisol Jose", "Where do I work?"),
    ],
)
def test_first_person_rewrite(question, name, expected):
    assert first_person_query(question, name) == expected


def test_rewrite_leaves_other_words_and_absent_names_alone():
    q = "When did Ann move to Boston?"
    assert first_person_query(q, "Boston") == "When did Ann move to me?"  # grammar only:
    # deciding WHO is a speaker is the bank's job (see the seed tests below)
    assert first_person_query(q, "Zoe") == q
    assert first_person_query(q, "") == q
    assert first_person_query("Annabel likes tea?", "Ann") == "Annabel likes tea?"


def test_name_candidates():
    assert name_candidates("Which city does Corisande live in now?") == ["Corisande"]
    assert name_candidates("What did Corisande's mom say?") == ["Corisande"]
    assert name_candidates("Where does Marisol Jose work?") == ["Marisol Jose", "Marisol", "Jose"]
    assert name_candidates("What is the weather like?") == []
    assert name_candidates(None) == []  # type: ignore[arg-type]
    assert len(name_candidates("A Bb Cc Dd Ee Ff Gg Hh")) == 4


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(min_size=1, max_size=20))
def test_rewrite_never_raises(question, name):
    out = first_person_query(question, name)
    assert isinstance(out, str)
    name_candidates(question)


# ----------------------------------------------------------------------------- seeds


def _add(bank, text, speaker, ns="u"):
    return bank.add(
        MemoryRecord(namespace=ns, content=text, provenance=Provenance(speaker=speaker))
    )


@pytest.fixture
def talk(minilm):
    bank = StateBank.in_memory(embeddings=minilm)
    recs = {
        "run": _add(bank, "I'm running about 38 kilometres a week right now.", "Corisande"),
        "hi": _add(bank, "Hey Corisande! Good to see you, how was the week?", "Melisande"),
        "q": _add(bank, "Corisande, how far do you run these days?", "Melisande"),
        "paint": _add(bank, "Corisande, your painting of the lake is lovely!", "Melisande"),
        "kids": _add(bank, "Corisande, the kids loved the beach trip with you.", "Melisande"),
        "dog": _add(bank, "My dog Max keeps stealing socks.", "Melisande"),
    }
    for i in range(6):  # more small talk naming Corisande, to crowd a plain search
        _add(bank, f"Thanks Corisande, talk soon! ({i})", "Melisande")
    return bank, recs


def test_speaker_seed_search_finds_the_first_person_statement(talk):
    bank, recs = talk
    question = "How many kilometres per week does Corisande run now?"
    plain = [r.record.id for r in seed_rows(bank, "u", question, seed_k=3)]
    rows, info = speaker_seed_rows(bank, "u", question, seed_k=3)
    assert info.speaker == "Corisande"
    assert info.rewritten == "How many kilometres per week do I run now?"
    ids = [r.record.id for r in rows]
    assert ids[0] == recs["run"].id
    assert ids.index(recs["run"].id) < (
        plain.index(recs["run"].id) if recs["run"].id in plain else 99
    )
    assert [r.prerank for r in rows] == list(range(len(rows)))
    assert len(set(ids)) == len(ids) <= 3


def test_no_rewrite_for_non_speakers_or_two_speakers(talk):
    bank, _ = talk
    _rows, info = speaker_seed_rows(bank, "u", "How far is Boston from Seattle?", seed_k=3)
    assert info.speaker is None and info.rewritten is None
    _rows, info = speaker_seed_rows(bank, "u", "Did Corisande and Melisande meet?", seed_k=3)
    assert info.speaker is None  # two speakers named: no single subject
    # speakers of ANOTHER namespace are not speakers here
    _add(bank, "I live in Oslo.", "Zed", ns="other")
    _rows, info = speaker_seed_rows(bank, "u", "Where does Zed live?", seed_k=3)
    assert info.speaker is None
    with pytest.raises(InvalidQueryError):
        speaker_seed_rows(bank, "u", "  ", seed_k=3)


def test_speaker_directory_caches_and_expires(talk, monkeypatch):
    bank, _ = talk
    calls = []
    real = bank.search_by_vector

    def counting(*a, **kw):
        if kw.get("speaker"):
            calls.append(kw["speaker"])
        return real(*a, **kw)

    monkeypatch.setattr(bank, "search_by_vector", counting)
    d = SpeakerDirectory(negative_ttl_s=0.0)
    vec = bank.embed_query("x")
    assert d.is_speaker(bank, "u", "Corisande", vec) and d.is_speaker(bank, "u", "Corisande", vec)
    assert calls == ["Corisande"]  # positive answers are cached
    assert not d.is_speaker(bank, "u", "Nina", vec)
    _add(bank, "Hi all!", "Nina")
    assert d.is_speaker(bank, "u", "Nina", vec)  # negative answer expired (ttl 0)
    assert not SpeakerDirectory(enabled=False).is_speaker(bank, "u", "Corisande", vec)


def test_read_graph_and_retriever_use_the_rewrite(talk):
    bank, recs = talk
    question = "How many kilometres per week does Corisande run now?"
    out = create_read_graph(bank, namespace="u", k=3, seed_k=3).invoke({"question": question})
    seed_entry = next(e for e in out["trace"] if e["node"] == "seed")
    assert "also searched as 'How many kilometres per week do I run now?'" in seed_entry["decided"]
    assert out["seeds"][0].record.id == recs["run"].id
    off = create_read_graph(bank, namespace="u", k=3, seed_k=3, rewrite_speaker=False)
    entry = next(e for e in off.invoke({"question": question})["trace"] if e["node"] == "seed")
    assert "also searched" not in entry["decided"]
    docs = AtmaRetriever(bank=bank, namespace="u", k=3, seed_k=3).invoke(question)
    assert docs[0].id == recs["run"].id


# ------------------------------------------------------------- speaker preference


@pytest.fixture
def mentors(minilm):
    """The other speaker talks about mentoring a lot; the named speaker says it once."""
    bank = StateBank.in_memory(embeddings=minilm)
    own = _add(bank, "Oisin is my new mentor at work, and we really click.", "Greta")
    others = [
        _add(bank, f"Greta, my mentoring of young dancers is going great ({i})!", "Jonas")
        for i in range(4)
    ]
    _add(bank, "I baked bread this morning.", "Greta")
    return bank, own, others


def _score_of(rows, rec):
    return next(r.score for r in rows if r.record.id == rec.id)


def test_named_speakers_own_turns_rank_first(mentors):
    bank, own, others = mentors
    question = "Who mentors Greta now?"
    plain, info0 = speaker_seed_rows(bank, "u", question, seed_k=3, other_speaker_penalty=None)
    assert info0.preferred is None and own.id not in [r.record.id for r in plain]
    # Jonas's turns are ~0.1 closer than Greta's own statement: a larger penalty lifts it
    rows, info = speaker_seed_rows(bank, "u", question, seed_k=3, other_speaker_penalty=0.15)
    assert info.preferred == "Greta" and info.own_hits == 1
    ids = [r.record.id for r in rows]
    assert ids[0] == own.id
    assert [r.prerank for r in rows] == list(range(len(rows)))
    assert len(set(ids)) == len(ids) == 3
    # only a much larger penalty keeps the speaker's own turns while they last; 0 = plain
    only, _ = speaker_seed_rows(bank, "u", question, seed_k=2, other_speaker_penalty=5.0)
    assert {r.record.provenance.speaker for r in only} == {"Greta"}
    same, _ = speaker_seed_rows(bank, "u", question, seed_k=3, other_speaker_penalty=0.0)
    assert [r.record.id for r in same] == [r.record.id for r in plain]


def test_seed_scores_carry_the_penalty(mentors):
    bank, *_ = mentors
    question = "Who mentors Greta now?"
    rows, info = speaker_seed_rows(bank, "u", question, seed_k=6)
    host = {
        h.record.id: h.score
        for h in bank.search_by_vector("u", bank.embed_query(info.rewritten or question), 10)
    }
    assert {r.record.provenance.speaker for r in rows} == {"Greta", "Jonas"}
    for r in rows:
        penalty = DEFAULT_OTHER_SPEAKER_PENALTY if r.record.provenance.speaker == "Jonas" else 0
        assert r.score == pytest.approx(host[r.record.id] - penalty)
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)
    assert info.own_hits == 2  # both of Greta's turns, then Jonas's, a little lower


def test_no_preference_without_one_named_speaker(mentors):
    bank, *_ = mentors
    for q in ("Who mentors whom?", "Did Greta and Jonas meet?"):
        _rows, info = speaker_seed_rows(bank, "u", q, seed_k=3)
        assert info.preferred is None and info.own_hits == 0


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.1", True])
def test_bad_penalty_is_a_config_error(mentors, bad):
    bank, *_ = mentors
    with pytest.raises(ConfigError):
        speaker_seed_rows(bank, "u", "Who mentors Greta now?", other_speaker_penalty=bad)
    with pytest.raises(ConfigError):
        create_read_graph(bank, namespace="u", other_speaker_penalty=bad)
    with pytest.raises(ConfigError):
        AtmaRetriever(bank=bank, namespace="u", other_speaker_penalty=bad)


def test_read_graph_trace_and_retriever_prefer_the_speaker(mentors):
    bank, own, _ = mentors
    question = "Who mentors Greta now?"
    out = create_read_graph(bank, namespace="u", k=3, seed_k=3, other_speaker_penalty=0.15).invoke(
        {"question": question}
    )
    seed_entry = next(e for e in out["trace"] if e["node"] == "seed")
    assert "1 of 'Greta''s own turns" in seed_entry["decided"]
    assert out["seeds"][0].record.id == own.id
    docs = AtmaRetriever(
        bank=bank, namespace="u", k=3, seed_k=3, other_speaker_penalty=0.15
    ).invoke(question)
    assert docs[0].id == own.id
    plain = AtmaRetriever(
        bank=bank, namespace="u", k=3, seed_k=3, other_speaker_penalty=None
    ).invoke(question)
    assert own.id not in [d.id for d in plain]
    off = create_read_graph(bank, namespace="u", k=3, seed_k=3, other_speaker_penalty=None)
    entry = next(e for e in off.invoke({"question": question})["trace"] if e["node"] == "seed")
    assert "own turns" not in entry["decided"]
