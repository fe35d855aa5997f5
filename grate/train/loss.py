"""Self-adversarial binary cross-entropy (ULTRA / NBFNet pretraining loss).

``logits`` ``(B, 1 + K)``: column 0 the positive, columns 1.. the negatives. Per row
``(bce(pos, 1) + sum_k w_k bce(neg_k, 0)) / 2`` with ``w = softmax(neg / T)`` computed without
gradient (``T = 0``: uniform ``1 / K``); the loss is the mean over rows.
"""
from __future__ import annotations

import torch
from torch.nn import functional as F


def self_adversarial_bce(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    pos, neg = logits[:, 0], logits[:, 1:]
    l_pos = F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos), reduction="none")
    l_neg = F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg), reduction="none")
    with torch.no_grad():
        if temperature > 0:
            w = torch.softmax(neg / temperature, dim=-1)
        else:
            w = torch.full_like(neg, 1.0 / neg.shape[1])
    return ((l_pos + (w * l_neg).sum(-1)) / 2).mean()
