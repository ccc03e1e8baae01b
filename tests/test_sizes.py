import pytest
from hypothesis import given
from hypothesis import strategies as st

from fanout.common.errors import UsageError
from fanout.common.sizes import format_size, parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1048576", 1 << 20),
        ("64MiB", 64 * 1024 * 1024),
        ("1GiB", 1024**3),
        ("1GB", 10**9),
        ("500MB", 500 * 10**6),
        ("10KiB", 10 * 1024),
        ("1.5GiB", 3 * 1024**3 // 2),
        ("2TiB", 2 * 1024**4),
        ("3TB", 3 * 10**12),
        ("64mib", 64 * 1024 * 1024),  # any letter case: OBJECT_SIZE=32mib is 32 MiB
        ("32MIB", 32 * 1024 * 1024),
        ("7 kb", 7000),
        ("1gb", 10**9),
        ("100B", 100),
    ],
)
def test_parse_size_units(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["0", "0MiB", "-1", "-64MiB", "abc", "", "MiB", "12XB", "1.5", "0.0001KB", "1,5GiB",
                                  "5M", "64Mi", "1k", "2g"])  # a bare M: 10^6 to some tools, 2^20 to others
def test_parse_size_rejects_with_one_line_naming_value(text):
    with pytest.raises(UsageError) as info:
        parse_size(text)
    message = str(info.value)
    assert repr(text) in message
    assert "units B KB MB GB TB KiB MiB GiB TiB, in any letter case" in message  # says what is allowed
    assert "\n" not in message


@given(st.integers(min_value=1, max_value=1024**4), st.sampled_from(["KiB", "MiB", "GiB", "KB", "MB", "GB"]))
def test_whole_units_scale_by_their_base(count, unit):
    base = 1024 if unit.endswith("iB") else 1000
    power = "KMG".index(unit[0]) + 1
    assert parse_size(f"{count}{unit}") == count * base**power


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (512, "512 B"),
        (10 * 1024, "10 KiB"),
        (64 * 1024**2, "64 MiB"),
        (3 * 1024**3 // 2, "1.5 GiB"),
        (5 * 1024**4, "5 TiB"),
    ],
)
def test_format_size(n, text):
    assert format_size(n) == text


@given(st.integers(min_value=1, max_value=2**50))
def test_format_size_is_close_to_the_value(n):
    number, unit = format_size(n).split()
    scale = 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(unit)
    # Two decimals at most: within half a hundredth of the unit.
    assert abs(float(number) * scale - n) <= scale * 0.005 * (1 + 1e-9)  # ties land on the bound
