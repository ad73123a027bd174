"""One ridge per label over a shared Gram matrix (ncld_core/model/ridge.py): the direct solves, the eigenvalues."""

from __future__ import annotations

import numpy as np
import pytest

from ncld_core.model.elm_ncld import ELMNCLD
from ncld_core.model.ridge import solve_per_label_ridge, solve_ridge


@pytest.mark.parametrize("L,q", [(1, 1), (2, 3), (7, 1), (40, 12)])
def test_every_label_is_the_direct_solve_at_its_own_ridge(L, q):
    rng = np.random.default_rng(L * 100 + q)
    A = rng.standard_normal((3 * L + 2, L))
    G = A.T @ A
    ridge = rng.uniform(0.01, 30.0, q)
    b1, b2 = rng.standard_normal((L, q)), rng.standard_normal((L, q))
    (x1, x2), (low, high) = solve_per_label_ridge(G, ridge, b1, b2)
    for j in range(q):
        K = G + ridge[j] * np.eye(L)
        np.testing.assert_allclose(x1[:, j], np.linalg.solve(K, b1[:, j]), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(x2[:, j], np.linalg.solve(K, b2[:, j]), rtol=1e-9, atol=1e-12)
    eig = np.linalg.eigvalsh(G)
    assert low == pytest.approx(eig[0], rel=1e-9, abs=1e-9) and high == pytest.approx(eig[-1], rel=1e-9)


def test_a_label_whose_system_is_not_positive_definite_is_refused():
    G = np.diag([-1.0, 2.0, 3.0])
    seen = []
    with pytest.raises(ValueError, match="not positive definite"):
        def check(low, high):
            seen.append((low, high))
            if low + 0.5 <= 0:
                raise ValueError("not positive definite")
        solve_per_label_ridge(G, np.array([0.5, 5.0]), np.ones((3, 2)), check=check)
    assert seen == [(pytest.approx(-1.0), pytest.approx(3.0))]
    with pytest.raises(np.linalg.LinAlgError, match="label 0"):
        solve_per_label_ridge(G, np.array([0.5, 5.0]), np.ones((3, 2)))


def test_the_forward_loss_names_the_published_hessian_when_k_is_indefinite():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((120, 5)), (rng.random((120, 3)) < 0.4).astype(int)
    for loss in ("backward", "forward"):
        model = ELMNCLD(loss=loss, hessian="paper", beta=0.1, alpha=1e-6, rho_pos=0.2, rho_neg=0.3, n_neighbors=5)
        with pytest.raises(ValueError, match="^hessian='paper' makes K indefinite"):
            model.partial_fit(X, Y)


def test_a_right_hand_side_of_another_shape_is_refused():
    G = np.eye(3)
    with pytest.raises(ValueError, match="right-hand side must be"):
        solve_per_label_ridge(G, np.array([1.0, 2.0]), np.ones((3, 3)))
    with pytest.raises(ValueError, match="ridge one value per label"):
        solve_per_label_ridge(G, 1.0, np.ones((3, 1)))


def test_solve_ridge_takes_one_path_for_a_number_and_one_per_label_and_checks_before_solving():
    """The model and the sweep both solve through ``solve_ridge``: a number and the same number per label give the
    same solutions; ``check`` sees G's extreme eigenvalues before any solve and can refuse."""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 7))
    G, b1, b2 = A.T @ A, rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    (one, two), extremes = solve_ridge(G, 0.7, b1, b2)
    assert extremes is None  # no check: no eigendecomposition
    assert np.allclose((G + 0.7 * np.eye(7)) @ one, b1) and np.allclose((G + 0.7 * np.eye(7)) @ two, b2)
    (each, _), (low, high) = solve_ridge(G, np.full(3, 0.7), b1, b2)
    assert np.allclose(each, one)
    (single,), _ = solve_ridge(G, np.array([0.7]), b1)  # one entry: every label's
    assert np.allclose(single, one)
    seen = []
    (_, _), checked = solve_ridge(G, 0.7, b1, b2, check=lambda lo, hi: seen.append((lo, hi)))
    eig = np.linalg.eigvalsh(G)
    assert seen == [checked] and np.allclose(checked, (eig[0], eig[-1])) and np.allclose((low, high), checked)

    def refuse(ridge):  # the model's check: refuses a ridge that leaves G + a I indefinite
        def check(lo, hi):
            if not lo + ridge > 0:
                raise ValueError("alpha: not positive definite")
        return check

    with pytest.raises(ValueError, match="alpha"):
        solve_ridge(G, -eig[0] - 1.0, b1, check=refuse(-eig[0] - 1.0))
    (ok,), _ = solve_ridge(G, -eig[0] + 0.5, b1, check=refuse(-eig[0] + 0.5))  # barely positive definite: solved
    assert np.allclose((G + (-eig[0] + 0.5) * np.eye(7)) @ ok, b1)
    (lu,), _ = solve_ridge(G, -eig[0] - 1.0, b1)  # no check: an indefinite K is solved by LU, as before
    assert np.allclose((G + (-eig[0] - 1.0) * np.eye(7)) @ lu, b1)
