"""A program that runs torch's own Kineto profiler with CUDA activity asked for, through the entry
points torch.profiler.profile uses (_prepare_profiler, _enable_profiler, _disable_profiler): on a
machine without a GPU torch.profiler.profile itself drops CUDA from its activities ("CUDA is not
available, disabling CUDA profiling"), so the calls are made directly, with the activity set a
GPU machine's torch.profiler passes. gprof-run's hook must hand CUPTI over before the profile and
take it back after it.
"""
import torch
from torch.autograd import ProfilerActivity, ProfilerConfig, ProfilerState
import torch.autograd.profiler as autograd_profiler

activities = {ProfilerActivity.CPU, ProfilerActivity.CUDA}
config = ProfilerConfig(ProfilerState.KINETO, False, False, False, False, False,
                        torch._C._profiler._ExperimentalConfig())
x = torch.randn(64, 64)
autograd_profiler._prepare_profiler(config, activities)
autograd_profiler._enable_profiler(config, activities)
y = x @ x
result = autograd_profiler._disable_profiler()
print("own CUDA-activity profile done:", result is not None)
