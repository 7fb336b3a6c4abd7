"""The frontend's side of the kernel: what launches the zygote and kernels, talks to them over the
protocol and checks every reply (kernel_client.py). Runs in the frontend's process, never imports
torch and never imports gradrepl.kernel: the learner's process is reached only through pipes, by the
module names launch.py starts."""
