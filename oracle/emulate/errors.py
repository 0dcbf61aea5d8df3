"""Why an emulation cannot judge a kernel: the construct it meets is not modelled (a verdict of `unresolved`)."""


class NotModelled(Exception):
    """A construct the executor does not model; its message names it."""
