"""Constraints: validation errors, merging, views, generators and CSV reading."""

from __future__ import annotations

import re

import numpy as np
import pytest

from spectralink import Constraints
from spectralink.constraints import as_constraints, read_constraints_csv

# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("ml", "cl", "pattern"),
    [
        ([(0, 5)], None, r"must-link pair \(0, 5\) has an index out of range \[0, 5\)"),
        (None, [(7, 1)], r"cannot-link pair \(7, 1\) has an index out of range"),
        ([(-1, 2)], None, r"must-link pair \(-1, 2\) has an index out of range"),
        (None, [(2, -3)], r"cannot-link pair \(2, -3\) has an index out of range"),
        ([(3, 3)], None, r"must-link pair \(3, 3\) joins a point with itself"),
        (None, [(1, 1)], r"cannot-link pair \(1, 1\) joins a point with itself"),
        ([(1, 2)], [(2, 1)], r"pair \(1, 2\) is both a must-link and a cannot-link"),
    ],
)
def test_invalid_pairs_name_the_pair(ml, cl, pattern):
    with pytest.raises(ValueError, match=pattern):
        Constraints(ml, cl, n_samples=5)


def test_cannot_link_inside_must_link_chain_reports_the_chain():
    ml = [(0, 1), (1, 2), (2, 3), (5, 6)]
    with pytest.raises(ValueError) as info:
        Constraints(ml, [(4, 5), (0, 3)], n_samples=8)
    msg = str(info.value)
    assert "cannot-link (0, 3)" in msg
    assert "0 - 1 - 2 - 3" in msg
    assert "inconsistent" in msg


def test_chain_message_is_a_shortest_path():
    # two chains from 0 to 4; the short one goes through 9
    ml = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 9), (9, 4)]
    with pytest.raises(ValueError, match=re.escape("(0 - 9 - 4)")):
        Constraints(ml, [(0, 4)], n_samples=10)


@pytest.mark.parametrize(
    ("weights", "pattern"),
    [
        ([1.0, 0.0], r"weight 0\.0 of pair \(1, 2\) must be positive and finite"),
        ([-1.0, 1.0], r"weight -1\.0 of pair \(0, 1\)"),
        ([1.0, np.nan], r"weight nan of pair \(1, 2\)"),
        ([np.inf, 1.0], r"weight inf of pair \(0, 1\)"),
        ([1.0], r"weights has 1 entries but there are 1 must-links and 1 cannot-links"),
        ([1.0, 1.0, 1.0], r"weights has 3 entries"),
    ],
)
def test_bad_weights(weights, pattern):
    with pytest.raises(ValueError, match=pattern):
        Constraints([(0, 1)], [(1, 2)], n_samples=3, weights=weights)


@pytest.mark.parametrize(
    ("ml", "pattern"),
    [
        ([0, 1, 2], r"must_link must be an array of shape \(n_pairs, 2\), got shape \(3,\)"),
        ([(0, 1, 2)], r"must_link must be an array of shape \(n_pairs, 2\), got shape \(1, 3\)"),
        ([(0.5, 1.0)], r"non-integer index"),
        ([(np.nan, 1.0)], r"must contain integer point indices"),
        ([("a", "b")], r"must contain integer point indices"),
    ],
)
def test_wrong_shapes_and_types(ml, pattern):
    with pytest.raises(ValueError, match=pattern):
        Constraints(ml, None, n_samples=4)


def test_wrong_shape_cannot_link_named():
    with pytest.raises(ValueError, match="cannot_link must be an array of shape"):
        Constraints(None, np.zeros((2, 3), dtype=int), n_samples=4)


@pytest.mark.parametrize("n", [None, 0, -3, 2.5, True, "10"])
def test_bad_n_samples(n):
    with pytest.raises(ValueError, match="n_samples"):
        Constraints([(0, 1)], None, n_samples=n)


def test_float_integral_indices_accepted():
    c = Constraints(np.array([[0.0, 2.0]]), None, n_samples=3)
    assert c.must_link.dtype == np.int64
    np.testing.assert_array_equal(c.must_link, [[0, 2]])


# --------------------------------------------------------------------------- merging


def test_duplicates_merged_in_either_order_keeping_largest_weight():
    c = Constraints(
        must_link=[(0, 1), (1, 0), (2, 3)],
        cannot_link=[(4, 0), (0, 4), (0, 4)],
        n_samples=5,
        weights=[0.5, 2.0, 1.0, 0.3, 0.7, 0.1],
    )
    np.testing.assert_array_equal(c.must_link, [[0, 1], [2, 3]])
    np.testing.assert_allclose(c.ml_weights, [2.0, 1.0])
    np.testing.assert_array_equal(c.cannot_link, [[0, 4]])
    np.testing.assert_allclose(c.cl_weights, [0.7])
    assert len(c) == 3 and c.n_must_link == 2 and c.n_cannot_link == 1
    assert c.is_weighted


def test_empty_constraints():
    c = Constraints(n_samples=4)
    assert c.is_empty and len(c) == 0 and not c.is_weighted
    assert c.must_link.shape == (0, 2) and c.cannot_link.shape == (0, 2)
    np.testing.assert_array_equal(c.ml_components, np.arange(4))
    assert c.signed_matrix.nnz == 0
    assert "n_must_link=0" in repr(c)


# --------------------------------------------------------------------------- views


@pytest.fixture
def small():
    return Constraints(
        must_link=[(0, 1), (1, 2), (5, 6)],
        cannot_link=[(0, 3), (2, 6)],
        n_samples=8,
        weights=[1.0, 2.0, 0.5, 3.0, 0.25],
    )


def test_signed_matrix_is_symmetric_with_signed_weights(small):
    Q = small.signed_matrix.toarray()
    np.testing.assert_array_equal(Q, Q.T)
    np.testing.assert_array_equal(np.diag(Q), 0)
    assert Q[0, 1] == 1.0 and Q[1, 2] == 2.0 and Q[6, 5] == 0.5
    assert Q[3, 0] == -3.0 and Q[2, 6] == -0.25
    assert np.count_nonzero(Q) == 2 * len(small)
    assert small.Y is small.signed_matrix


def test_targets_layout(small):
    i, j, t, w = small.targets
    n = small.n_samples
    assert len(i) == n + len(small)
    np.testing.assert_array_equal(i[:n], np.arange(n))
    np.testing.assert_array_equal(j[:n], np.arange(n))
    np.testing.assert_array_equal(t[:n], 1)
    np.testing.assert_array_equal(w[:n], 1)
    ml = slice(n, n + small.n_must_link)
    np.testing.assert_array_equal(np.column_stack([i[ml], j[ml]]), small.must_link)
    np.testing.assert_array_equal(t[ml], 1)
    np.testing.assert_array_equal(w[ml], small.ml_weights)
    cl = slice(n + small.n_must_link, None)
    np.testing.assert_array_equal(np.column_stack([i[cl], j[cl]]), small.cannot_link)
    np.testing.assert_array_equal(t[cl], 0)
    np.testing.assert_array_equal(w[cl], small.cl_weights)


def test_ml_components(small):
    comp = small.ml_components
    np.testing.assert_array_equal(comp, [0, 0, 0, 1, 2, 3, 3, 4])
    assert small.n_ml_components == 5
    np.testing.assert_array_equal(small.constrained_points, [0, 1, 2, 3, 5, 6])


def test_violated_and_subset(small):
    labels = np.array([0, 0, 1, 0, 2, 1, 1, 2])
    # ML (0,1) ok, (1,2) broken, (5,6) ok; CL (0,3) broken, (2,6) broken
    np.testing.assert_array_equal(small.violated(labels), [False, True, False, True, True])
    with pytest.raises(ValueError, match="expected \\(8,\\)"):
        small.violated(labels[:3])
    sub = small.subset([0, 1, 3, 7])
    np.testing.assert_array_equal(sub.must_link, [[0, 1]])
    np.testing.assert_array_equal(sub.cannot_link, [[0, 2]])
    np.testing.assert_allclose(sub.cl_weights, [3.0])


def test_as_constraints():
    assert as_constraints(None, 3).is_empty
    c = as_constraints(([(0, 1)], [(1, 2)]), 3)
    assert c.n_must_link == 1 and c.n_cannot_link == 1
    assert as_constraints(c, 3) is c
    with pytest.raises(ValueError, match="built for 3 points but X has 4"):
        as_constraints(c, 4)
    with pytest.raises(TypeError, match="constraints must be None"):
        as_constraints("pairs.csv", 3)


# --------------------------------------------------------------------------- generators


def test_from_labels_counts_and_truth():
    rng = np.random.RandomState(0)
    y = rng.randint(0, 4, size=300)
    c = Constraints.from_labels(y, 500, random_state=1)
    assert len(c) == 500  # distinct pairs, none merged away
    assert np.all(y[c.must_link[:, 0]] == y[c.must_link[:, 1]])
    assert np.all(y[c.cannot_link[:, 0]] != y[c.cannot_link[:, 1]])
    assert np.all(c.must_link[:, 0] < c.must_link[:, 1])
    # roughly a quarter of random pairs share one of 4 balanced labels
    assert 0.15 < c.n_must_link / 500 < 0.35


def test_from_labels_deterministic_and_seed_dependent():
    y = np.repeat(np.arange(3), 20)
    a = Constraints.from_labels(y, 100, random_state=7)
    b = Constraints.from_labels(y, 100, random_state=7)
    d = Constraints.from_labels(y, 100, random_state=8)
    np.testing.assert_array_equal(a.must_link, b.must_link)
    np.testing.assert_array_equal(a.cannot_link, b.cannot_link)
    assert not (
        np.array_equal(a.cannot_link, d.cannot_link) and np.array_equal(a.must_link, d.must_link)
    )


def test_from_labels_all_pairs_and_errors():
    y = np.array([0, 0, 1, 1])
    c = Constraints.from_labels(y, 6, random_state=0)
    assert len(c) == 6
    with pytest.raises(ValueError, match="exceeds the 6 distinct pairs of 4 points"):
        Constraints.from_labels(y, 7)
    with pytest.raises(ValueError, match=r"'n_pairs' parameter of from_labels must be an int"):
        Constraints.from_labels(y, -1)
    with pytest.raises(ValueError, match="1-d array"):
        Constraints.from_labels(y.reshape(2, 2), 1)


def test_from_labeled_subset_all_pairs():
    rng = np.random.RandomState(3)
    y = rng.randint(0, 3, size=100)
    c = Constraints.from_labeled_subset(y, 12, random_state=0)
    assert len(c) == 12 * 11 // 2
    idx = c.labeled_indices
    assert len(idx) == 12 and len(np.unique(idx)) == 12
    np.testing.assert_array_equal(c.labeled_y, y[idx])
    np.testing.assert_array_equal(c.constrained_points, np.sort(idx))
    assert np.all(y[c.must_link[:, 0]] == y[c.must_link[:, 1]])
    assert np.all(y[c.cannot_link[:, 0]] != y[c.cannot_link[:, 1]])
    same = Constraints.from_labeled_subset(y, 12, random_state=0)
    np.testing.assert_array_equal(same.labeled_indices, idx)
    with pytest.raises(ValueError, match="exceeds the number of points"):
        Constraints.from_labeled_subset(y, 101)


@pytest.mark.parametrize(
    "unlabelled",
    [-1, -2, np.nan, None, ""],
    ids=["minus1", "minus2", "nan", "none", "empty"],
)
def test_partial_labels_never_pair_an_unlabelled_point(unlabelled):
    rng = np.random.RandomState(0)
    y = list(rng.randint(0, 3, size=150))
    if unlabelled == "":
        y = [str(v) for v in y]
    for t in range(100, 150):
        y[t] = unlabelled
    y = np.array(y, dtype=object if unlabelled is None else None)
    known = np.zeros(150, dtype=bool)
    known[:100] = True
    c = Constraints.from_labels(y, 300, random_state=0)
    assert len(c) == 300
    assert known[c.constrained_points].all()
    assert np.all(y[c.must_link[:, 0]] == y[c.must_link[:, 1]])
    s = Constraints.from_labeled_subset(y, 30, random_state=0)
    assert len(s) == 30 * 29 // 2
    assert known[s.labeled_indices].all() and known[s.constrained_points].all()


def test_partial_labels_limits_count_labelled_points_only():
    y = np.array([0, 1, -1, 1, -1])
    with pytest.raises(ValueError, match="3 labelled points .2 of the 5 points are unlabelled"):
        Constraints.from_labels(y, 4)
    assert len(Constraints.from_labels(y, 3, random_state=0)) == 3
    with pytest.raises(ValueError, match=r"labelled points \(3 of 5\)"):
        Constraints.from_labeled_subset(y, 4)
    c = Constraints.from_labeled_subset(y, 3, random_state=0)
    np.testing.assert_array_equal(c.labeled_indices, [0, 1, 3])


# --------------------------------------------------------------------------- CSV


@pytest.mark.parametrize(
    ("ml_kind", "cl_kind"),
    [
        ("ml", "cl"),
        ("ML", "CL"),
        ("must-link", "cannot-link"),
        ("must_link", "cannot_link"),
        ("mustlink", "cannotlink"),
        ("1", "-1"),
        ("+1", "-1"),
    ],
)
def test_csv_kind_spellings(tmp_path, ml_kind, cl_kind):
    path = tmp_path / "pairs.csv"
    path.write_text(f"0,1,{ml_kind}\n2, 3 ,{cl_kind}\n")
    c = Constraints.from_csv(path, n_samples=4)
    np.testing.assert_array_equal(c.must_link, [[0, 1]])
    np.testing.assert_array_equal(c.cannot_link, [[2, 3]])


def test_csv_header_weights_comments_and_blank_lines(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("i,j,kind,weight\n# a comment\n0,1,ml,0.5\n\n3,2,cl,2\n1,2,ml,\n")
    c = read_constraints_csv(path, n_samples=4)
    np.testing.assert_array_equal(c.must_link, [[0, 1], [1, 2]])
    np.testing.assert_allclose(c.ml_weights, [0.5, 1.0])
    np.testing.assert_array_equal(c.cannot_link, [[2, 3]])
    np.testing.assert_allclose(c.cl_weights, [2.0])


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("0,1,ml\n1,2\n", r"pairs\.csv:2: expected 'i,j,kind\[,weight\]'"),
        ("0,1,ml\n1,x,cl\n", r"pairs\.csv:2: indices must be integers"),
        ("i,j,kind\n0,1,ml\n1,2,maybe\n", r"pairs\.csv:3: kind 'maybe' is not one of"),
        ("0,1,ml,heavy\n", r"pairs\.csv:1: weight 'heavy' is not a number"),
        ("0,1,ml,1,extra\n", r"pairs\.csv:1: expected"),
    ],
)
def test_csv_errors_have_line_numbers(tmp_path, text, pattern):
    path = tmp_path / "pairs.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=pattern):
        Constraints.from_csv(path, n_samples=5)


def test_csv_validation_errors_propagate(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("0,9,ml\n")
    with pytest.raises(ValueError, match=r"must-link pair \(0, 9\) has an index out of range"):
        Constraints.from_csv(path, n_samples=5)


# --------------------------------------------------------------------------- algebra


def test_pairs_and_weights_follow_must_links_then_cannot_links(small):
    np.testing.assert_array_equal(small.pairs, [[0, 1], [1, 2], [5, 6], [0, 3], [2, 6]])
    np.testing.assert_allclose(small.weights, [1.0, 2.0, 0.5, 3.0, 0.25])
    np.testing.assert_allclose(small.ml_weights, [1.0, 2.0, 0.5])
    np.testing.assert_allclose(small.cl_weights, [3.0, 0.25])
    assert Constraints(n_samples=3).pairs.shape == (0, 2)


def test_take_keeps_kinds_and_weights_in_any_order(small):
    sub = small.take([4, 1, 1])
    np.testing.assert_array_equal(sub.must_link, [[1, 2]])
    np.testing.assert_array_equal(sub.cannot_link, [[2, 6]])
    np.testing.assert_allclose(sub.weights, [2.0, 0.25])
    assert sub.n_samples == small.n_samples
    assert small.take([]).is_empty
    whole = small.take(np.arange(len(small))[::-1])
    np.testing.assert_array_equal(whole.pairs, small.pairs)
    np.testing.assert_allclose(whole.weights, small.weights)


@pytest.mark.parametrize(
    ("indices", "pattern"),
    [
        ([5], r"pair position 5 is out of range \[0, 5\)"),
        ([-1], r"pair position -1 is out of range"),
        ([0.5], "integer pair positions"),
        ([[0, 1]], "1-d array"),
    ],
)
def test_take_refuses_bad_positions(small, indices, pattern):
    with pytest.raises(ValueError, match=pattern):
        small.take(indices)


def test_union_merges_duplicates_keeping_the_larger_weight(small):
    other = Constraints([(1, 0), (3, 4)], [(7, 6)], n_samples=8, weights=[4.0, 1.0, 0.5])
    both = small | other
    np.testing.assert_array_equal(both.must_link, [[0, 1], [1, 2], [3, 4], [5, 6]])
    np.testing.assert_allclose(both.ml_weights, [4.0, 2.0, 1.0, 0.5])
    np.testing.assert_array_equal(both.cannot_link, [[0, 3], [2, 6], [6, 7]])
    np.testing.assert_allclose(both.cl_weights, [3.0, 0.25, 0.5])
    np.testing.assert_array_equal(small.union(other).pairs, both.pairs)
    assert (small | Constraints(n_samples=8)).pairs.tolist() == small.pairs.tolist()


def test_union_refuses_contradictions_other_sizes_and_other_types(small):
    with pytest.raises(ValueError, match=r"pair \(0, 3\) is both a must-link and a cannot-link"):
        small | Constraints([(0, 3)], None, n_samples=8)
    with pytest.raises(ValueError, match=r"cannot-link \(0, 2\) joins two points linked"):
        small | Constraints(None, [(0, 2)], n_samples=8)
    with pytest.raises(ValueError, match="over 8 points with constraints over 9 points"):
        small.union(Constraints(n_samples=9))
    with pytest.raises(TypeError, match="only join Constraints"):
        small.union(([(0, 1)], None))
    with pytest.raises(TypeError):
        small | ([(0, 1)], None)


@pytest.mark.parametrize("weighted", [False, True])
def test_to_csv_round_trips(tmp_path, small, weighted):
    c = small if weighted else Constraints(small.must_link, small.cannot_link, n_samples=8)
    path = tmp_path / "pairs.csv"
    c.to_csv(path)
    header = path.read_text().splitlines()[0]
    assert header == ("i,j,kind,weight" if weighted else "i,j,kind")
    back = Constraints.from_csv(path, 8)
    np.testing.assert_array_equal(back.pairs, c.pairs)
    np.testing.assert_array_equal(back.weights, c.weights)


def test_to_csv_round_trips_ids_and_exact_weights(tmp_path):
    c = Constraints([(0, 1)], [(1, 2)], n_samples=3, weights=[0.1 + 0.2, 2.0])
    ids = ["a", "b,c", "d"]
    path = tmp_path / "pairs.csv"
    c.to_csv(path, ids=ids)
    assert path.read_text().splitlines()[1:] == ['a,"b,c",ml,0.30000000000000004', '"b,c",d,cl,2']
    back = Constraints.from_csv(path, 3, ids=ids)
    np.testing.assert_array_equal(back.pairs, c.pairs)
    np.testing.assert_array_equal(back.weights, c.weights)
    with pytest.raises(ValueError, match="2 IDs for 3 rows"):
        c.to_csv(path, ids=["a", "b"])
    with pytest.raises(ValueError, match="the ID 'a' names more than one row"):
        c.to_csv(path, ids=["a", "a", "b"])


def test_write_pairs_csv_leaves_questions_unanswered(tmp_path):
    from spectralink.constraints import write_pairs_csv

    path = tmp_path / "questions.csv"
    write_pairs_csv(path, [(0, 1), (2, 3)])
    assert path.read_text() == "i,j,kind\n0,1,\n2,3,\n"
    back = Constraints.from_csv(path, 4, skip_unanswered=True)
    assert back.is_empty and back.n_unanswered == 2
    with pytest.raises(ValueError, match="2 pairs but 1 kinds"):
        write_pairs_csv(path, [(0, 1), (2, 3)], kinds=["ml"])


def test_labeled_mask_is_public():
    from spectralink.constraints import labeled_mask

    np.testing.assert_array_equal(labeled_mask([0, -1, 2]), [True, False, True])
    np.testing.assert_array_equal(labeled_mask(["a", "", None]), [True, False, False])
    np.testing.assert_array_equal(labeled_mask([1.0, np.nan, -2.0]), [True, False, False])
