# Two forward passes and two backward calls without zeroing: x.grad holds the sum.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 2 + 3 * x
y.backward()
y = x ** 2 + 3 * x
y.backward()
x.grad
x.grad.zero_()
