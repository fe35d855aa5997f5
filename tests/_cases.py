"""Random inputs shared by the model and message-passing tests."""
import numpy as np
import torch


def propagate_case(N=12, B=3, d=8, E=40, R2=6, T=9, seed=0, dtype=torch.float64, tau_extra=3):
    """Keyword arguments of ``grate.ops.propagate`` on a random graph (query times up to T + tau_extra)."""
    g = torch.Generator().manual_seed(seed)
    return dict(
        x=torch.randn(N, B, d, generator=g, dtype=dtype),
        boundary=torch.randn(N, B, d, generator=g, dtype=dtype),
        rel=torch.randn(B, R2, d, generator=g, dtype=dtype),
        edge_index=torch.randint(0, N, (2, E), generator=g),
        edge_type=torch.randint(0, R2, (E,), generator=g),
        edge_time=torch.randint(0, T, (E,), generator=g),
        query_time=torch.randint(0, T + tau_extra, (B,), generator=g),
        query_state=torch.randn(B, d, generator=g, dtype=dtype),
    )


def random_facts(seed, n, num_entities, num_relations, t_max):
    """``(n, 4)`` int64 random facts (s, r, o, t)."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, num_entities, n), rng.integers(0, num_relations, n),
                     rng.integers(0, num_entities, n), rng.integers(0, t_max, n)], 1).astype(np.int64)
