"""The index: served in recorded order, played/unplayed bookkeeping, flat per-request cost."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import RecordedRequest
from pytest_agentreplay.cassettes.matching import Index, closest
from tests import corpus
from tests.cassettes._matching_helpers import ANTHROPIC, CHAT, conversation, req


def test_take_serves_identical_requests_in_recorded_order():
    same = conversation()
    index = Index([req(body=same), req(body=conversation("York")), req(body=same)])
    assert index.take(req(body=same)) == 0
    assert index.take(req(body=same)) == 2
    assert index.take(req(body=same)) is None
    assert index.take(req(body=conversation("York"))) == 1


def test_take_returns_none_for_an_unknown_request():
    index = Index([req(body=conversation())])
    assert index.take(req(body=conversation("York"))) is None
    assert index.played() == []
    assert index.unplayed() == [0]


def test_played_and_unplayed_bookkeeping():
    bodies = [conversation(city) for city in ("A", "B", "C", "D")]
    index = Index([req(body=b) for b in bodies])
    assert index.unplayed() == [0, 1, 2, 3]
    assert index.take(req(body=bodies[2])) == 2
    assert index.take(req(body=bodies[0])) == 0
    assert index.played() == [2, 0]  # in the order played
    assert index.unplayed() == [1, 3]  # in recorded order
    assert index.is_played(2)
    assert not index.is_played(1)
    assert index.cursor() == 1  # one past the interaction played last


def test_peek_consumed_lists_played_indexes_with_the_same_key():
    same = conversation()
    index = Index([req(body=same), req(body=conversation("York")), req(body=same)])
    assert index.peek_consumed(req(body=same)) == []
    index.take(req(body=same))
    index.take(req(body=same))
    assert index.peek_consumed(req(body=same)) == [0, 2]
    assert index.peek_consumed(req(body=conversation("York"))) == []
    assert index.played() == [0, 2]  # peeking plays nothing


def test_add_appends_an_already_played_interaction():
    index = Index([req(body=conversation())])
    new = req(body=conversation("York"))
    assert index.add(new) == 1
    assert len(index) == 2
    assert index.played() == [1]
    assert index.unplayed() == [0]
    # Answered live already: a repeat goes live again rather than replaying it.
    assert index.take(req(body=conversation("York"))) is None
    assert index.peek_consumed(new) == [1]


def test_add_unplayed_makes_it_servable():
    index = Index([])
    assert index.add(req(body=conversation()), played=False) == 0
    assert index.add(req(body=conversation()), played=False) == 1
    assert index.take(req(body=conversation())) == 0
    assert index.take(req(body=conversation())) == 1


def test_method_and_path_subset_is_positional_replay():
    # pydantic-ai's vcr config: bodies are not matched, order within the cassette decides.
    index = Index(
        [req(body=conversation("A")), req(CHAT, {"m": 1}), req(body=conversation("B"))],
        match_on=("method", "path"),
    )
    assert index.take(req(body={"anything": True})) == 0
    assert index.take(req(CHAT, {"m": 2})) == 1
    assert index.take(req(body=None)) == 2
    assert index.take(req()) is None


def test_empty_match_on_replays_purely_in_order():
    index = Index([req(ANTHROPIC), req(CHAT), req("https://x.test/")], match_on=())
    assert [index.take(req("https://other.test/")) for _ in range(4)] == [0, 1, 2, None]


def test_concurrent_takes_get_distinct_interactions():
    n = 200
    index = Index([req(body={"same": True}) for _ in range(n)])
    got: list[int | None] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(n // 4):
            value = index.take(req(body={"same": True}))
            with lock:
                got.append(value)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == list(range(n))  # type: ignore[type-var]


# -- properties --------------------------------------------------------------------

BODIES = st.sampled_from(
    [None, {"a": 1}, {"a": 2}, {"a": 1, "stream": True}, {"messages": ["x"]}, {"messages": ["y"]}]
)
URLS = st.sampled_from([ANTHROPIC, CHAT, "https://api.anthropic.com/v1/models"])
REQUESTS = st.builds(req, URLS, BODIES)


@given(st.lists(REQUESTS, max_size=30))
def test_replaying_in_recorded_order_returns_every_index_once_in_order(requests):
    index = Index(requests)
    assert [index.take(r) for r in requests] == list(range(len(requests)))
    assert index.unplayed() == []
    assert index.take(requests[0] if requests else req()) is None


@given(st.lists(REQUESTS, max_size=30), st.lists(REQUESTS, max_size=40))
def test_take_never_returns_an_index_twice(recorded, live):
    index = Index(recorded)
    got = [i for i in (index.take(r) for r in live) if i is not None]
    assert len(got) == len(set(got))
    assert index.played() == got
    assert sorted(index.unplayed() + got) == list(range(len(recorded)))
    for i in got:  # each served request really has the key it was asked for
        assert index.keys[i] in {index.key(r) for r in live}


@given(st.lists(REQUESTS, max_size=30), st.randoms(use_true_random=False))
def test_any_order_plays_each_once_and_equal_requests_in_recorded_order(recorded, rnd):
    index = Index(recorded)
    order = list(range(len(recorded)))
    rnd.shuffle(order)
    got = [index.take(recorded[i]) for i in order]
    assert sorted(got) == list(range(len(recorded)))  # type: ignore[type-var]
    by_key: dict[object, list[int]] = {}
    for i in got:
        assert i is not None
        by_key.setdefault(index.keys[i], []).append(i)
    assert all(served == sorted(served) for served in by_key.values())


# -- real recordings ---------------------------------------------------------------


def _corpus_requests(path: Path) -> list[RecordedRequest]:
    out = []
    for item in corpus.load(path):
        body = item.request_body
        if isinstance(body, (dict, list)):
            out.append(RecordedRequest(method=item.method, url=item.url, json=body))
        elif isinstance(body, bytes):
            out.append(RecordedRequest(method=item.method, url=item.url, body=body.decode()))
        else:
            out.append(RecordedRequest(method=item.method, url=item.url, body=body))
    return out


RECORDED_FILES = [p for p in corpus.files() if not p.name.endswith((".sse.txt", ".sse.bin"))]


@pytest.mark.parametrize("path", RECORDED_FILES, ids=lambda p: p.name[:60])
def test_every_corpus_cassette_replays_to_itself_in_order(path):
    recorded = _corpus_requests(path)
    index = Index(recorded)
    # The live client sends the same JSON with other key order and spacing.
    live = [
        RecordedRequest(
            method=r.method.lower(),
            url=r.url,
            headers={"content-type": "application/json"},
            body=json.dumps(r.json_body, indent=1, sort_keys=True),
        )
        if r.json_body is not None
        else r
        for r in recorded
    ]
    assert [index.take(r) for r in live] == list(range(len(recorded)))
    assert index.unplayed() == []


# -- flat cost ---------------------------------------------------------------------


def _counting_matcher(seen: list[RecordedRequest]):
    def body_model(request: RecordedRequest):
        seen.append(request)
        return json.dumps(request.json_body, sort_keys=True)

    return body_model


@pytest.mark.parametrize("size", [100, 5000])
def test_take_computes_only_the_live_key_whatever_the_cassette_size(size):
    seen: list[RecordedRequest] = []
    recorded = [req(body={"turn": i}) for i in range(size)]
    index = Index(recorded, match_on=("method", "path", _counting_matcher(seen)))
    assert len(seen) == size  # building keys each recorded request once
    seen.clear()
    probes = [req(body={"turn": i}) for i in (0, size // 2, size - 1)]
    for probe in probes:
        assert index.take(probe) is not None
    assert seen == probes  # each take looked at its own request, no recorded one


def test_normalize_runs_once_per_take(monkeypatch):
    import pytest_agentreplay.cassettes.match_parts as parts

    calls = []
    real = parts.normalize_body

    def counting(request):
        calls.append(request)
        return real(request)

    monkeypatch.setattr(parts, "normalize_body", counting)
    for size in (100, 5000):
        recorded = [req(body={"turn": i}) for i in range(size)]
        calls.clear()
        index = Index(recorded)
        assert calls == []  # the built-in parts' recorded keys wait for a take
        index.take(req(body={"turn": size - 1}))
        assert len(calls) == size + 1  # each recorded body once, and the live one
        calls.clear()
        index.take(req(body={"turn": 0}))
        assert calls == [req(body={"turn": 0})]


def test_take_next_plays_the_first_servable_interaction_without_a_key(monkeypatch):
    import pytest_agentreplay.cassettes.match_parts as parts

    calls = []
    real = parts.normalize_body
    monkeypatch.setattr(parts, "normalize_body", lambda r: calls.append(r) or real(r))
    index = Index([req(body={"turn": i}) for i in range(4)])
    assert index.next_in_order() == (0, req(body={"turn": 0}))
    assert not index.take_next(1)  # 0 is still servable: 1 is not what take(1's key) gives
    assert index.take_next(0)
    assert not index.take_next(0)  # played
    index.withdraw(1)
    assert index.take_next(2)  # 1 is out of matching: 2 is the first servable
    assert calls == []
    assert index.played() == [0, 2]
    assert index.unplayed() == [1, 3]
    assert index.next_in_order() == (3, req(body={"turn": 3}))
    assert index.take(req(body={"turn": 2})) is None  # played by position, not by key
    assert index.take(req(body={"turn": 3})) == 3
    assert index.next_in_order() is None


def test_a_custom_part_keys_the_recorded_requests_at_once():
    seen: list[RecordedRequest] = []
    index = Index([req(body={"turn": i}) for i in range(3)], match_on=[_counting_matcher(seen)])
    assert len(seen) == 3
    assert index.take(req(body={"turn": 1})) == 1


def test_deferred_keys_cover_requests_added_before_and_after_they_are_computed():
    index = Index([req(body={"turn": 0})])
    assert index.add(req(body={"turn": 1}), played=False) == 1  # still deferred
    assert index.keys == [index.key(req(body={"turn": i})) for i in range(2)]
    assert index.add(req(body={"turn": 2}), played=False) == 2  # keyed at once now
    assert [index.take(req(body={"turn": i})) for i in (2, 1, 0)] == [2, 1, 0]
    index.rekey([req(body={"turn": 9})] * 3)  # deferred again: the scrubbed forms
    assert index.keys == [index.key(req(body={"turn": 9}))] * 3


def test_closest_ranks_by_agreeing_parts_then_body_similarity():
    candidates = [
        req(CHAT, conversation("Leeds")),  # other path: 3 of 4 parts agree
        req(body=conversation("Leeds", turns=3)),  # same path, body less alike
        req(body=conversation("Leeds", turns=1, temperature=0.7)),  # one leaf differs
        req(body=conversation("York", temperature=0.9)),  # same parts, two leaves differ
    ]
    ranked = closest(req(body=conversation("Leeds")), candidates, n=4)
    assert [i for i, _ in ranked] == [2, 3, 1, 0]
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s < 1 for s in scores)
    assert closest(req(body=conversation()), [req(body=conversation())])[0][1] == 1.0
    assert closest(req(), []) == []


# -- repeats, withdrawal, plays from elsewhere, rekeying ---------------------------


def test_take_first_plays_the_first_match_again_and_again():
    same = conversation()
    index = Index([req(body=conversation("York")), req(body=same), req(body=same)])
    assert [index.take_first(req(body=same)) for _ in range(3)] == [1, 1, 1]
    assert index.played() == [1, 1, 1]
    assert index.unplayed() == [0, 2]
    assert index.peek_consumed(req(body=same)) == [1, 1, 1]
    assert index.take(req(body=same)) == 2  # the next unplayed one is still there
    assert index.take_first(req(body=conversation("Paris"))) is None


def test_take_first_skips_a_withdrawn_interaction():
    same = conversation()
    index = Index([req(body=same), req(body=same)])
    index.withdraw(0)
    assert index.take_first(req(body=same)) == 1
    assert index.unplayed() == [0]  # withdrawn is not played


def test_withdrawn_interactions_are_never_served_and_stay_unplayed():
    same = conversation()
    index = Index([req(body=same), req(body=same), req(body=same)])
    index.withdraw(1)
    assert [index.take(req(body=same)) for _ in range(3)] == [0, 2, None]
    assert index.unplayed() == [1]
    index.withdraw(0)  # played already: withdrawing changes nothing
    assert index.is_played(0)


def test_play_from_elsewhere_takes_one_out_of_the_middle_of_equal_requests():
    same = conversation()
    index = Index([req(body=same), req(body=same), req(body=same)])
    assert index.play(1)
    assert not index.play(1)  # played already
    assert [index.take(req(body=same)) for _ in range(3)] == [0, 2, None]
    assert index.played() == [1, 0, 2]
    assert not index.play(0)


def test_a_single_request_key_is_served_once():
    index = Index([req(body=conversation()), req(body=conversation("York"))])
    assert index.play(0)
    assert index.take(req(body=conversation())) is None
    assert index.take(req(body=conversation("York"))) == 1
    assert index.take(req(body=conversation("York"))) is None


def test_rekey_keeps_played_withdrawn_and_the_play_order():
    a, b = conversation("A"), conversation("B")
    index = Index([req(body=a), req(body=a), req(body=a), req(body=b)])
    assert index.take(req(body=a)) == 0
    index.withdraw(1)
    # Scrubbed forms: now all four share a key.
    index.rekey([req(body=b)] * 4)
    assert index.played() == [0]
    assert index.is_played(0)
    assert [index.take(req(body=b)) for _ in range(3)] == [2, 3, None]
    assert index.unplayed() == [1]
    with pytest.raises(ValueError, match="rekey needs 4 requests, got 1"):
        index.rekey([req()])


OPS = st.lists(
    st.tuples(
        st.sampled_from(["take", "first", "next", "play", "withdraw", "add", "add_played", "peek"]),
        st.integers(0, 5),
    ),
    max_size=40,
)


@given(st.lists(st.integers(0, 2), max_size=12), OPS)
def test_the_index_behaves_as_a_queue_per_key(recorded, ops):
    """Against a model written the plain way: per key a queue of unplayed indexes and a
    list of played ones (what the index kept before issue 29)."""
    bodies = [{"n": n} for n in range(3)]
    index = Index([req(body=bodies[n]) for n in recorded])
    keys = list(recorded)
    queued = {k: [i for i, n in enumerate(keys) if n == k] for k in range(3)}
    consumed: dict[int, list[int]] = {k: [] for k in range(3)}
    played: list[int] = []
    for op, arg in ops:
        k = arg % 3
        if op == "take":
            want = queued[k].pop(0) if queued[k] else None
            if want is not None:
                consumed[k].append(want)
                played.append(want)
            assert index.take(req(body=bodies[k])) == want
        elif op == "first":
            found = consumed[k] + queued[k]
            want = min(found) if found else None
            if want is not None:
                if want in queued[k]:
                    queued[k].remove(want)
                consumed[k].append(want)
                played.append(want)
            assert index.take_first(req(body=bodies[k])) == want
        elif op == "next":
            if not keys:
                continue
            i = arg % len(keys)
            servable = [j for queue in queued.values() for j in queue]
            want_next = bool(servable) and i == min(servable)
            if want_next:
                queued[keys[i]].remove(i)
                consumed[keys[i]].append(i)
                played.append(i)
            assert index.take_next(i) is want_next
        elif op == "peek":
            for key in range(3):
                assert index.peek_consumed(req(body=bodies[key])) == consumed[key]
        elif op in ("play", "withdraw"):
            if not keys:
                continue
            i = arg % len(keys)
            queue = queued[keys[i]]
            was_queued = i in queue
            if was_queued:
                queue.remove(i)
            if op == "play":
                if was_queued:
                    consumed[keys[i]].append(i)
                    played.append(i)
                assert index.play(i) is was_queued
            else:
                index.withdraw(i)
        else:
            i = len(keys)
            keys.append(k)
            if op == "add":
                queued[k].append(i)
            else:
                consumed[k].append(i)
                played.append(i)
            assert index.add(req(body=bodies[k]), played=op == "add_played") == i
        assert index.played() == played
        assert index.unplayed() == [i for i in range(len(keys)) if i not in played]
        assert all(index.is_played(i) == (i in played) for i in range(len(keys)))
    for key in range(3):  # last: the steps above ran with the keys deferred until a take
        assert index.peek_consumed(req(body=bodies[key])) == consumed[key]
