"""Evaluators: ``f(G, dataset, *, rng, **params) -> {metric: value}`` on the learned K = G G^T.

All of them work on the rows of G: feature-space distances under K are the
Euclidean distances between rows of G, and kernel k-means on K is k-means on them.
The modules register themselves when imported (:data:`kernlearn_cli.builtins.BUILTINS`).
"""
