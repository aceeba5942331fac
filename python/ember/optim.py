"""ember.optim: SGD, Adam, AdamW (ember::optim, in C++), clip_grad_norm_ and
the warmup-cosine schedule of train_gpt."""
from ._ember.optim import SGD, Adam, AdamW, Optimizer, WarmupCosineLR, clip_grad_norm_  # noqa: F401
