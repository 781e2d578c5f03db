"""Making decisions: releasing, drafting, approving, rejecting, reviewing, people and keys, what is pending,
the changelog. What a decision must satisfy and how it is checked (the policy, the signers, the decision log)
is `registry.trust`, in the core below this package.

`registry/` keeps what a registry is (schema, loader, YAML I/O, lock, validation rules, texts); this
package holds the decisions made about it."""
