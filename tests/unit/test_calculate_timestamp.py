"""levy.app.handlers.messages.timestamp_utc reads a Timestamp as protobuf's ToDatetime(tzinfo=UTC) does."""

from datetime import UTC

from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given
from hypothesis import strategies as st

from levy.app.handlers.messages import timestamp_utc


@given(seconds=st.integers(min_value=-62135596800, max_value=253402300799),
       nanos=st.integers(min_value=0, max_value=999_999_999))
def test_same_as_to_datetime(seconds: int, nanos: int) -> None:
    ts = Timestamp(seconds=seconds, nanos=nanos)
    expected = ts.ToDatetime(tzinfo=UTC)
    got = timestamp_utc(ts)
    assert got == expected and got.utcoffset() == expected.utcoffset()
