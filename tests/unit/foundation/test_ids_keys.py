from hypothesis import given
from hypothesis import strategies as st

from levy.domain import ids
from levy.domain.keys import display_prefix, hash_secret, hashes_match, is_well_formed, new_secret


def test_ids_are_prefixed_unique_and_time_ordered() -> None:
    values = [ids.new_id("cust") for _ in range(5000)]
    assert len(set(values)) == 5000
    assert values == sorted(values)
    assert all(v.startswith("cust_") and len(v) == len("cust_") + 26 for v in values)
    assert ids.new_ulid(now_ms=1_000) < ids.new_ulid(now_ms=2_000_000_000_000)


def test_secrets_have_256_bits_and_only_hashes_compare() -> None:
    s = new_secret()
    assert is_well_formed(s) and len(s) == len("levy_sk_") + 43
    assert not is_well_formed(s[:-1]) and not is_well_formed("sk_" + s)
    assert hashes_match(hash_secret(s), s)
    assert not hashes_match(hash_secret(s), new_secret())
    assert display_prefix(s) == s[:12] and len({new_secret() for _ in range(1000)}) == 1000


@given(st.integers(0, (1 << 48) - 1), st.integers(0, (1 << 80) - 1))
def test_table_encoding_equals_digit_by_digit(ms: int, rand: int) -> None:
    body = ids._encode_body(ms, rand)
    # Digit by digit, most significant first: 10 digits of ms, then 16 of rand.
    digits = [(ms >> (5 * k)) & 31 for k in range(9, -1, -1)] + [(rand >> (5 * k)) & 31 for k in range(15, -1, -1)]
    assert body == "".join("0123456789ABCDEFGHJKMNPQRSTVWXYZ"[d] for d in digits)
    assert len(body) == 26
