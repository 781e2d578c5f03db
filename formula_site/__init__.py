"""The published audit report: a static mkdocs-material site and FHIR Library resources.

This package is the site layer (registry -> solver -> audit -> formula_site -> cli). It presents
what the layers below produced and never computes a clinical result. It is not called `site`
because a top-level package of that name would shadow Python's own `site` module; the mkdocs
sources (hand-written pages, css, js) live as plain files in the repository's `site/` folder.
"""
