"""Who decided what: the policy, people and keys, signatures, the decision log, drafting and approving,
what is pending, the changelog, rejections and review sign-offs.

`registry/` keeps what a registry is (schema, loader, YAML I/O, lock, validation rules, texts); this
package holds the decisions made about it."""
