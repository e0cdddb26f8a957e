"""sampler.clustering's graph pieces: its connected components label exactly as scipy.sparse.csgraph does, and its
mutual-neighbour edges are the definition's."""
import numpy as np
import pytest
from scipy import sparse
from scipy.sparse import csgraph

from nestgrad.sampler.clustering import _mutual_edges, connected_components


@pytest.mark.parametrize("seed", range(5))
def test_components_and_their_numbering_match_scipy(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 300))
        m = int(rng.integers(0, 2 * n))
        rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
        graph = sparse.coo_matrix((np.ones(m), (rows, cols)), shape=(n, n)).tocsr()
        count, labels = csgraph.connected_components(graph, directed=False)
        got_count, got_labels = connected_components(rows, cols, n)
        assert got_count == count
        np.testing.assert_array_equal(got_labels, labels)


def test_a_chain_is_one_component_and_isolated_nodes_are_their_own():
    rows, cols = np.arange(9), np.arange(1, 10)  # 0-1-...-9, then 10 and 11 alone
    count, labels = connected_components(rows, cols, 12)
    assert count == 3 and list(labels) == [0] * 10 + [1, 2]


def test_mutual_edges_are_the_pairs_each_in_the_others_list():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, k = int(rng.integers(2, 60)), int(rng.integers(1, 8))
        nbrs = np.array([rng.choice(np.delete(np.arange(n), i), size=min(k, n - 1), replace=False)
                         for i in range(n)])
        rows, cols = _mutual_edges(nbrs)
        want = [(i, int(j)) for i in range(n) for j in nbrs[i] if i in nbrs[j]]  # row-major order
        assert list(zip(rows.tolist(), cols.tolist())) == want
