"""Why an emulation cannot judge a kernel: the construct it meets is not modelled (a verdict of `unresolved`), or
the IR's own semantics leave the result undefined (`UndefinedBehaviour`, also `unresolved`: never a finding)."""


class NotModelled(Exception):
    """A construct the executor does not model; its message names it."""


class UndefinedBehaviour(NotModelled):
    """The kernel's result depends on undefined behaviour under LLVM's LangRef: poison (or undef, taken as poison)
    reaches a store, a branch, an address or a `noundef` argument, or a division is by zero or overflows.

    A subclass of NotModelled on purpose: every caller that turns NotModelled into `unresolved` ("cannot judge")
    does the same here, so a reduced `.ll` whose outputs hinge on UB is never called a miscompile. `construct` says
    what happened and where the poison came from; `instruction` names the IR line and opcode that met it."""

    def __init__(self, construct: str, instruction: str = ""):
        self.construct, self.instruction = construct, instruction
        super().__init__(f"undefined behaviour: {construct}" + (f" at {instruction}" if instruction else ""))
