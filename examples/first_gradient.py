# y = x**2 + 3x; calculus says dy/dx = 2x + 3, which is 7 at x = 2.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 2 + 3 * x
y.backward()
print(y.item())
print(x.grad.item())
