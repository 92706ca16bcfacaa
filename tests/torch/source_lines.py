"""Two places that call aten::mm, for `gprof-run --with-stack`: attention() through an
nn.Linear layer without bias (aten::linear -> aten::matmul -> aten::mm, called through torch's
nn.Module frames) on 768x768, mlp() with torch.mm on 384x384 (about an eighth of the work per
call). Each runs twice per iteration, ITERATIONS times; the last line says how many calls each
made (JSON), for the test to compare with the table."""
import json
import torch

ITERATIONS = 20
CALLS = 2

torch.manual_seed(0)
proj = torch.nn.Linear(768, 768, bias=False)
x = torch.randn(768, 768)
w_small = torch.randn(384, 384)
y = torch.randn(384, 384)


def attention():
    for _ in range(CALLS):
        proj(x)


def mlp():
    for _ in range(CALLS):
        torch.mm(y, w_small)


with torch.no_grad():
    for _ in range(ITERATIONS):
        attention()
        mlp()
print(json.dumps({"attention": ITERATIONS * CALLS, "mlp": ITERATIONS * CALLS}))
