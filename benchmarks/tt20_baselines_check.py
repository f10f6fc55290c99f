"""tt20: Tran-The 2020 baselines (DropoutUCB, REMBO, SRE, HeSBO, LineBO, random) on Branin hidden in D = 50.

Usage: OMP_NUM_THREADS=1 python benchmarks/tt20_baselines_check.py T SEEDS METHOD[,METHOD...] [key=value ...]
Prints the best (minimized) Branin value per seed and its median; F* = 0.398.
       python benchmarks/tt20_baselines_check.py collisions SEEDS D[,D...]
Prints, per HeSBO dimension d, the seeds whose two active coordinates share a bucket (then the
embedding holds only x_a = x_b or x_a = -x_b, by the signs' product).
       python benchmarks/tt20_baselines_check.py faces T SEEDS METHOD [key=value ...]
Tests the reading that REMBO's clipped embedding keeps it on the box's faces: per seed, the share
of queries with an active Branin coordinate on a face (|x| = 1), and whether the best query has
one there; and Branin's smallest value with an active coordinate on a face (a grid of 4001 points
per edge of the active square), against which a method stuck on the faces cannot do better.
Options default to experiments/tranthe2020/fig1_d50.toml's, with acq_budget 500 (quick scale).
"""
import json
import sys
import time

import numpy as np

from hdbo import problems
from hdbo.methods import make_method

COMMON = dict(n_init=20, acq_budget=500, gp_prior="none")
EMB = dict(COMMON, maximizer="lbfgsb", kernel="matern52", ard=False, refit_every=1, beta="tranthe2020")
OPTS = {
    "random": {},
    "dropout-ucb": dict(COMMON, d=5, fill="mix", p=0.5),
    "line-bo": dict(COMMON, line_direction="random"),
    "sre": dict(EMB, d=5, m=5),
    "rembo": dict(EMB, d=5),
    "hesbo": dict(EMB, d=5),
}


def run(name, seed, T, *, return_points=False, **extra):
    p = problems.get("branin", dim=50, domain="symmetric", seed=seed)
    m = make_method(name, p.bounds, seed=seed, budget=T, **dict(OPTS[name], **extra))
    best, xs, ys = np.inf, [], []
    for _ in range(T):
        x = m.ask()
        assert np.all(x >= p.bounds.lower) and np.all(x <= p.bounds.upper)
        y = p(x)  # maximization form: -Branin
        m.tell(x, y)
        xs.append(x)
        ys.append(-float(y))
        best = min(best, -float(y))
    xs = np.array(xs)
    if return_points:
        return p, xs, np.array(ys)
    ndup = len(xs) - len(np.unique(np.round(xs, 9), axis=0))
    return best, ndup


def collisions(seeds, dims):
    """HeSBO: the seeds whose two active Branin coordinates share a bucket, and the product of their signs."""
    for d in dims:
        hits = []
        for s in range(seeds):
            p = problems.get("branin", dim=50, domain="symmetric", seed=s)
            m = make_method("hesbo", p.bounds, seed=s, budget=60, **dict(OPTS["hesbo"], d=d))
            m.ask()  # builds the embedding
            e = m.embedding_
            a, b = p.structure["active_dims"]
            if e.buckets[a] == e.buckets[b]:
                hits.append(f"seed {s}: {'same' if e.signs[a] * e.signs[b] > 0 else 'opposite'} signs")
        print(f"hesbo d={d}: active coordinates in one bucket on {len(hits)} of {seeds} seeds ({'; '.join(hits)})")


def face_minimum(p):
    """Branin's smallest value with an active coordinate on a face of the box (x_a or x_b = +-1)."""
    a, b = p.structure["active_dims"]
    g = np.linspace(-1.0, 1.0, 4001)
    best = np.inf
    for fixed, free in ((a, b), (b, a)):
        for v in (-1.0, 1.0):
            X = np.zeros((g.size, p.dim))
            X[:, fixed], X[:, free] = v, g
            best = min(best, min(-float(p(x)) for x in X))
    return best


def faces(T, seeds, name, extra):
    rows, fmin = [], None
    for s in range(seeds):
        p, xs, ys = run(name, s, T, return_points=True, **extra)
        act = xs[:, p.structure["active_dims"]]
        on_face = np.any(np.abs(act) >= 1.0 - 1e-9, axis=1)
        i = int(np.argmin(ys))
        fmin = face_minimum(p) if fmin is None else fmin  # the same Branin on every seed's active pair
        rows.append((s, on_face[20:].mean(), bool(on_face[i]), ys[i]))
        print(f"seed {s}: queries after the initial 20 with an active coordinate on a face {on_face[20:].mean():.2f}; "
              f"best {ys[i]:.3f}, its active coordinates {np.round(act[i], 3).tolist()} "
              f"({'on a face' if on_face[i] else 'inside'})", flush=True)
    print(f"{name} {extra}: median share on a face {np.median([r[1] for r in rows]):.2f}; best query on a face on "
          f"{sum(r[2] for r in rows)} of {seeds} seeds; Branin's smallest value with an active coordinate on a "
          f"face {fmin:.3f} (F* = 0.398)")


def main():
    if sys.argv[1] == "faces":  # faces T SEEDS METHOD [key=value ...]
        extra = {k: json.loads(v) for k, v in (a.split("=", 1) for a in sys.argv[5:])}
        return faces(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], extra)
    if sys.argv[1] == "collisions":  # collisions SEEDS D[,D...]
        return collisions(int(sys.argv[2]), [int(v) for v in sys.argv[3].split(",")])
    T, seeds, names = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
    extra = {k: json.loads(v) for k, v in (a.split("=", 1) for a in sys.argv[4:])}
    for name in names:
        t0 = time.time()
        res = [run(name, s, T, **extra) for s in range(seeds)]
        b = [r[0] for r in res]
        print(f"{name:12s} T={T} {extra} best={np.round(b, 3).tolist()} median={np.median(b):.3f} "
              f"dups={[r[1] for r in res]} ({time.time() - t0:.0f}s)", flush=True)


if __name__ == "__main__":
    main()
