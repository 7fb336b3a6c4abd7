"""Why a tensor's .grad is None, in words: one text for the details view, grading and torch's warning.

A cause is found from a tensor's facts (data the kernel sends: requires_grad, is_leaf, retains_grad,
grad_fn) and, where the session has one, its story (session/timeline.GradStory: which step made it,
which wrote its .grad, which emptied it, whether a backward ran since), then worded here in the
learner's names, so the panel's "why is .grad None?", a predict_state verdict and any later face say
the same thing.
"""

from __future__ import annotations

from typing import Protocol

UNTRACKED = "untracked"            # requires_grad is False: autograd never writes its .grad
UNDER_NO_GRAD = "under_no_grad"    # made inside torch.no_grad() (or inference_mode): nothing recorded
NOT_LEAF = "not_leaf"              # computed, and not retain_grad()ed: backward keeps no .grad for it
EMPTIED = "emptied"                # a backward wrote it, then a step (zero_grad, .grad = None) emptied it
NO_GRAD_PATH = "no_grad_path"      # a backward ran since it was made, and did not reach it
NO_BACKWARD_YET = "no_backward_yet"  # a leaf (or retained) that no backward has reached

SOURCE_SHOWN = 40  # characters of a step's first line quoted in a why-line


class Story(Protocol):
    """What the session's timeline knows of one tensor's .grad (each a (step, source) or None)."""
    created: tuple[int, str] | None
    filled: tuple[int, str] | None
    emptied: tuple[int, str] | None
    backward: tuple[int, str] | None


def grad_none_cause(facts: dict, story: Story | None = None) -> str:
    """The cause of a None .grad from a tensor's facts (a row, or a described tensor) and its story."""
    if not facts.get("requires_grad"):
        made = story.created[1] if story and story.created else ""
        return UNDER_NO_GRAD if "no_grad(" in made or "inference_mode(" in made else UNTRACKED
    if not facts.get("is_leaf") and not facts.get("retains_grad"):
        return NOT_LEAF
    if story and story.emptied:
        return EMPTIED
    if story and story.backward:
        return NO_GRAD_PATH
    return NO_BACKWARD_YET


def step_text(step: tuple[int, str]) -> str:
    """`In [6] (opt.zero_grad())`: a step by its number and its first line, shortened."""
    number, source = step
    line = source.strip().splitlines()[0] if source.strip() else ""
    line = line if len(line) <= SOURCE_SHOWN else line[:SOURCE_SHOWN - 1] + "…"
    return f"In [{number}] ({line})" if line else f"In [{number}]"


def _emptied_how(name: str, source: str) -> str:
    if "zero_grad(" in source:
        return "zero_grad() sets each parameter's .grad to None (set_to_none=True, its default)"
    if ".grad = None" in source or ".grad=None" in source:
        return f"it set {name}.grad = None"
    return f"it set {name}.grad to None"


def grad_none_words(cause: str, name: str | None, made_by: str | None = None, story: Story | None = None,
                    leaf: str | None = None, result: str | None = None) -> str:
    """The cause in words, as one clause without a final period (callers end or join it); name None: a
    tensor nobody named (torch's warning). `leaf`: a leaf of its graph, by name; `result`: a result
    computed from it that backward() could start from."""
    if cause == UNDER_NO_GRAD and story and story.created:
        return (f"{name} was computed inside torch.no_grad() at {step_text(story.created)}, so autograd recorded "
                f"no graph for it and {name}.requires_grad is False: backward() never writes {name}.grad; "
                "compute it outside the no_grad block to track it")
    if cause in (UNTRACKED, UNDER_NO_GRAD):
        return (f"{name}.requires_grad is False, so autograd does not track it and backward() never writes its "
                f".grad; create it with requires_grad=True or call {name}.requires_grad_()")
    if cause == NOT_LEAF and name is None:  # torch's warning names no tensor
        return ("This tensor is not a leaf, so .grad stays None unless its .retain_grad() was called before "
                "backward: it was computed (it has a grad_fn) from other tensors, and autograd keeps .grad only "
                "for leaves; or read the .grad of the leaves it was computed from")
    if cause == NOT_LEAF:
        read = f"; or read {leaf}.grad, a leaf it was computed from" if leaf else ""
        return (f"{name} is not a leaf, so .grad stays None unless {name}.retain_grad() was called before backward: "
                f"it was computed (by {made_by or 'an operation'}) from other tensors, and autograd keeps .grad "
                f"only for leaves{read}")
    if cause == EMPTIED and story and story.emptied:
        filled = f"; the backward at {step_text(story.filled)} had filled it" if story.filled else ""
        return (f"{name}.grad was emptied at {step_text(story.emptied)}: {_emptied_how(name, story.emptied[1])}"
                f"{filled}; the next backward() fills it again")
    if cause == NO_GRAD_PATH and story and story.backward:
        return (f"backward() ran at {step_text(story.backward)} but never reached {name}: the tensor it started "
                f"from was not computed from {name}, so no path of its graph leads to {name}; compute the loss "
                f"from {name}, then call backward()")
    start = f"e.g. {result}.backward()" if result else f"call .backward() on a result computed from {name}"
    if story is not None:
        return (f"no backward() has run since {name} was made: .grad stays None until a backward pass reaches it; "
                f"{start}")
    return (f"backward() has not yet run through {name}: .grad stays None until a backward pass reaches it; "
            f"{start}")


def why_grad_is_none(facts: dict, name: str | None = None, story: Story | None = None, leaf: str | None = None,
                     result: str | None = None) -> str | None:
    """Why `facts`' .grad is None as a sentence, or None when it has a .grad."""
    if facts.get("grad") is not None:
        return None
    name = name or str(facts.get("name", "this tensor"))
    cause = grad_none_cause(facts, story)
    return grad_none_words(cause, name, facts.get("grad_fn"), story, leaf, result) + "."
