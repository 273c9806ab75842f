assert torch.allclose(unit_rows(torch.tensor([[3.0, 4.0]])), torch.tensor([[0.6, 0.8]]))
