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
        ("Which city does Caroline live in now?", "Caroline", "Which city do I live in now?"),
        ("What is Jon's job?", "Jon", "What is my job?"),
        ("Which city did Caroline live in before her move?", "Caroline",
         "Which city did I live in before my move?"),
        ("Who is Caroline dating?", "Caroline", "Who am I dating?"),
        ("What did Mel's sister give her?", "Mel", "What did my sister give me?"),
        ("Has Ann got a dog? Does she walk it?", "Ann", "Have I got a dog? Do I walk it?"),
        ("Who did Bob travel with, and did he like it?", "Bob",
         "Who did I travel with, and did I like it?"),
        ("What gift did Melanie buy for Caroline?", "Caroline",
         "What gift did Melanie buy for me?"),
        ("Caroline is a what now?", "Caroline", "I am a what now?"),
        ("Where does Maria Jose work?", "Maria Jose", "Where do I work?"),
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
    assert name_candidates("Which city does Caroline live in now?") == ["Caroline"]
    assert name_candidates("What did Caroline's mom say?") == ["Caroline"]
    assert name_candidates("Where does Maria Jose work?") == ["Maria Jose", "Maria", "Jose"]
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
    return bank.add(MemoryRecord(namespace=ns, content=text,
                                 provenance=Provenance(speaker=speaker)))


@pytest.fixture
def talk(minilm):
    bank = StateBank.in_memory(embeddings=minilm)
    recs = {
        "run": _add(bank, "I'm running about 38 kilometres a week right now.", "Caroline"),
        "hi": _add(bank, "Hey Caroline! Good to see you, how was the week?", "Melanie"),
        "q": _add(bank, "Caroline, how far do you run these days?", "Melanie"),
        "paint": _add(bank, "Caroline, your painting of the lake is lovely!", "Melanie"),
        "kids": _add(bank, "Caroline, the kids loved the beach trip with you.", "Melanie"),
        "dog": _add(bank, "My dog Max keeps stealing socks.", "Melanie"),
    }
    for i in range(6):  # more small talk naming Caroline, to crowd a plain search
        _add(bank, f"Thanks Caroline, talk soon! ({i})", "Melanie")
    return bank, recs


def test_speaker_seed_search_finds_the_first_person_statement(talk):
    bank, recs = talk
    question = "How many kilometres per week does Caroline run now?"
    plain = [r.record.id for r in seed_rows(bank, "u", question, seed_k=3)]
    rows, info = speaker_seed_rows(bank, "u", question, seed_k=3)
    assert info.speaker == "Caroline"
    assert info.rewritten == "How many kilometres per week do I run now?"
    ids = [r.record.id for r in rows]
    assert ids[0] == recs["run"].id
    assert ids.index(recs["run"].id) < (plain.index(recs["run"].id) if recs["run"].id in plain
                                        else 99)
    assert [r.prerank for r in rows] == list(range(len(rows)))
    assert len(set(ids)) == len(ids) <= 3


def test_no_rewrite_for_non_speakers_or_two_speakers(talk):
    bank, _ = talk
    _rows, info = speaker_seed_rows(bank, "u", "How far is Boston from Denver?", seed_k=3)
    assert info.speaker is None and info.rewritten is None
    _rows, info = speaker_seed_rows(bank, "u", "Did Caroline and Melanie meet?", seed_k=3)
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
    assert d.is_speaker(bank, "u", "Caroline", vec) and d.is_speaker(bank, "u", "Caroline", vec)
    assert calls == ["Caroline"]  # positive answers are cached
    assert not d.is_speaker(bank, "u", "Nina", vec)
    _add(bank, "Hi all!", "Nina")
    assert d.is_speaker(bank, "u", "Nina", vec)  # negative answer expired (ttl 0)
    assert not SpeakerDirectory(enabled=False).is_speaker(bank, "u", "Caroline", vec)


def test_read_graph_and_retriever_use_the_rewrite(talk):
    bank, recs = talk
    question = "How many kilometres per week does Caroline run now?"
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
    own = _add(bank, "Owen is my new mentor at work, and we really click.", "Gina")
    others = [
        _add(bank, f"Gina, my mentoring of young dancers is going great ({i})!", "Jon")
        for i in range(4)
    ]
    _add(bank, "I baked bread this morning.", "Gina")
    return bank, own, others


def _score_of(rows, rec):
    return next(r.score for r in rows if r.record.id == rec.id)


def test_named_speakers_own_turns_rank_first(mentors):
    bank, own, others = mentors
    question = "Who mentors Gina now?"
    plain, info0 = speaker_seed_rows(bank, "u", question, seed_k=3, other_speaker_penalty=None)
    assert info0.preferred is None and own.id not in [r.record.id for r in plain]
    # Jon's turns are ~0.1 closer than Gina's own statement: a larger penalty lifts it
    rows, info = speaker_seed_rows(bank, "u", question, seed_k=3, other_speaker_penalty=0.15)
    assert info.preferred == "Gina" and info.own_hits == 1
    ids = [r.record.id for r in rows]
    assert ids[0] == own.id
    assert [r.prerank for r in rows] == list(range(len(rows)))
    assert len(set(ids)) == len(ids) == 3
    # only a much larger penalty keeps the speaker's own turns while they last; 0 = plain
    only, _ = speaker_seed_rows(bank, "u", question, seed_k=2, other_speaker_penalty=5.0)
    assert {r.record.provenance.speaker for r in only} == {"Gina"}
    same, _ = speaker_seed_rows(bank, "u", question, seed_k=3, other_speaker_penalty=0.0)
    assert [r.record.id for r in same] == [r.record.id for r in plain]


def test_seed_scores_carry_the_penalty(mentors):
    bank, *_ = mentors
    question = "Who mentors Gina now?"
    rows, info = speaker_seed_rows(bank, "u", question, seed_k=6)
    host = {h.record.id: h.score for h in bank.search_by_vector(
        "u", bank.embed_query(info.rewritten or question), 10)}
    assert {r.record.provenance.speaker for r in rows} == {"Gina", "Jon"}
    for r in rows:
        penalty = DEFAULT_OTHER_SPEAKER_PENALTY if r.record.provenance.speaker == "Jon" else 0
        assert r.score == pytest.approx(host[r.record.id] - penalty)
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)
    assert info.own_hits == 2  # both of Gina's turns, then Jon's, a little lower


def test_no_preference_without_one_named_speaker(mentors):
    bank, *_ = mentors
    for q in ("Who mentors whom?", "Did Gina and Jon meet?"):
        _rows, info = speaker_seed_rows(bank, "u", q, seed_k=3)
        assert info.preferred is None and info.own_hits == 0


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.1", True])
def test_bad_penalty_is_a_config_error(mentors, bad):
    bank, *_ = mentors
    with pytest.raises(ConfigError):
        speaker_seed_rows(bank, "u", "Who mentors Gina now?", other_speaker_penalty=bad)
    with pytest.raises(ConfigError):
        create_read_graph(bank, namespace="u", other_speaker_penalty=bad)
    with pytest.raises(ConfigError):
        AtmaRetriever(bank=bank, namespace="u", other_speaker_penalty=bad)


def test_read_graph_trace_and_retriever_prefer_the_speaker(mentors):
    bank, own, _ = mentors
    question = "Who mentors Gina now?"
    out = create_read_graph(bank, namespace="u", k=3, seed_k=3, other_speaker_penalty=0.15
                            ).invoke({"question": question})
    seed_entry = next(e for e in out["trace"] if e["node"] == "seed")
    assert "1 of 'Gina''s own turns" in seed_entry["decided"]
    assert out["seeds"][0].record.id == own.id
    docs = AtmaRetriever(bank=bank, namespace="u", k=3, seed_k=3,
                         other_speaker_penalty=0.15).invoke(question)
    assert docs[0].id == own.id
    plain = AtmaRetriever(bank=bank, namespace="u", k=3, seed_k=3,
                          other_speaker_penalty=None).invoke(question)
    assert own.id not in [d.id for d in plain]
    off = create_read_graph(bank, namespace="u", k=3, seed_k=3, other_speaker_penalty=None)
    entry = next(e for e in off.invoke({"question": question})["trace"] if e["node"] == "seed")
    assert "own turns" not in entry["decided"]
