"""sampler.clustering's numpy connected components label exactly as scipy.sparse.csgraph does."""
import numpy as np
import pytest

from nestgrad.sampler.clustering import connected_components

sparse = pytest.importorskip("scipy.sparse")
csgraph = pytest.importorskip("scipy.sparse.csgraph")


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
