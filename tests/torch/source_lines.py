"""Two places that call aten::mm, for `gprof-run --with-stack`: attention() through an
nn.Linear layer without bias (aten::linear -> aten::matmul -> aten::mm, called through torch's
nn.Module frames) on 768x768, mlp() with torch.mm on 512x512 (about 30% of the work per call).
Each runs twice per iteration, ITERATIONS times; the last line says how many calls each made
(JSON), for the test to compare with the table. One torch thread: each mm then takes a few ms
or more and the sampler keeps a core (with torch's two threads on a loaded 2-core machine, an
mlp call was sometimes under a millisecond and missed, or took the sample of the attention call
just before it)."""
import json
import torch

ITERATIONS = 20
CALLS = 2

torch.set_num_threads(1)
torch.manual_seed(0)
proj = torch.nn.Linear(768, 768, bias=False)
x = torch.randn(768, 768)
w_small = torch.randn(512, 512)
y = torch.randn(512, 512)


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
