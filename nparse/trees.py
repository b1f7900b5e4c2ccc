"""Properties of dependency trees given as head lists (index 0 is the root, ``heads[0] == -1``)."""

from __future__ import annotations


def children_of(heads: list[int]) -> list[list[int]]:
    """Dependents of every node, in word order."""
    kids: list[list[int]] = [[] for _ in heads]
    for d in range(1, len(heads)):
        if heads[d] >= 0:
            kids[heads[d]].append(d)
    return kids


def arcs_cross(h1: int, d1: int, h2: int, d2: int) -> bool:
    """Whether two arcs cross when drawn above the sentence (shared endpoints never cross)."""
    a1, b1 = min(h1, d1), max(h1, d1)
    a2, b2 = min(h2, d2), max(h2, d2)
    return a1 < a2 < b1 < b2 or a2 < a1 < b2 < b1


def is_projective(heads: list[int]) -> bool:
    """A tree is projective iff no two arcs cross (the root is word 0)."""
    n = len(heads) - 1
    # Each word's span of its own subtree must be contiguous: check with subtree sizes.
    kids = children_of(heads)
    lo = list(range(n + 1))
    hi = list(range(n + 1))
    size = [1] * (n + 1)
    for d in reversed(_topological(heads, kids)):
        h = heads[d]
        if h >= 0:
            lo[h] = min(lo[h], lo[d])
            hi[h] = max(hi[h], hi[d])
            size[h] += size[d]
    return all(hi[i] - lo[i] + 1 == size[i] for i in range(n + 1))


def _topological(heads: list[int], kids: list[list[int]]) -> list[int]:
    """Nodes reachable from the root, parents before children."""
    order, todo = [], [0]
    while todo:
        h = todo.pop()
        order.append(h)
        todo.extend(kids[h])
    return order


def projective_order(heads: list[int]) -> list[int]:
    """Position of every node in the in-order traversal of the tree (Nivre 2009).

    Returns ``rank`` with ``rank[w]`` the position of w; sorting the words by rank makes the tree
    projective. The root (0) is first.
    """
    kids = children_of(heads)
    rank = [0] * len(heads)
    counter = 0
    # Iterative in-order traversal: left dependents, the head, right dependents.
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            rank[node] = counter
            counter += 1
            continue
        left = [k for k in kids[node] if k < node]
        right = [k for k in kids[node] if k > node]
        for k in reversed(right):
            stack.append((k, False))
        stack.append((node, True))
        for k in reversed(left):
            stack.append((k, False))
    return rank


def previous_word_baseline(n: int) -> list[int]:
    """Heads of the attach-to-previous-word baseline (word 1 attaches to the root)."""
    return [-1] + list(range(n))


def tree_problem(heads: list[int]) -> str | None:
    """Why ``heads`` (index 0 = root) is not a single-rooted tree, or None if it is one."""
    n = len(heads) - 1
    roots = [d for d in range(1, n + 1) if heads[d] == 0]
    missing = [d for d in range(1, n + 1) if heads[d] < 0]
    if missing:
        return f"word {missing[0]} has no HEAD"
    if len(roots) != 1:
        return f"{len(roots)} words attached to the root (expected 1)"
    state = [0] * (n + 1)  # 0 unvisited, 1 on the current path, 2 reaches the root
    state[0] = 2
    for start in range(1, n + 1):
        path, d = [], start
        while state[d] == 0:
            state[d] = 1
            path.append(d)
            d = heads[d]
        if state[d] == 1:
            return f"cycle through word {d}"
        for p in path:
            state[p] = 2
    return None


def is_ancestor(heads: list[int], a: int, w: int) -> bool:
    """Whether a is w or an ancestor of w in the partial tree ``heads`` (-1: no head)."""
    while w >= 0:
        if w == a:
            return True
        w = heads[w]
    return False
