"""A row table's groups (rows alike in cell and row attributes) are what sorting their keys
finds: counted by cell when the table has no row attributes, sorted otherwise."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from prereg.decide.evaluate import Selections
from prereg.decide.table import RowTable


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 8).flatmap(lambda k: st.tuples(st.just(k), st.lists(st.integers(0, k - 1)))))
def test_groups_by_cell_are_the_sorted_distinct_cells(drawn):
    n_cells, cell = drawn
    cell = np.array(cell, dtype=np.int64)
    cells = tuple({"id": f"c{i}", "split": "s", "rows": 1, "levels": {}} for i in range(n_cells))
    got = Selections(RowTable(ids=[str(i) for i in range(cell.size)], cell=cell, cells=cells))
    _, first, group = np.unique(cell, return_index=True, return_inverse=True)
    assert got.group.tolist() == group.reshape(-1).tolist()
    assert got.n_groups == first.size
    assert got.group_cell.tolist() == cell[first].tolist()
    assert got.group_attrs == {}
