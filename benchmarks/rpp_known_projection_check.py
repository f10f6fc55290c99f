"""RPP-GP-UCB's projection learning on a problem whose projection is known.

The objective (also in ``tests/methods/test_rpp_gp_ucb.py`` and
``tests/structure/test_projection_recovery.py``) is a sum of four different ridge functions along
the columns of ``W_true = I + U(-0.5, 0.5)^(4 x 4)`` on ``[0, 1]^4``, so with d = 1 the true W is
identifiable up to the order, sign and scale of its columns. delta is set just large enough for
``W_true`` (``delta_ratio(W_true) - 1``), so the delta-ratio rule does not stop RPP from reaching it.

For each number of told points n (uniform random) and seed, one ``rpp-gp-ucb`` proposal (the
method's defaults, so the length-scale bounds of ``gp_prior="dim-scaled"``, lower bound 0.025) makes the
method learn W (step (b) of Algorithm 3, started from step (a)'s hyperparameters and W = I). The
table gives the mean angle in degrees between the true directions and the closest column of the
learned W (the identity is 24.2 degrees off), alpha, and the marginal likelihood before and after
the projection step. The last columns repeat step (b) on the same data and the same fixed noise
with the kernel's length-scale started at a smooth value instead (the maximum-likelihood fit of a
GP with a free noise on the same points, as the structure test does), to show whether the start
is what decides the outcome. Step (a)'s kernel is not kept by the method, so the length-scale
column refits it with ``add-gp-ucb`` on the same points (the same step (a) code).

Run: ``python benchmarks/rpp_known_projection_check.py`` (2-4 minutes on one core; 7 with two other jobs on the 2 cores); output:
``benchmarks/rpp_known_projection_check.out.md``.
"""

from __future__ import annotations

import numpy as np

from hdbo.gp import Additive, GaussianProcess, SquaredExponential
from hdbo.methods import make_method
from hdbo.structure import delta_ratio, learn_projection

D = 4
W_TRUE = np.eye(D) + np.random.default_rng(7).uniform(-0.5, 0.5, (D, D))


def objective(X: np.ndarray) -> np.ndarray:
    Z = np.atleast_2d(X) @ W_TRUE
    return (np.sin(3 * Z[:, 0]) + np.cos(2.5 * Z[:, 1]) + np.exp(-4 * (Z[:, 2] - 0.4) ** 2)
            + 0.5 * np.sin(4 * Z[:, 3] + 1))


def mean_angle(W: np.ndarray) -> float:
    Wn = W / np.linalg.norm(W, axis=0)
    Tn = W_TRUE / np.linalg.norm(W_TRUE, axis=0)
    return float(np.degrees(np.arccos(np.clip(np.abs(Tn.T @ Wn).max(1), 0.0, 1.0))).mean())


def main() -> None:
    delta = delta_ratio(W_TRUE) - 1.0
    print(f"delta = {delta:.3f}; the identity is {mean_angle(np.eye(D)):.1f} degrees off the true directions\n")
    print("| n | seed | step (a) length-scale | alpha | angle of W (W^) | lml before -> after W | "
          "smooth start: length-scale | angle of W | lml after W |")
    print("|---:|---:|---:|---:|---|---|---:|---:|---:|")
    for n in (60, 100, 200):
        for seed in (0, 1, 2):
            X = np.random.default_rng(seed + 1).random((n, D))
            y = objective(X)
            m = make_method("rpp-gp-ucb", [(0.0, 1.0)] * D, seed=seed, d=1, delta=delta, n_init=10,
                            explore_iters=0, acq_budget=200, alpha_grid=21)
            for x, v in zip(X, y):
                m.tell(x, float(v))
            m.ask()
            info = m.diagnostics()
            # step (a)'s kernel is not kept; refit it on X (W^ was I before this first learning step)
            a = make_method("add-gp-ucb", [(0.0, 1.0)] * D, seed=seed, d=1, n_init=10, explore_iters=0,
                            acq_budget=200, n_decompositions=m.n_decompositions)
            for x, v in zip(X, y):
                a.tell(x, float(v))
            a.ask()
            gp_a = a.gp_
            z = (y - gp_a.y_shift_) / gp_a.y_scale_
            smooth = Additive(SquaredExponential(lengthscale=0.5, variance=1.0, lengthscale_bounds=(0.05, 20)),
                              [[c] for c in range(D)])
            ref = GaussianProcess(smooth, noise_variance=1e-4, noise_bounds=(1e-6, 1e-1),
                                  n_restarts=1).fit(X, y, rng=np.random.default_rng(seed))
            fit = learn_projection(X, z, ref.kernel, gp_a.noise_variance, ridge=m.w_ridge, max_iter=m.w_iters)
            ls_a = float(np.exp(gp_a.kernel.theta[-1]))
            ls_s = float(np.exp(ref.kernel.theta[-1]))
            print(f"| {n} | {seed} | {ls_a:.3f} | {m.alpha_:.3f} | {mean_angle(m.W_):.1f} ({mean_angle(m.W_hat_):.1f}) | "
                  f"{info['lml_before_w']:.1f} -> {info['lml_after_w']:.1f} | {ls_s:.3f} | {mean_angle(fit.W):.1f} | "
                  f"{fit.lml:.1f} |")


if __name__ == "__main__":
    main()
