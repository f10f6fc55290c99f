"""Random embeddings: into the box, reproducible from the seed, projections and gradients."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.structure.embeddings import (
    AnchoredEmbedding,
    GaussianEmbedding,
    HashingEmbedding,
    embedding_from_dict,
)


def test_gaussian_embedding_maps_into_the_box_after_clipping(rng):
    emb = GaussianEmbedding(50, 5, seed=3)
    assert emb.A.shape == (50, 5)
    assert_allclose(emb.low_box.upper, math.sqrt(5))
    Y = emb.low_box.sample(500, rng)
    X = emb.lift(Y)
    assert X.shape == (500, 50)
    assert np.all(np.abs(X) <= 1.0)
    # the clip is the only change: unclipped coordinates equal A y, clipped ones sit on the bound
    raw = Y @ emb.A.T
    inside = np.abs(raw) <= 1
    assert_allclose(X[inside], raw[inside])
    assert_array_equal(X[~inside], np.sign(raw[~inside]))
    # with y ~ U[-sqrt d, sqrt d]^d most coordinates are clipped (Wang et al.'s box is large)
    frac = emb.clipped_fraction(Y)
    assert frac == pytest.approx(np.mean(~inside))
    assert 0.4 < frac < 0.9
    assert emb.clipped_fraction(np.zeros((3, 5))) == 0.0
    # a single vector in, a single vector out
    assert emb.lift(Y[0]).shape == (50,)


def test_gaussian_embedding_is_reproducible_from_its_seed_and_json():
    a = GaussianEmbedding(20, 3, seed=11, half_width=1.5)
    b = embedding_from_dict(json.loads(json.dumps(a.to_dict())))
    assert isinstance(b, GaussianEmbedding)
    assert_array_equal(a.A, b.A)
    assert b.half_width == 1.5
    assert not np.array_equal(a.A, GaussianEmbedding(20, 3, seed=12).A)
    assert_array_equal(a.matrix, a.A)


def test_projection_recovers_unclipped_points_and_flags_others(rng):
    emb = GaussianEmbedding(30, 4, seed=0)
    Y = 0.05 * rng.uniform(-1, 1, (10, 4))  # small: nothing is clipped
    X = emb.lift(Y)
    assert emb.clipped_fraction(Y) == 0.0
    assert_allclose(emb.project(X), Y, atol=1e-10)
    Yp, ok = emb.represents(X)
    assert ok.all()
    # a generic point of the cube is not on the 4-dimensional embedding
    _, ok = emb.represents(rng.uniform(-1, 1, (5, 30)))
    assert not ok.any()


def test_pullback_is_the_chain_rule_through_the_clip(rng):
    emb = GaussianEmbedding(12, 3, seed=5)
    w = rng.normal(size=12)

    def phi(X):
        return np.sin(X @ w)

    Y = emb.low_box.sample(6, rng)
    G = np.cos(emb.lift(Y) @ w)[:, None] * w[None, :]
    grad = emb.pullback(Y, G)
    h = 1e-6
    fd = np.empty_like(Y)
    for j in range(3):
        E = np.zeros(3)
        E[j] = h
        fd[:, j] = (phi(emb.lift(Y + E)) - phi(emb.lift(Y - E))) / (2 * h)
    assert_allclose(grad, fd, atol=1e-5)


def test_hashing_embedding_maps_into_the_box_without_clipping(rng):
    emb = HashingEmbedding(50, 5, seed=2)
    assert emb.low_box == emb.low_box.symmetric(5)
    assert set(emb.buckets.tolist()) <= {0, 1, 2, 3, 4}
    assert set(np.unique(emb.signs)) == {-1.0, 1.0}
    Y = emb.low_box.sample(200, rng)
    X = emb.lift(Y)
    assert np.all(np.abs(X) <= 1.0)
    assert_array_equal(X, emb.signs * Y[:, emb.buckets])  # x_i = s_i y_h(i), exactly
    assert_array_equal(X, Y @ emb.matrix.T)
    assert emb.clipped_fraction(Y) == 0.0
    # the sketch is injective on Y: the least-squares projection inverts it
    assert_allclose(emb.project(X), Y, atol=1e-12)
    _, ok = emb.represents(X)
    assert ok.all()


def test_hashing_embedding_collisions_and_surjectivity():
    emb = HashingEmbedding(40, 4, seed=7)
    same = np.flatnonzero(emb.buckets == emb.buckets[0])
    assert emb.collisions([0, int(same[1])]) == 1
    other = int(np.flatnonzero(emb.buckets != emb.buckets[0])[0])
    assert emb.collisions([0, other]) == 0
    # the paper's uniform hash (default) leaves a bucket empty for some seeds when D is close to d
    empty = [s for s in range(50) if np.unique(HashingEmbedding(6, 5, seed=s).buckets).size < 5]
    assert empty
    assert all(np.unique(HashingEmbedding(6, 5, seed=s, surjective=True).buckets).size == 5 for s in empty)
    # buckets and signs are roughly uniform
    big = HashingEmbedding(5000, 5, seed=0)
    assert_allclose(np.bincount(big.buckets, minlength=5) / 5000, 0.2, atol=0.03)
    assert abs(big.signs.mean()) < 0.06
    b = embedding_from_dict(json.loads(json.dumps(emb.to_dict())))
    assert_array_equal(b.buckets, emb.buckets)
    assert_array_equal(b.signs, emb.signs)


def test_anchored_embedding_contains_its_anchor(rng):
    anchor = rng.uniform(-1, 1, 15)
    emb = AnchoredEmbedding(15, 3, seed=4, anchor=anchor)
    assert emb.low_dim == 4 and emb.n_random == 3  # (alpha, y)
    assert_allclose(emb.lift(emb.origin), anchor)
    Z = emb.low_box.sample(100, rng)
    X = emb.lift(Z)
    assert np.all(np.abs(X) <= 1.0)
    raw = Z[:, :1] * anchor + Z[:, 1:] @ emb.A.T
    assert_allclose(X, np.clip(raw, -1, 1))
    off = AnchoredEmbedding(15, 3, seed=4, anchor=anchor, mode="offset", half_width=0.5)
    assert off.low_dim == 3
    assert_allclose(off.lift(np.zeros(3)), anchor)
    assert_allclose(off.lift(Z[:, 1:] * 0.5), np.clip(anchor + 0.5 * Z[:, 1:] @ off.A.T, -1, 1))
    back = embedding_from_dict(json.loads(json.dumps(emb.to_dict())))
    assert_array_equal(back.matrix, emb.matrix)
    assert back.low_dim == 4


def test_bad_arguments():
    with pytest.raises(ValueError, match="low_dim"):
        GaussianEmbedding(10, 0, seed=0)
    with pytest.raises(ValueError, match="seed"):
        HashingEmbedding(10, 2, seed=-1)
    with pytest.raises(TypeError, match="seed"):
        HashingEmbedding(10, 2, seed=1.5)
    with pytest.raises(ValueError, match="half_width"):
        GaussianEmbedding(10, 2, seed=0, half_width=0.0)
    with pytest.raises(ValueError, match="anchor"):
        AnchoredEmbedding(4, 2, seed=0, anchor=[0.0, 2.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="mode"):
        AnchoredEmbedding(4, 2, seed=0, anchor=np.zeros(4), mode="sideways")
    with pytest.raises(ValueError, match="unknown embedding kind 'nope'"):
        embedding_from_dict({"kind": "nope"})
    with pytest.raises(ValueError, match=r"Y must have shape \(n, 2\)"):
        GaussianEmbedding(10, 2, seed=0).lift(np.zeros(3))
