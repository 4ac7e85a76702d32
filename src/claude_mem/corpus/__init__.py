"""Knowledge corpora: a saved selection of observations, rendered once and asked questions.

`names` guards corpus names, `build` selects and renders (with `render`), `query` answers
questions with the configured provider. Storage is `store.corpora`.
"""
