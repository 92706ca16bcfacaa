#!/usr/bin/env python3
"""A CUDA parent that forks DataLoader-style worker children which exit (step 9c): CUDA work
before and after a DataLoader with fork workers that only touch CPU tensors. Prints
GPROF_EXAMPLE_DONE torch_fork. Exits 3 when torch or a GPU is missing."""

import sys


def main():
    try:
        import torch
        from torch.utils.data import DataLoader, TensorDataset
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch"
        print(f"torch_fork: torch not importable: {e}", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_fork: torch.cuda.is_available() is False", file=sys.stderr)
        return 3
    x = torch.randn(256, 256, device="cuda")
    y = x @ x
    torch.cuda.synchronize()
    data = TensorDataset(torch.randn(64, 8))
    loader = DataLoader(data, batch_size=8, num_workers=2,
                        multiprocessing_context="fork")
    total = sum(float(batch[0].sum()) for batch in loader)
    y = y @ x
    torch.cuda.synchronize()
    print(f"torch_fork: batches done, sum {total:.3g}, result {float(y.sum()):.3g}")
    print("GPROF_EXAMPLE_DONE torch_fork")
    return 0


if __name__ == "__main__":
    sys.exit(main())
