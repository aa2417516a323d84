"""levy.domain.memo.BoundedMemo: kept up to its size, then started over."""

from levy.domain.memo import BoundedMemo


def test_memo_starts_over_when_full() -> None:
    m: BoundedMemo[int, str] = BoundedMemo(3)
    assert [m.put(i, str(i)) for i in range(3)] == ["0", "1", "2"]
    assert dict(m) == {0: "0", 1: "1", 2: "2"}
    m.put(3, "3")
    assert dict(m) == {3: "3"}
