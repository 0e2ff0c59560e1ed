"""The endpoint balancer's choices (fewest in flight, ties in turn, slots, resting), on plain functions: the
HTTP engines that use it are tested against loopback servers in test_tts_endpoints.py and
tests/llm/test_llm_endpoints.py."""

from __future__ import annotations

import threading

import pytest

from comic_narrator.backends.balancer import REST_S, AllUnreachable, Balancer, Unreachable


class Clock:
    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_urls_are_split_and_tidied() -> None:
    assert Balancer("http://a/v1/, http://b/v1,,", 2).urls == ("http://a/v1", "http://b/v1")
    assert Balancer(["http://a/"], 3).capacity == 3
    assert Balancer("http://a,http://b,http://c", 2).capacity == 6
    with pytest.raises(ValueError):
        Balancer(" , ", 1)


def test_ties_go_round_robin_and_load_decides_otherwise() -> None:
    balancer = Balancer("a,b,c", 4)
    assert [balancer.call(lambda url: url) for _ in range(6)] == ["a", "b", "c", "a", "b", "c"]

    def nested(url: str, depth: int) -> list[str]:
        # A request still in flight (the outer one) counts as load when the next endpoint is picked.
        return [url] + (balancer.call(lambda inner: nested(inner, depth - 1)) if depth else [])

    assert balancer.call(lambda url: nested(url, 4)) == ["a", "b", "c", "a", "b"]
    assert balancer.in_flight() == {"a": 0, "b": 0, "c": 0}


def test_a_full_endpoint_is_passed_over_and_a_caller_waits_when_all_are_full() -> None:
    balancer = Balancer("a,b", 1)
    inside = threading.Event()
    release = threading.Event()
    seen: list[str] = []

    def hold(url: str) -> str:
        inside.set()
        release.wait(timeout=30)
        return url

    def take(url: str) -> str:
        seen.append(url)
        return url

    holder = threading.Thread(target=lambda: balancer.call(hold))
    holder.start()
    assert inside.wait(timeout=30)
    # "a" holds its one slot, so the next requests all go to "b", round robin or not.
    assert [balancer.call(take) for _ in range(3)] == ["b", "b", "b"]
    both_full = threading.Event()
    waiter_done: list[str] = []

    def fill_b_then_wait(url: str) -> str:
        both_full.set()
        # Both endpoints are full now: a third caller waits until a slot frees.
        third = threading.Thread(target=lambda: waiter_done.append(balancer.call(take)))
        third.start()
        release.set()
        third.join(timeout=30)
        return url

    assert balancer.call(fill_b_then_wait) == "b"
    holder.join(timeout=30)
    assert both_full.is_set() and waiter_done == ["a"]


def test_an_unreachable_endpoint_rests_while_the_others_take_its_work() -> None:
    clock = Clock()
    balancer = Balancer("a,b,c", 2, clock=clock)
    calls: list[str] = []

    def request(url: str) -> str:
        calls.append(url)
        if url == "a":
            raise Unreachable("connection refused")
        return url

    assert balancer.call(request) == "b"
    assert calls == ["a", "b"]
    calls.clear()
    assert [balancer.call(request) for _ in range(4)] == ["c", "b", "c", "b"]
    assert "a" not in calls
    calls.clear()
    clock.now_s += REST_S + 1
    assert {balancer.call(request) for _ in range(3)} == {"b", "c"}
    assert calls.count("a") == 1  # tried again once its rest is over; still down, so it rests again


def test_when_every_endpoint_is_unreachable_each_is_named_once() -> None:
    balancer = Balancer("a,b", 1, clock=Clock())

    def request(url: str) -> str:
        raise Unreachable(f"{url} refused")

    with pytest.raises(AllUnreachable) as caught:
        balancer.call(request)
    assert caught.value.failures == [("a", "a refused"), ("b", "b refused")]
    assert caught.value.urls == "a, b"
    assert caught.value.reasons == "a: a refused; b: b refused"
    # Resting endpoints are still tried when nothing else is left: the caller gets an answer or the error.
    with pytest.raises(AllUnreachable):
        balancer.call(request)
    assert balancer.in_flight() == {"a": 0, "b": 0}


def test_one_unreachable_endpoint_gives_its_reason_alone() -> None:
    # The engines' messages name the one endpoint beside the reason already ("the TTS server at URL is not
    # answering (REASON)"), so the reason does not repeat its URL.
    def refused(url: str) -> str:
        raise Unreachable("connection refused")

    with pytest.raises(AllUnreachable) as caught:
        Balancer("a", 1).call(refused)
    assert caught.value.urls == "a"
    assert caught.value.reasons == "connection refused"


def test_a_caller_waiting_for_a_slot_sleeps_until_one_is_released() -> None:
    # While every slot is taken and no endpoint rests, the waiting caller blocks on the release instead of
    # polling: it reads the clock once on arrival and once more when woken.
    reads: list[float] = []
    arrived = threading.Event()

    def clock() -> float:
        reads.append(100.0)
        if len(reads) == 2:  # the holder's read, then the waiter's
            arrived.set()
        return 100.0

    balancer = Balancer("a", 1, clock=clock)
    inside = threading.Event()
    release = threading.Event()

    def hold(url: str) -> str:
        inside.set()
        release.wait(timeout=30)
        return url

    holder = threading.Thread(target=lambda: balancer.call(hold))
    holder.start()
    assert inside.wait(timeout=30)
    answers: list[str] = []
    waiter = threading.Thread(target=lambda: answers.append(balancer.call(lambda url: url)))
    waiter.start()
    assert arrived.wait(timeout=30)
    # Time for a polling caller to read the clock many times over; a sleeping one reads it no more.
    waiter.join(timeout=0.3)
    reads_while_waiting = len(reads)
    release.set()
    holder.join(timeout=30)
    waiter.join(timeout=30)
    assert answers == ["a"]
    assert reads_while_waiting == 2
    assert len(reads) == 3


def test_in_order_asks_the_first_endpoint_that_answers() -> None:
    balancer = Balancer("a,b,c", 2, clock=Clock())
    assert [balancer.call(lambda url: url, in_order=True) for _ in range(3)] == ["a", "a", "a"]

    def request(url: str) -> str:
        if url == "a":
            raise Unreachable("refused")
        return url

    assert balancer.call(request, in_order=True) == "b"


def test_each_asks_every_endpoint_and_may_skip_unreachable_ones() -> None:
    balancer = Balancer("a,b,c", 1, clock=Clock())

    def request(url: str) -> str:
        if url == "b":
            raise Unreachable("refused")
        return url.upper()

    assert balancer.each(request, skip_unreachable=True) == [("a", "A"), ("c", "C")]
    with pytest.raises(AllUnreachable, match="b: refused"):
        balancer.each(request)
    with pytest.raises(AllUnreachable):
        Balancer("b", 1).each(request, skip_unreachable=True)
    # An error that is not about reaching the endpoint goes to the caller at once.
    missing: dict[str, str] = {}
    with pytest.raises(KeyError):
        balancer.call(lambda url: missing[url])
    assert balancer.in_flight() == {"a": 0, "b": 0, "c": 0}
