"""The standard DFlash tap selection (DF106's evidence) against every published or quoted list."""

from __future__ import annotations

import pytest

from dflash_cfg.lint.rules.taps import standard_taps


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [
        (36, 5, [1, 9, 17, 25, 33]),  # Qwen3-4B/8B-DFlash-b16
        (64, 5, [1, 16, 31, 46, 61]),  # Qwen3.5-27B, Qwen3.6-27B-DFlash
        (32, 5, [1, 8, 15, 22, 29]),  # LLaMA3.1-8B-Instruct-DFlash-UltraChat
        (48, 5, [1, 12, 23, 34, 45]),  # Qwen3-Coder-30B-A3B
        (24, 5, [1, 6, 11, 16, 21]),  # the 24-layer example of z-lab issue #153
        (52, 5, [1, 13, 25, 37, 49]),  # Muse-Glimmer-30B-DFlash2
        (32, 8, [1, 5, 9, 13, 17, 21, 25, 29]),  # Qwen3.5-4B-DFlash
        (40, 8, [1, 6, 11, 16, 22, 27, 32, 37]),  # Qwen3.5-35B-A3B-DFlash
        (48, 8, [1, 7, 14, 20, 26, 32, 39, 45]),
        (60, 8, [1, 9, 17, 25, 33, 41, 49, 57]),
        (64, 2, [1, 61]),  # z-lab tests/test_model.py
        (64, 1, [32]),  # one tap: the middle layer
    ],
)
def test_published_lists(n: int, k: int, expected: list[int]) -> None:
    assert standard_taps(n, k) == expected


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [
        # Python's round() is round-half-even: 67.5 -> 68 here, where half-up would give 69.
        (94, 5, [1, 24, 46, 68, 91]),
        (35, 3, [1, 16, 32]),  # 16.5 -> 16
    ],
)
def test_half_even_rounding(n: int, k: int, expected: list[int]) -> None:
    assert standard_taps(n, k) == expected


def test_first_is_one_and_last_is_n_minus_3() -> None:
    for n in range(8, 129):
        for k in range(2, 9):
            taps = standard_taps(n, k)
            assert (taps[0], taps[-1], len(taps)) == (1, n - 3, k)
