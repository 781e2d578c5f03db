"""What a registry trusts and how a reader checks it: the policy (who may decide), the allowed signers, the
signed decision log and its seal, rejections.

Checking is part of what a registry is (`formula validate` verifies every signature and the chain), so this
sits in the registry's core, below `registry/governance/`, which makes the decisions (draft, approve, reject,
release) and imports from here; nothing here imports governance."""
