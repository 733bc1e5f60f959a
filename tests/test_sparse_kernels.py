"""The compiled sparse kernels of the linear learner against numpy references."""
import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_treeboost.learning._columns import take_columns
from spacy_treeboost.learning._merge import copy_columns, merge_levels, pattern_codes
from spacy_treeboost.learning._order import order_by_count
from spacy_treeboost.learning._vectors import column_values, squared_rmatvec


@st.composite
def csc_parts(draw):
    n_rows = draw(st.integers(1, 12))
    n_cols = draw(st.integers(0, 10))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = numpy.random.default_rng(seed)
    lengths = rng.integers(0, n_rows + 1, n_cols)
    indptr = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(numpy.int64)
    indices = numpy.concatenate([numpy.sort(rng.choice(n_rows, n, replace=False)) for n in lengths] + [[]])
    data = rng.integers(1, 6, int(indptr[-1])).astype(numpy.float64)
    return n_rows, indptr, indices.astype(numpy.int32), data, rng


@given(csc_parts(), st.sampled_from([numpy.uint8, numpy.int32]))
@settings(max_examples=60, deadline=None)
def test_copy_columns_places_every_column(parts, count_type):
    """The columns of a CSC matrix, split between two miners at random, copied into a random order of output
    columns by each miner in turn: every output column holds its pattern's entries."""
    _, indptr, indices, data, rng = parts
    n_cols = len(indptr) - 1
    order = rng.permutation(n_cols).astype(numpy.int64)
    owner = rng.integers(0, 2, n_cols).astype(numpy.int64)
    starts, lengths = indptr[:-1].astype(numpy.int64), numpy.diff(indptr).astype(numpy.int64)
    dst = numpy.concatenate([[0], numpy.cumsum(lengths[order])]).astype(numpy.int64)
    docs = numpy.full(len(indices), -1, dtype=numpy.int32)
    counts = numpy.full(len(indices), -1.0)
    for shard in (0, 1):
        copy_columns(order, owner, shard, starts, lengths, dst, indices, data.astype(count_type), docs, counts)
    for c, col in enumerate(order):
        a, b = indptr[col], indptr[col + 1]
        numpy.testing.assert_array_equal(docs[dst[c]:dst[c] + b - a], indices[a:b])
        numpy.testing.assert_array_equal(counts[dst[c]:dst[c] + b - a], data[a:b])
    assert counts.dtype == numpy.float64 and not (docs < 0).any()
    for out_type in ((numpy.uint8, numpy.int32) if count_type == numpy.uint8 else (numpy.int32,)):
        narrow = numpy.zeros(len(indices), dtype=out_type)
        for shard in (0, 1):
            copy_columns(order, owner, shard, starts, lengths, dst, indices, data.astype(count_type), docs, narrow)
        numpy.testing.assert_array_equal(narrow, counts)


def test_copy_columns_refuses_to_narrow_wide_counts_and_places_outside():
    one, empty = numpy.zeros(1, dtype=numpy.int64), numpy.zeros(0, dtype=numpy.int64)
    with pytest.raises(ValueError, match="uint8 output counts need uint8 source counts"):
        copy_columns(empty, empty, 0, empty, empty, empty, numpy.zeros(1, dtype=numpy.int32),
                     numpy.zeros(1, dtype=numpy.int32), numpy.zeros(1, dtype=numpy.int32),
                     numpy.zeros(1, dtype=numpy.uint8))
    i32 = numpy.zeros(1, dtype=numpy.int32)
    with pytest.raises(ValueError, match="lies outside"):
        copy_columns(numpy.array([1], dtype=numpy.int64), one, 0, one, one, one, i32, i32, i32, i32)
    with pytest.raises(ValueError, match="lies outside"):
        copy_columns(one, one, 0, one, numpy.array([2], dtype=numpy.int64), one, i32, i32, i32, i32)


@given(st.lists(st.integers(1, 255), max_size=200), st.integers(0, 15))
@settings(max_examples=60, deadline=None)
def test_log_of_byte_counts_is_numpys_log_bit_for_bit(values, offset):
    from spacy_treeboost.learning.features import log_counts

    counts = numpy.array([7] * offset + values, dtype=numpy.uint8)[offset:]  # any alignment
    want = numpy.log(counts.astype(numpy.float64))
    assert log_counts(counts).tobytes() == want.tobytes()
    assert log_counts(counts.astype(numpy.int32)).tobytes() == want.tobytes()


def test_kernels_refuse_arrays_that_do_not_fit():
    one = numpy.zeros(1, dtype=numpy.int64)
    docs, counts = numpy.zeros(2, dtype=numpy.int32), numpy.zeros(2)
    zero = numpy.zeros(1, dtype=numpy.int64)
    with pytest.raises(ValueError, match="outside"):
        copy_columns(zero, zero, 0, zero, numpy.array([3], dtype=numpy.int64), zero, docs,
                     numpy.zeros(2, dtype=numpy.int32), docs, counts)
    with pytest.raises(ValueError, match="one entry per merged pattern"):
        copy_columns(zero, zero, 0, numpy.zeros(2, dtype=numpy.int64), one, zero, docs,
                     numpy.zeros(2, dtype=numpy.int32), docs, counts)


@given(st.lists(st.integers(0, 40), max_size=300))
@settings(max_examples=80, deadline=None)
def test_order_by_count_is_numpy_stable_argsort_of_minus_df_and_its_inverse(values):
    df = numpy.array(values, dtype=numpy.int64)
    order, inverse = order_by_count(df)
    numpy.testing.assert_array_equal(order, numpy.argsort(-df, kind="stable"))
    numpy.testing.assert_array_equal(order[inverse], numpy.arange(len(df)))
    with pytest.raises(ValueError, match="must not be negative"):
        order_by_count(numpy.append(df, -1))


def test_merge_levels_by_hand():
    """Two miners over 2 roots. Miner 0: a (root 1's child), then c (child of a); miner 1: b (root 0's child),
    b2 (root 1's child), then d (child of b). Merged: level 2 by parent (b under root 0, then a and b2 under root
    1: miner 0 first), level 3 by parent place (c under a at 3, d under b at 2: d first)."""
    i32 = numpy.int32
    parent = numpy.array([1, 2, 0, 1, 2], dtype=i32)  # miner 0: a, c; miner 1: b, b2, d (local indices, roots 0-1)
    size = numpy.array([2, 3, 2, 2, 3], dtype=i32)
    position, owner, merged_parent = merge_levels(parent, size, numpy.array([0, 2, 5], dtype=numpy.int64), 2)
    assert position.tolist() == [2, 0, 3, 4, 1]  # b, a, b2, d, c
    assert owner.tolist() == [1, 0, 1, 1, 0]
    assert merged_parent.tolist() == [0, 1, 1, 2, 3]


def test_merge_levels_refuses_patterns_out_of_level_order():
    i32, bounds = numpy.int32, numpy.array([0, 2], dtype=numpy.int64)
    with pytest.raises(ValueError, match="level order"):
        merge_levels(numpy.array([0, 1], dtype=i32), numpy.array([3, 2], dtype=i32), bounds, 1)
    with pytest.raises(ValueError, match="level order"):  # a child before its parent
        merge_levels(numpy.array([2, 0], dtype=i32), numpy.array([3, 2], dtype=i32), bounds, 1)
    with pytest.raises(ValueError, match="one entry per pattern"):
        merge_levels(numpy.array([0], dtype=i32), numpy.array([2, 2], dtype=i32), bounds, 1)


def test_pattern_codes_by_hand_and_refusals():
    i32 = numpy.int32
    # roots a (0) and b (1); a's child c at depth 1 (2); c's sibling d (3, extends 2)
    start, depth, label = pattern_codes(numpy.array([-1, -1, 0, 2], dtype=i32), numpy.array([0, 0, 1, 1], dtype=i32),
                                        numpy.array([5, 6, 7, 8], dtype=i32), numpy.array([1, 1, 2, 3], dtype=i32))
    assert start.tolist() == [0, 1, 2, 4, 7]
    assert depth.tolist() == [0, 0, 0, 1, 0, 1, 1] and label.tolist() == [5, 6, 5, 7, 5, 7, 8]
    with pytest.raises(ValueError, match="ancestors do not number"):
        pattern_codes(*(numpy.array(a, dtype=i32) for a in ([-1, 0], [0, 1], [1, 2], [1, 1])))
    with pytest.raises(ValueError, match="ancestors do not number"):
        pattern_codes(*(numpy.array(a, dtype=i32) for a in ([1, 0], [0, 1], [1, 2], [2, 2])))  # a cycle
    with pytest.raises(ValueError, match="every pattern has a node"):
        pattern_codes(*(numpy.array(a, dtype=i32) for a in ([-1], [0], [1], [0])))


@given(csc_parts(), st.sampled_from([numpy.int32, numpy.int64]), st.sampled_from(["mixed", "one", "nan"]))
@settings(max_examples=80, deadline=None)
def test_column_values_are_each_columns_one_value_or_none(parts, index_type, kind):
    _, indptr, indices, data, rng = parts
    if kind != "mixed":
        data = numpy.repeat(rng.normal(size=len(indptr) - 1), numpy.diff(indptr))
    if kind == "nan" and len(data):
        data[rng.integers(len(data))] = numpy.nan
    expected = numpy.zeros(len(indptr) - 1)
    for j in range(len(indptr) - 1):
        column = data[indptr[j]:indptr[j + 1]]
        if len(column) and (numpy.isnan(column).any() or not (column == column[0]).all()):
            expected = None
            break
        expected[j] = column[0] if len(column) else 0.0
    found = column_values(indptr.astype(index_type), data)
    if expected is None:
        assert found is None
    else:
        assert found.tobytes() == expected.tobytes()


@given(csc_parts(), st.sampled_from([numpy.int32, numpy.int64]))
@settings(max_examples=80, deadline=None)
def test_squared_rmatvec_is_scipys_product_with_the_squared_matrix_bit_for_bit(parts, index_type):
    from scipy.sparse import csr_matrix

    n_rows, indptr, indices, data, rng = parts
    data = data * rng.normal(size=len(data))
    u = rng.normal(size=n_rows)
    squared_transpose = csr_matrix((data * data, indices.astype(index_type), indptr.astype(index_type)),
                                   shape=(len(indptr) - 1, n_rows))
    out = numpy.full(len(indptr) - 1, numpy.nan)
    squared_rmatvec(indptr.astype(index_type), indices.astype(index_type), data, u, out)
    assert out.tobytes() == (squared_transpose @ u).tobytes()


@given(csc_parts(), st.sampled_from([numpy.int32, numpy.int64]), st.integers(0, 5))
@settings(max_examples=80, deadline=None)
def test_take_columns_is_the_selected_columns_then_the_one_entry_columns(parts, index_type, n_tail):
    from scipy.sparse import csc_matrix, hstack

    n_rows, indptr, indices, data, rng = parts
    n_cols = len(indptr) - 1
    columns = rng.choice(n_cols, int(rng.integers(0, n_cols + 1)), replace=False) if n_cols else numpy.zeros(0, int)
    rows, values = rng.integers(0, n_rows, n_tail), rng.normal(size=n_tail)
    X = csc_matrix((data, indices, indptr), shape=(n_rows, n_cols))
    tail = csc_matrix((values, rows, numpy.arange(n_tail + 1)), shape=(n_rows, n_tail))
    out_indptr, out_indices, out_data = take_columns(indptr.astype(index_type), indices.astype(index_type), data,
                                                     numpy.asarray(columns, dtype=numpy.int64),
                                                     rows.astype(index_type), values)
    expected = hstack([X[:, columns], tail], format="csc")
    assert out_indptr.dtype == out_indices.dtype == index_type
    numpy.testing.assert_array_equal(out_indptr, expected.indptr)
    numpy.testing.assert_array_equal(out_indices, expected.indices)
    assert out_data.tobytes() == expected.data.astype(numpy.float64).tobytes()


def test_new_kernels_refuse_arrays_that_do_not_fit():
    indptr, indices, data = numpy.array([0, 2], dtype=numpy.int32), numpy.array([0, 1], dtype=numpy.int32), \
        numpy.ones(2)
    with pytest.raises(ValueError, match="do not describe one CSC matrix"):
        column_values(numpy.array([0, 3], dtype=numpy.int32), data)
    with pytest.raises(ValueError, match="must not decrease"):
        column_values(numpy.array([0, 2, 1, 2], dtype=numpy.int32), data)
    with pytest.raises(ValueError, match="one entry per column"):
        squared_rmatvec(indptr, indices, data, numpy.ones(2), numpy.zeros(2))
    no_tail = numpy.zeros(0, dtype=numpy.int32), numpy.zeros(0)
    with pytest.raises(ValueError, match="column 1 lies outside"):
        take_columns(indptr, indices, data, numpy.array([1], dtype=numpy.int64), *no_tail)
    with pytest.raises(ValueError, match="the same length"):
        take_columns(indptr, indices, data, numpy.array([0], dtype=numpy.int64), no_tail[0], numpy.ones(1))


def test_split_csc_rows_refuses_runs_that_do_not_cover_the_columns():
    from spacy_treeboost.learning._columns import split_csc_rows

    indptr, indices = numpy.array([0, 1, 2], dtype=numpy.int64), numpy.array([0, 1], dtype=numpy.int32)
    args = (indptr, indices, numpy.ones(2), numpy.array([0, 1], dtype=numpy.uint8), numpy.zeros(2, dtype=numpy.int32))
    serial = lambda work, items: [work(item) for item in items]  # noqa: E731
    for bounds in ([(0, 1)], [(0, 1), (0, 2)], [(1, 2)]):
        with pytest.raises(ValueError, match="consecutive runs of columns"):
            split_csc_rows(*args, serial, bounds)
    (ip0, ix0, _), (ip1, ix1, _) = split_csc_rows(*args, serial, [(0, 1), (1, 2)])
    assert ip0.tolist() == [0, 1, 1] and ip1.tolist() == [0, 0, 1] and ix0.tolist() == [0] and ix1.tolist() == [0]


@given(csc_parts(), st.sampled_from([numpy.int32, numpy.int64]), st.integers(0, 5))
@settings(max_examples=40, deadline=None)
def test_take_columns_and_split_without_values_take_the_structure_alone(parts, index_type, n_tail):
    from spacy_treeboost.learning._columns import split_csc_rows

    n_rows, indptr, indices, data, rng = parts
    n_cols = len(indptr) - 1
    columns = numpy.asarray(rng.choice(n_cols, int(rng.integers(0, n_cols + 1)), replace=False) if n_cols else [],
                            dtype=numpy.int64)
    rows, values = rng.integers(0, n_rows, n_tail).astype(index_type), rng.normal(size=n_tail)
    ip, ix = indptr.astype(index_type), indices.astype(index_type)
    with_values = take_columns(ip, ix, data, columns, rows, values)
    structure = take_columns(ip, ix, None, columns, rows, values)
    assert structure[0].tobytes() == with_values[0].tobytes() and structure[1].tobytes() == with_values[1].tobytes()
    assert len(structure[2]) == 0
    side = (rng.random(n_rows) < 0.4).astype(numpy.uint8)
    rank = numpy.zeros(n_rows, dtype=index_type)
    for s in (0, 1):
        rank[side == s] = numpy.arange(int((side == s).sum()))
    whole = (lambda work, items: [work(item) for item in items]), [(0, n_cols)]
    full = split_csc_rows(indptr.astype(numpy.int64), ix, data, side, rank, *whole)
    bare = split_csc_rows(indptr.astype(numpy.int64), ix, None, side, rank, *whole)
    for (p0, i0, d0), (p1, i1, d1) in zip(full, bare):
        assert p0.tobytes() == p1.tobytes() and i0.tobytes() == i1.tobytes() and len(d1) == 0
