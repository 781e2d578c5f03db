"""The `formula` command line: the top layer, composing the `register(sub)` of every package below.

No domain package imports this one; it only wires their sub-commands together.
"""
