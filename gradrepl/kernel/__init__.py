"""The learner's process: the zygote, the worker that runs learner code (and imports torch), its
sandbox, the inspector and the symbolic checks. Started as `python -m gradrepl.kernel.zygote` (or
`.worker`) by gradrepl.client.launch; it imports the protocol and host rooms, never the client or a
frontend."""
