from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolslip.evals import is_success, pass_at_k, pass_hat_k, suite_pass_at_k, suite_pass_hat_k


def test_hand_computed_cases() -> None:
    assert pass_hat_k(8, 8, 8) == 1.0  # c = n
    assert pass_hat_k(5, 5, 3) == 1.0
    assert pass_hat_k(8, 3, 4) == 0.0  # c < k
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2) = 1/6
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)  # 1 - C(2,2)/C(4,2)
    assert pass_at_k(6, 0, 3) == 0.0
    assert pass_hat_k(10, 7, 1) == pytest.approx(0.7)  # pass^1 is the success rate


def test_suite_value_is_the_mean_over_tasks() -> None:
    # task A: n=4 c=2 -> 1/6; task B: n=4 c=4 -> 1; each task weighs the same
    assert suite_pass_hat_k([(4, 2), (4, 4)], 2) == pytest.approx((1 / 6 + 1) / 2)
    assert suite_pass_at_k([(4, 2), (4, 0)], 2) == pytest.approx((5 / 6 + 0) / 2)


def test_bad_arguments_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="k must be between 1 and the number of trials"):
        pass_hat_k(3, 1, 4)
    with pytest.raises(ValueError, match="successes must be between 0"):
        pass_hat_k(3, 4, 1)
    with pytest.raises(ValueError, match="no task"):
        suite_pass_hat_k([], 1)


def test_success_is_reward_within_1e_6_of_one() -> None:
    assert is_success(1.0) and is_success(1 - 5e-7) and is_success(1 + 5e-7)
    assert not is_success(1 - 2e-6) and not is_success(0.0)


@given(st.integers(1, 10).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_exhaustive_enumeration_of_k_subsets(case: tuple[int, int, int]) -> None:
    n, c, k = case
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(range(n), k))
    all_pass = sum(all(outcomes[i] for i in s) for s in subsets) / len(subsets)
    any_pass = sum(any(outcomes[i] for i in s) for s in subsets) / len(subsets)
    assert pass_hat_k(n, c, k) == pytest.approx(all_pass)
    assert pass_at_k(n, c, k) == pytest.approx(any_pass)
